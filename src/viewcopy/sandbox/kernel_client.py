"""The client of a sandboxed kernel: jupyter_client's asynchronous client, ready as soon as its
kernel is.

jupyter_client's `wait_for_ready` asks for the kernel's info until the kernel answers and its
IOPub carries a message, then reads IOPub until it has been silent for 200 ms: every kernel start
waited those 200 ms, a third of a forked kernel's start. This one waits instead for the idle
status of a request the kernel answered, the last message such a request makes: IOPub is as
flushed, and nothing else is waited for."""

from __future__ import annotations

import math
import time
from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient

ASK_S = 1.0
"""How long one kernel_info request waits for its reply before it is asked again (as
jupyter_client does)."""
IOPUB_S = 0.2
"""How long IOPub may be silent before the request is asked again (its subscription was not yet
in place: as jupyter_client does)."""


class ReadyKernelClient(AsyncKernelClient):
    """jupyter_client's asynchronous client whose `wait_for_ready` ends with its kernel's
    answer."""

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        """Return once the kernel has answered a kernel_info request and its IOPub has carried
        that request's idle status; RuntimeError when the kernel ends first, or after
        `timeout` seconds."""
        deadline = time.monotonic() + (math.inf if timeout is None else timeout)
        asked: set[str] = set()
        while True:
            asked.add(self.kernel_info())
            try:
                reply = await self.shell_channel.get_msg(timeout=ASK_S)
            except Empty:
                reply = None
            answered = reply is not None and reply["msg_type"] == "kernel_info_reply"
            if answered and await self._idle_after(asked):
                self._handle_kernel_info_reply(reply)
                return
            if not await self.is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:g} seconds")

    async def _idle_after(self, asked: set[str]) -> bool:
        """Whether IOPub carries the idle status of one of the requests `asked` before it is
        silent IOPUB_S (a reply read late may be an earlier request's)."""
        while True:
            try:
                message = await self.iopub_channel.get_msg(timeout=IOPUB_S)
            except Empty:
                return False
            if (
                message["msg_type"] == "status"
                and message["content"].get("execution_state") == "idle"
                and message["parent_header"].get("msg_id") in asked
            ):
                return True
