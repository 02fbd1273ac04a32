"""`viewcopy lms` and its actions, each declared here with its arguments beside the function it
runs (cli.py gathers `LMS`): the values to give the LMS (`keys`), the deployments it may launch
from (`deployment`), who each hub name is (`people`), the roster from it (`roster`), the scores
to it (`push`), or into its own gradebook import file (`csv`). Every failure is an `LmsError`
that says what to do."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from viewcopy.course.assignment import ASSIGNMENT
from viewcopy.course.commands import add_assignment_arguments
from viewcopy.course.folder import Course
from viewcopy.engine.command import Command, add_actions, by_name
from viewcopy.lms.errors import LmsError
from viewcopy.lms.registration import REGISTRATION_FILE, Registration, UnknownDeployment
from viewcopy.lms.tool import hub_urls
from viewcopy.lms.vocabulary import TOOL_SCOPES


class PushIncomplete(LmsError):
    """Some scores were refused by the LMS: the summary names them."""


def add_keys_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--course", default=".", help="the nbgrader course folder")
    parser.add_argument(
        "--hub",
        metavar="URL",
        help="the hub's public URL: also print its login, redirect and key set URLs",
    )


def run_keys(args: argparse.Namespace) -> str:
    from viewcopy.lms.keys import ToolKey

    folder = Course.at(args.course).lms
    key = ToolKey.ensure(folder)
    lines = [
        f"the course's tool key: {key.path} (kid {key.kid}; made once, mode 0600)",
        "",
        "Give the LMS, when registering the tool (LTI 1.3, LTI Advantage):",
    ]
    if args.hub:
        lines += [f"  {what}: {url}" for what, url in hub_urls(args.hub).items()]
    lines += [
        "  public key (JWK, if the LMS takes a key rather than a key set URL):",
        "    " + json.dumps(key.public_jwk(), sort_keys=True),
        "  services and their scopes: Assignment and Grade Services, Names and Role "
        "Provisioning Services:",
        *(f"    {scope}" for scope in TOOL_SCOPES),
        "",
        _registration_line(folder),
    ]
    return "\n".join(lines)


def _registration_line(folder: Path) -> str:
    path = folder / REGISTRATION_FILE
    if not path.is_file():
        return (
            f"Then write what the LMS gives back in {path}: issuer, client_id, deployment_id "
            "(more with `viewcopy lms deployment add`), key_set_url, authorize_url, token_url "
            "(and username_claim, default sub)."
        )
    try:
        registration = Registration.read(path)
    except ValueError as exc:
        return f"{path} needs fixing: {exc}"
    return (
        f"{path}: issuer {registration.issuer}, client {registration.client_id}, deployment(s) "
        f"{', '.join(registration.deployment_ids)}, hub names from the "
        f"{registration.username_claim!r} claim"
    )


KEYS = Command(
    "keys",
    "the values to give the LMS when registering the tool (the key made once)",
    add_keys_arguments,
    run_keys,
)


def add_deployment_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("change", choices=("list", "add", "remove"))
    parser.add_argument(
        "deployment_id", nargs="?", metavar="ID", help="the deployment id the LMS shows"
    )
    parser.add_argument("--course", default=".", help="the nbgrader course folder")


def run_deployment(args: argparse.Namespace) -> str:
    """List the registration's deployments, or add or remove one (the file rewritten whole)."""
    path = Course.at(args.course).lms / REGISTRATION_FILE
    try:
        registration = Registration.read(path)
    except ValueError as exc:
        raise LmsError(str(exc)) from None
    if args.change != "list":
        if not (args.deployment_id or "").strip():
            raise LmsError(f"`viewcopy lms deployment {args.change}` needs the deployment ID")
        registration = _changed(registration, args.change, args.deployment_id.strip(), path)
        registration.write(path)
    said = f"{path}: launches from deployment(s) {', '.join(registration.deployment_ids)}"
    return said + ("" if args.change == "list" else " (a running hub: from its next launch)")


def _changed(
    registration: Registration, change: str, deployment_id: str, path: Path
) -> Registration:
    """The registration with `deployment_id` added or removed (never its last one)."""
    if change == "add":
        return registration.with_deployments(deployment_id)
    if deployment_id not in registration.deployment_ids:
        raise LmsError(f"{path} has no deployment {deployment_id!r}: nothing to remove")
    if registration.deployment_ids == (deployment_id,):
        raise LmsError(
            f"{deployment_id!r} is the only deployment in {path}: add the one that replaces it "
            "first"
        )
    return replace(
        registration,
        deployment_ids=tuple(d for d in registration.deployment_ids if d != deployment_id),
    )


DEPLOYMENT = Command(
    "deployment",
    "the LMS deployments whose launches the course takes (Canvas makes one per course-level "
    "install): list, add or remove one",
    add_deployment_arguments,
    run_deployment,
)


def add_roster_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--course", default=".", help="the nbgrader course folder")


