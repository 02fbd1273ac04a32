"""The course's settings, read in one place (viewcopy.course.settings): every one a traitlets
setting with help text, the plug-in's the same trait, defaults without a config, and a setting
the package does not know, or a value not of its type, one error that names it (before anything
is graded)."""

from __future__ import annotations

from pathlib import Path

import pytest
from traitlets.config import Config

from viewcopy.course.assignment import (
    COURSE_ID,
    DEFAULT_COURSE,
    CourseSettingError,
    course_config,
    course_id,
    enrol,
    gradebook_url,
)
from viewcopy.course.folder import Course
from viewcopy.course.settings import (
    SETTINGS,
    LockService,
    PredictionScoring,
    course_settings,
)
from viewcopy.exercise.scoring import BALANCED, CARD
from viewcopy.grading.grade import GradeError, grade
from viewcopy.grading.pool import GradingRun
from viewcopy.locking.judge import LockPolicy

ROOT = Path(__file__).resolve().parents[2]


def config(**sections: dict) -> Config:
    made = Config()
    for section, values in sections.items():
        for key, value in values.items():
            setattr(getattr(made, section), key, value)
    return made


def test_every_setting_of_the_package_has_help_text():
    for section in SETTINGS:
        traits = section.class_traits(config=True)
        assert traits, section.__name__
        assert all(len(t.help) > 40 for t in traits.values()), section.__name__


def test_the_plug_in_hands_on_the_setting_declared_with_the_others():
    from viewcopy.plugins import PredictionScoring as Plugin

    assert issubclass(Plugin, PredictionScoring)
    assert Plugin.class_traits()["policy"] is PredictionScoring.class_traits()["policy"]
    assert Plugin(config=config(PredictionScoring={"policy": BALANCED})).policy == BALANCED


def test_without_a_config_the_settings_are_the_defaults(tmp_path):
    settings = Course.at(tmp_path).settings
    assert settings.lock == LockPolicy() and settings.scoring == CARD
    assert settings.course_id == DEFAULT_COURSE
    assert gradebook_url(tmp_path) == f"sqlite:///{tmp_path.resolve() / 'gradebook.db'}"


def test_the_settings_are_read_as_set():
    settings = course_settings(
        config(
            LockService={"data_dir": "~/locks", "unverified_locks_earn_credit": False},
            PredictionScoring={"policy": BALANCED},
            CourseDirectory={"course_id": "c1"},
        )
    )
    assert settings.lock == LockPolicy(Path("~/locks").expanduser(), False)
    assert (settings.scoring, settings.course_id) == (BALANCED, "c1")


@pytest.mark.filterwarnings("ignore:viewcopy.feedback is deprecated:DeprecationWarning")
def test_this_course_and_the_frozen_releases_configs_read(monkeypatch):
    monkeypatch.setenv("VIEWCOPY_SCORING", BALANCED)
    monkeypatch.setenv("VIEWCOPY_LOCK_DATA", "/srv/locks")
    settings = Course.at(ROOT).settings
    assert settings.scoring == BALANCED and settings.lock.service_data == Path("/srv/locks")
    assert settings.course_id == "view_or_copy"
    for release in sorted((ROOT / "tests" / "data").glob("release_*")):
        assert Course.at(release).settings.course_id == "view_or_copy", release


@pytest.mark.parametrize(
    ("sections", "says"),
    [
        (
            {"LockService": {"data_dri": "/srv/locks"}},
            "c.LockService.data_dri in nbgrader_config.py is not a setting: LockService's "
            "settings are data_dir, unverified_locks_earn_credit",
        ),
        (
            {"LockService": {"unverified_locks_earn_credit": "no"}},
            "c.LockService.unverified_locks_earn_credit in nbgrader_config.py cannot be 'no': "
            "expected a boolean",
        ),
        (
            {"PredictionScoring": {"policy": "strict"}},
            "c.PredictionScoring.policy in nbgrader_config.py cannot be 'strict': expected any "
            "of ['card', 'balanced']",
        ),
        (
            {"PredictionScoring": {"polcy": "card"}},
            "c.PredictionScoring.polcy in nbgrader_config.py is not a setting",
        ),
    ],
)
def test_a_setting_that_is_not_one_or_not_of_its_type_is_one_error_naming_it(sections, says):
    with pytest.raises(CourseSettingError) as raised:
        course_settings(config(**sections))
    assert str(raised.value).startswith(says)


def test_grading_stops_on_such_a_setting_before_anything_runs(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()\nc.LockService.data_dri = '/srv/locks'\n"
    )
    assert course_config(tmp_path).LockService.data_dri == "/srv/locks"
    run = GradingRun(Course.at(tmp_path), "view_or_copy")
    with pytest.raises(GradeError, match=r"c\.LockService\.data_dri in nbgrader_config\.py"):
        grade(run, progress=False)
    assert not (tmp_path / "grade_logs").exists()


def test_the_class_report_stops_on_such_a_setting_before_it_measures(tmp_path):
    from viewcopy.report.build import build_report

    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()\nc.PredictionScoring.policy = 'strict'\n"
    )
    with pytest.raises(CourseSettingError, match=r"c\.PredictionScoring\.policy in nbgrader"):
        build_report(tmp_path)


def test_the_lock_service_setting_is_a_configurable_of_its_own():
    service = LockService(config=config(LockService={"data_dir": "/srv/locks"}))
    assert service.policy() == LockPolicy(Path("/srv/locks"), True)


def test_one_setting_names_the_course_every_gradebook_is_opened_under(tmp_path):
    """The course id is c.CourseDirectory.course_id (nbgrader's default without it): the shipped
    config's is COURSE_ID; a course of another id is enrolled under its own, never under a name
    of the package's; and no module opens a gradebook with an id of its own making."""
    import ast
    import sqlite3

    assert course_id(ROOT) == COURSE_ID
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text(
        'c = get_config()\nc.CourseDirectory.course_id = "cs101"\n'
    )
    enrol(course, {"s1": "One"})
    with sqlite3.connect(course / "gradebook.db") as db:
        assert [row[0] for row in db.execute("SELECT id FROM course")] == ["cs101"]
    assert Course.at(course).settings.course_id == course_id(course) == "cs101"
    assert course_id(tmp_path) == DEFAULT_COURSE  # no config

    opened = []
    for path in sorted((ROOT / "src" / "viewcopy").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Gradebook":
                given = [*node.args[1:], *(k.value for k in node.keywords if k.arg == "course_id")]
                opened.append((path.name, node.lineno, given))
    assert opened, "the scan finds nbgrader's Gradebook calls"
    for name, line, given in opened:
        assert len(given) == 1, f"{name}:{line} opens a gradebook without the course's id"
        (argument,) = given
        assert not isinstance(argument, ast.Constant), f"{name}:{line}: a literal course id"
        assert ast.unparse(argument) != "COURSE_ID", f"{name}:{line}: the shipped course's id"
