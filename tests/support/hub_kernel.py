"""Code run in a kernel of a hub user's own server, as that user's browser would run it: a token
of theirs, their server's kernels API and the kernel's websocket (Jupyter's messaging protocol)."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor

from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

TIMEOUT_S = 300


def api(url: str, token: str, method: str = "GET", body: dict | None = None) -> dict:
    """A JSON request to the hub or a server with `token`; the JSON answer."""
    request = urllib.request.Request(
        url,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
        method=method,
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        text = answer.read()
    return json.loads(text) if text else {}


def server_ready(hub_url: str, user: str, token: str) -> None:
    """The user's server started (with their own token, as their Lab's home page does)."""
    ready = api(f"{hub_url}/hub/api/users/{user}", token)["servers"].get("", {}).get("ready")
    if not ready:
        try:
            api(f"{hub_url}/hub/api/users/{user}/server", token, "POST", {})
        except urllib.error.HTTPError as already:  # 400: it is starting or started
            assert already.code == 400, already
    deadline = time.monotonic() + TIMEOUT_S
    while not api(f"{hub_url}/hub/api/users/{user}", token)["servers"].get("", {}).get("ready"):
        assert time.monotonic() < deadline, f"{user}'s server did not start"
        time.sleep(2)


def run_in_kernel(hub_url: str, user: str, token: str, code: str) -> str:
    """What `code` prints (stdout) in a new kernel of `user`'s own server; the kernel is shut
    down after. An error in the code fails the caller with its traceback."""
    server_ready(hub_url, user, token)
    base = f"{hub_url}/user/{user}/api/kernels"
    kernel = api(base, token, "POST", {"name": "python3"})["id"]
    try:
        # a loop of its own in a thread of its own: the session's Playwright runs one here
        with ThreadPoolExecutor(1) as thread:
            run = thread.submit(
                asyncio.run, _execute(base.replace("http", "ws", 1), kernel, token, code)
            )
            return run.result()
    finally:
        api(f"{base}/{kernel}", token, "DELETE")


async def _execute(base: str, kernel: str, token: str, code: str) -> str:
    request = HTTPRequest(f"{base}/{kernel}/channels", headers={"Authorization": f"token {token}"})
    socket = await websocket_connect(request)
    msg_id = uuid.uuid4().hex
    socket.write_message(
        json.dumps(
            {
                "header": {"msg_id": msg_id, "msg_type": "execute_request", "session": msg_id,
                           "username": "", "version": "5.3"},
                "parent_header": {},
                "metadata": {},
                "content": {"code": code, "silent": False, "store_history": False,
                            "user_expressions": {}, "allow_stdin": False},
                "channel": "shell",
            }
        )
    )  # fmt: skip
    printed, error = [], None
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        raw = await asyncio.wait_for(socket.read_message(), TIMEOUT_S)
        assert raw is not None, "the kernel's websocket closed"
        message = json.loads(raw)
        if message.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind, content = message["msg_type"], message["content"]
        if kind == "stream" and content["name"] == "stdout":
            printed.append(content["text"])
        elif kind == "error":
            error = "\n".join(content["traceback"])
        elif kind == "status" and content["execution_state"] == "idle":
            break
    socket.close()
    assert error is None, error
    return "".join(printed)