def run_roster(args: argparse.Namespace) -> str:
    from viewcopy.lms.roster import roster

    return roster(Course.at(args.course)).summary()


ROSTER = Command(
    "roster",
    "enrol the LMS's learners (NRPS) in the gradebook; dropped ones kept",
    add_roster_arguments,
    run_roster,
)


def add_people_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("change", nargs="?", default="list", choices=("list", "bind", "release"))
    parser.add_argument(
        "who",
        nargs="*",
        metavar="ARG",
        help="bind: the LMS user id (sub) and the hub name; release: the hub name",
    )
    parser.add_argument("--course", default=".", help="the nbgrader course folder")


def run_people(args: argparse.Namespace) -> str:
    """List who holds each hub name, or repair one binding (bind SUB NAME, release NAME)."""
    from viewcopy.lms.link import CourseLink
    from viewcopy.lms.people import PEOPLE_FILE, NameTaken, People, change

    folder = Course.at(args.course).lms
    wanted = {"list": 0, "bind": 2, "release": 1}[args.change]
    if len(args.who) != wanted:
        usage = {"list": "", "bind": " SUB NAME", "release": " NAME"}[args.change]
        raise LmsError(f"usage: viewcopy lms people {args.change}{usage} [--course COURSE]")
    try:
        if args.change == "bind":
            link = CourseLink.require(folder, "viewcopy lms people bind")
            people = change(folder, lambda p: p.rebound(link.issuer, *args.who))
        elif args.change == "release":
            people = change(folder, lambda p: p.released(args.who[0]))
        else:
            people = People.read(folder)
    except (NameTaken, ValueError) as exc:
        raise LmsError(str(exc)) from None
    lines = [b.describe() for b in sorted(people.bindings, key=lambda b: b.name)]
    if args.change != "list":
        lines.append(f"{args.change}: done ({folder / PEOPLE_FILE}; from the next launch)")
    return "\n".join(lines) or "no one has launched the course or been read from its roster yet"


PEOPLE = Command(
    "people",
    "who each hub name is in the LMS (bound at a person's first launch or roster read): list, "
    "bind SUB NAME or release NAME to repair one",
    add_people_arguments,
    run_people,
)


def add_push_arguments(parser: argparse.ArgumentParser) -> None:
    add_assignment_arguments(parser, graded=True)


def run_push(args: argparse.Namespace) -> str:
    from viewcopy.lms.push import push

    done = push(Course.at(args.course), args.assignment)
    if not done.complete:
        raise PushIncomplete(done.summary())
    return done.summary()


PUSH = Command(
    "push",
    "every student's score to the assignment's line item in the LMS (AGS)",
    add_push_arguments,
    run_push,
)


def add_csv_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("assignment", nargs="?", default=ASSIGNMENT)
    parser.add_argument("--format", required=True, choices=("canvas", "moodle"), help="the LMS")
    parser.add_argument(
        "--export", required=True, metavar="LMS_EXPORT.csv", help="the LMS's gradebook export"
    )
    parser.add_argument("--out", help="where to write (default: beside the export)")
    parser.add_argument("--course", default=".", help="the graded nbgrader course folder")
    parser.add_argument(
        "--title", help="the assignment's column in the LMS, if not the lab's title"
    )


def run_csv(args: argparse.Namespace) -> str:
    from viewcopy.lms.errors import ImportFileError
    from viewcopy.lms.import_file import default_out, merge_scores

    try:
        merged = merge_scores(
            Course.at(args.course),
            args.assignment,
            Path(args.export),
            args.format,
            title=args.title,
        )
        written = merged.write(
            Path(args.out) if args.out else default_out(args.export, args.assignment)
        )
    except ImportFileError as exc:
        raise LmsError(str(exc)) from None
    return f"{merged.summary()}\nwritten: {written}"


CSV = Command(
    "csv",
    "the scores merged into the gradebook export the LMS gave, in the layout it imports (no LTI "
    "rights needed)",
    add_csv_arguments,
    run_csv,
)
ACTIONS = (KEYS, DEPLOYMENT, PEOPLE, ROSTER, PUSH, CSV)
"""`viewcopy lms`'s actions, in the order its help lists them."""


def add_lms_arguments(parser: argparse.ArgumentParser) -> None:
    add_actions(parser, ACTIONS)


def run_lms(args: argparse.Namespace) -> str:
    """Run one `viewcopy lms` action; LmsError, with what to do, when it cannot."""
    from viewcopy.lms.keys import KeyFileError
    from viewcopy.lms.link import LinkMismatch, NotLinked
    from viewcopy.lms.scores import NoAssignment

    try:
        return by_name(ACTIONS)[args.action].run(args)
    except (NotLinked, NoAssignment, KeyFileError, LinkMismatch, UnknownDeployment) as exc:
        raise LmsError(str(exc)) from None


LMS = Command(
    "lms",
    "the course's LMS over LTI 1.3: the values to register, the roster, grades back",
    add_lms_arguments,
    run_lms,
)
