"""The `viewcopy` command as an instructor runs it: a real subprocess, checked against torch."""

from __future__ import annotations

import socket


def test_hub_on_a_port_in_use_is_one_line_before_anything_is_made(viewcopy, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = viewcopy("hub", "--port", str(port), "--state", str(tmp_path / "state"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == (
        f"viewcopy hub: error: port {port} is in use on 127.0.0.1: pass --port with a free one"
    )
    assert not (tmp_path / "state").exists()
    done = viewcopy("hub", "--students", " , ", "--state", str(tmp_path / "state"))
    assert done.returncode == 2 and "--students names no student" in done.stderr
