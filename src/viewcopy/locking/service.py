"""The course lock service: records every lock before the reveal, and the reveal, in server time.

Students send the fingerprint of PREDICTIONS; the service records it and answers with a receipt
signed with the key in its data folder, and refuses any lock after the student's reveal. Students
identify themselves with a token from `issue_token`, or, when the service runs as a JupyterHub
service, with their JupyterHub API token (`hub_identity`: the hub says who, and whether a student).

Each request decides and records without awaiting in between, so one service process never
interleaves two decisions; run one process per data folder.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from viewcopy.locking.hub_identity import Hub, HubIdentity
from viewcopy.locking.receipts import sign, student_token, token_student
from viewcopy.locking.refusal import Refusal
from viewcopy.locking.store import (
    StudentLocks,
    init_data,
    load_key,
    record,
    service_id,
    student_locks,
)

SERVICE = "viewcopy-lock"
FINGERPRINT = re.compile(r"[0-9a-f]{64}")
MAX_BODY = 16_384


def now() -> str:
    """The service's time, ISO 8601 UTC with microseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


async def identify(request: Request, key: bytes, hub: HubIdentity | None) -> str:
    """The student the request's Authorization header names, or 401 (403: not in the course)."""
    authorization = request.headers.get("authorization", "")
    scheme, _, credential = authorization.partition(" ")
    if scheme.lower() == "bearer" and credential.strip():
        student = token_student(key, credential.strip())
        if student is None:
            raise Refusal(401, "this lock token is not valid: ask your instructor for your token")
        return student
    if scheme.lower() == "token" and credential.strip():
        if hub is not None:
            return await run_in_threadpool(hub.student, authorization)
        problem = "this lock service does not run under JupyterHub"
    else:
        problem = "no lock token was sent"
    raise Refusal(401, f"{problem}: send the header 'Authorization: Bearer <your lock token>'")


async def read_body(request: Request) -> dict:
    """The JSON object the request sent, or 400 naming what is wrong."""
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            raise Refusal(413, f"the request body is over {MAX_BODY} bytes: send only the fields")
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise Refusal(
            400, 'the request body is not a JSON object: send {"assignment", "fingerprint"}'
        )
    return body


def field(body: dict, name: str, valid, what: str) -> str:
    """The body's field `name` if `valid`, else 400 saying what it must be."""
    value = body.get(name)
    if not isinstance(value, str) or not valid(value):
        raise Refusal(400, f'the request body\'s "{name}" must be {what}')
    return value


async def student_request(
    request: Request, key: bytes, hub: HubIdentity | None
) -> tuple[str, str, str]:
    """(student, assignment, fingerprint) of an authorized lock or reveal request."""
    student = await identify(request, key, hub)
    body = await read_body(request)
    assignment = field(body, "assignment", lambda a: 0 < len(a) <= 200, "the assignment's name")
    fingerprint = field(
        body, "fingerprint", FINGERPRINT.fullmatch, "the 64 lowercase hex sha256 of PREDICTIONS"
    )
    claimed = body.get("student", student)
    if claimed != student:
        raise Refusal(403, f"this token belongs to {student}, not {claimed}")
    return student, assignment, fingerprint


def create_app(data_dir: Path) -> Starlette:
    """The service on an initialized data folder (`init_data`)."""
    key, identity = load_key(data_dir), service_id(data_dir)
    under_hub = Hub.from_environment()
    hub = HubIdentity(under_hub) if under_hub is not None else None

    def receipt(student: str, assignment: str, event: str, fingerprint: str, at: str) -> dict:
        locks = student_locks(data_dir, student, assignment)
        payload = {
            "v": 1,
            "service": identity,
            "student": student,
            "assignment": assignment,
            "event": event,
            "fingerprint": fingerprint,
            "at": at,
            "first_lock_at": locks.locks[0][1],
            "locks": len(locks.locks),
            "revealed_at": locks.revealed_at,
        }
        return {"receipt": sign(key, payload)}

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"service": SERVICE, "id": identity})

    async def lock(request: Request) -> JSONResponse:
        student, assignment, fingerprint = await student_request(request, key, hub)
        at, locks = now(), student_locks(data_dir, student, assignment)
        if locks is not None and locks.revealed_at is not None:
            record(data_dir, student, assignment, "refused", fingerprint, at)
            raise Refusal(409, lock_after_reveal(locks))
        record(data_dir, student, assignment, "lock", fingerprint, at)
        return JSONResponse(receipt(student, assignment, "lock", fingerprint, at))

    async def reveal(request: Request) -> JSONResponse:
        student, assignment, fingerprint = await student_request(request, key, hub)
        at, locks = now(), student_locks(data_dir, student, assignment)
        check_reveal(locks, assignment, fingerprint)
        record(data_dir, student, assignment, "reveal", fingerprint, at)
        return JSONResponse(receipt(student, assignment, "reveal", fingerprint, at))

    routes = [
        Route("/v1/health", health, methods=["GET"]),
        Route("/v1/lock", lock, methods=["POST"]),
        Route("/v1/reveal", reveal, methods=["POST"]),
    ]
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "").rstrip("/")
    return Starlette(
        routes=[*routes, Mount(prefix, routes=routes)] if prefix else routes,
        exception_handlers={Refusal: refused, HTTPException: not_served, Exception: failed},
    )


async def refused(request: Request, error: Refusal) -> JSONResponse:
    return JSONResponse({"error": error.error}, status_code=error.status)


async def not_served(request: Request, error: HTTPException) -> JSONResponse:
    return JSONResponse(
        {
            "error": f"{request.method} {request.url.path}: {error.detail}; the lock service "
            "answers GET /v1/health, POST /v1/lock and POST /v1/reveal"
        },
        status_code=error.status_code,
    )


async def failed(request: Request, error: Exception) -> JSONResponse:
    return JSONResponse(
        {"error": f"the lock service failed ({type(error).__name__}): see the service's log"},
        status_code=500,
    )


def lock_after_reveal(locks: StudentLocks) -> str:
    """Why a lock after the reveal is refused."""
    standing = locks.locked_before_reveal
    stands = f"your lock of {standing[1]} stands" if standing else "no lock of yours stands"
    return (
        f"{locks.assignment} was already revealed at {locks.revealed_at}: a lock after the reveal "
        f"would let answers seen be counted as predictions; {stands}"
    )


def check_reveal(locks: StudentLocks | None, assignment: str, fingerprint: str) -> None:
    """Refuse (409) a reveal with nothing locked, or with predictions other than the lock's."""
    if locks is None or not locks.locks:
        raise Refusal(409, f"nothing is locked for {assignment}: run the lock cell first")
    locked, locked_at = locks.locks[-1]
    if fingerprint == locked:
        return
    if locks.revealed_at is not None:
        raise Refusal(
            409,
            f"PREDICTIONS differ from your lock of {locked_at}, and {assignment} was already "
            f"revealed at {locks.revealed_at}: only the locked predictions count",
        )
    raise Refusal(
        409, f"PREDICTIONS differ from your lock of {locked_at}: lock again before the reveal"
    )


def issue_token(data_dir: Path, student: str) -> str:
    """The lock token to give `student` (initializes the data folder if needed)."""
    if not student.strip():
        raise ValueError("a student id is needed to issue a token: pass the nbgrader student id")
    init_data(data_dir)
    return student_token(load_key(data_dir), student)


def serve(data_dir: Path, host: str = "127.0.0.1", port: int = 8470) -> None:
    """Initialize the data folder if needed, then serve until interrupted."""
    init_data(data_dir)
    uvicorn.run(create_app(data_dir), host=host, port=port)
