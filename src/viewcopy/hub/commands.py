"""`viewcopy hub`, declared with its arguments (cli.py gathers it): the course on a JupyterHub on
this machine until Ctrl-C, its login the demo's shared password or LTI 1.3 from the course's LMS."""

from __future__ import annotations

import argparse
from pathlib import Path

from viewcopy.engine.command import Command, UsageError, positive


def add_hub_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", default=".", help="the course repository (deploy/jupyterhub/)")
    parser.add_argument("--state", default="hub_state", help="its folder (kept between starts)")
    parser.add_argument("--port", type=positive, default=8000, help="the hub's port on 127.0.0.1")
    parser.add_argument(
        "--students",
        help="comma-separated hub user names of the demo's students (default alice,bob)",
    )
    parser.add_argument(
        "--lti",
        metavar="REGISTRATION.json",
        help="log in with LTI 1.3 from the course's LMS instead of the demo's shared password: the "
        "platform's issuer, client_id, deployment_id, key_set_url, authorize_url, token_url "
        "(docs/lms.md); kept in the course's lms/ folder",
    )


def run_hub(args: argparse.Namespace) -> str:
    from viewcopy.hub.accounts import AccountError
    from viewcopy.hub.launch import HubDidNotStart, free_ports, port_in_use, serve
    from viewcopy.hub.state import prepare

    if args.lti and args.students is not None:
        raise UsageError(
            "--students is for the shared-password demo: with --lti the students are whoever "
            "the LMS launches as a Learner"
        )
    named = "alice,bob" if args.students is None else args.students
    students = [s.strip() for s in named.split(",") if s.strip()]
    if not students:
        raise UsageError("--students names no student: give hub user names, e.g. alice,bob")
    if port_in_use(args.port):
        raise UsageError(f"port {args.port} is in use on 127.0.0.1: pass --port with a free one")
    repo = Path(args.repo)
    registration = Path(args.lti) if args.lti else None
    try:
        state = prepare(repo, Path(args.state), args.port, free_ports(3), students, registration)
    except (ValueError, AccountError) as bad:  # the registration, the key file, an account
        raise UsageError(str(bad)) from None
    try:
        return serve(repo, state, say=lambda text: print(text, flush=True))  # seen while it runs
    except HubDidNotStart as failed:
        raise UsageError(str(failed)) from None


HUB = Command(
    "hub",
    "the course on a JupyterHub on this machine, until Ctrl-C (docs/jupyterhub.md)",
    add_hub_arguments,
    run_hub,
)
