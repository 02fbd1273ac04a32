"""The course repository a hub runs from keeps its course data from students: at each start every
entry of it that is the course's data (the master, the release, the hand-ins, the grading records,
the LMS's files, the gradebook) and its history are closed to other users, and what students'
servers must read (the hub's settings) stays open."""

from __future__ import annotations

import stat

from viewcopy.course.folder import Course
from viewcopy.hub.permissions import close_repository


def test_every_entry_of_course_data_and_the_history_is_closed_to_others(tmp_path):
    repo = Course(tmp_path / "repo")
    private = [*repo.data, repo.root / ".git"]
    settings = repo.root / "deploy" / "jupyterhub"
    for path in [*private, settings]:
        if path.suffix:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("", encoding="utf-8")
            path.chmod(0o644)
        else:
            path.mkdir(parents=True)
            path.chmod(0o755)

    closed = close_repository(repo.root)

    assert sorted(closed) == sorted(private)
    for path in private:
        assert not path.stat().st_mode & 0o007, path
    assert stat.S_IMODE(settings.stat().st_mode) == 0o755
    assert close_repository(repo.root) == [], "a second start has nothing left to close"
