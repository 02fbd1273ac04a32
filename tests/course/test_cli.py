"""The `viewcopy` command as an instructor runs it: a real subprocess, checked against torch."""

from __future__ import annotations

import socket

import pytest


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("grade", "--course", "/nonexistent/course"), "has no nbgrader_config.py"),
    ],
)
def test_usage_errors_are_one_line_with_exit_status_2(viewcopy, args, says):
    done = viewcopy(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr
    assert "Traceback" not in done.stderr


def test_grade_names_what_is_missing_in_a_course_without_hand_ins(viewcopy, tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("")
    done = viewcopy("grade", "--course", str(tmp_path))
    assert done.returncode == 2 and "no submitted/ folder" in done.stderr
    (tmp_path / "submitted" / "ada").mkdir(parents=True)
    done = viewcopy("grade", "--course", str(tmp_path), "--student", "b*")
    assert done.returncode == 2 and "no submissions of view_or_copy match 'b*'" in done.stderr


def test_grade_refuses_zero_workers(viewcopy):
    with pytest.raises(SystemExit) as exit_:
        viewcopy("grade", "--jobs", "0")
    assert exit_.value.code == 2


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
