"""`viewcopy hub`: on a port in use, or with no students named, one line and nothing made; then the
course on a real JupyterHub, in Chromium. `viewcopy hub` starts it: the proxy, the lock
service as a hub-managed service, a JupyterLab server per user. Two students log in, fetch the
assignment from nbgrader's exchange, run the lab (the service records their locks under their hub
names) and submit. The instructor, in a terminal of their own hub server, collects, grades with
`viewcopy grade` against the service's records and releases feedback. A student fetches it and
sees the diagrams. Also: a student's hub token cannot lock as another student, a hub user outside
the course cannot lock, formgrader opens in the instructor's Lab (and only there), an nbgitpuller
link opens the release, and Ctrl-C leaves nothing running.

Slow: a hub, four JupyterLab servers, two students' kernels and the grading; a few minutes (the
hub's tests are marked hub, browser and course, and skip where JupyterHub, its proxy or Chromium
is missing; the two usage errors run in the fast subset).
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import re
import signal
import socket
import stat
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import nbformat
import psutil
import pytest
from support.course_notebook import ROOT
from support.hub_kernel import api, run_in_kernel
from support.oracles import expected_scores, lock_of
from support.running_hub import RunningHub, require_hub, start_hub
from support.servers import free_port
from support.student_reach import probe, secrets_of_others
from support.the_class import synthetic_student

from viewcopy.course.assignment import ASSIGNMENT, COURSE_ID, NOTEBOOK, grade_id, read_grades
from viewcopy.course.handin import LOCKED_VERIFIED
from viewcopy.demo.synthetic import fill, next_predictions_source
from viewcopy.exercise.next_predictions import NEXT
from viewcopy.exercise.predictions import TWENTY as PREDICTED
from viewcopy.exercise.production import PRODUCTION
from viewcopy.hub.accounts import isolating, lock_user, own_tree, staff_group, unix_name
from viewcopy.locking.file import read_lock
from viewcopy.locking.store import student_locks
from viewcopy.report.build import build_report

REQUIRED = "VIEWCOPY_REQUIRE_HUB"
try:  # a declared test tool; where it is missing, hub_or_skip says so and skips the hub's tests
    from playwright.sync_api import Page, expect
    from support.browser_lab import output_area, patient, replace_source, run_all, wait_idle
except ModuleNotFoundError:
    pass


def hub_or_skip() -> None:
    """JupyterHub, its proxy, Playwright and Chromium, or skip the test; fail it instead where
    VIEWCOPY_REQUIRE_HUB=1 (CI)."""
    require_hub(REQUIRED)


STUDENTS = {"alice": "rule_learner", "bob": "memoriser"}  # hub name -> synthetic profile
INSTRUCTOR, GUEST = "instructor", "guest"
KERNEL_MS = 600_000
GRADING_S = 900
VIEWPORT = {"width": 1400, "height": 1000}
SHOTS = ROOT / "artifacts" / "hub"


# --- before anything is made: one line, exit status 2 -------------------------------------------


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


# --- the course on a real hub, in Chromium --------------------------------------------------------


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """`viewcopy hub` as an instructor starts it, once it says where and who."""
    hub_or_skip()
    folder = tmp_path_factory.mktemp("hub")
    running = start_hub(
        folder, "--repo", str(ROOT), "--port", str(free_port()), "--students", ",".join(STUDENTS)
    )
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield running
    running.stop()  # when the Ctrl-C test did not run or did not stop it


@pytest.fixture(scope="module")
def browser(chromium):
    """The session's Chromium, `expect` waiting longer on the hub's pages."""
    hub_or_skip()
    with patient(120_000):
        yield chromium


def log_in(browser, hub: RunningHub, user: str) -> Page:
    """A fresh browser context logged in as `user` at the hub's login page, their Lab open."""
    page = browser.new_context(viewport=VIEWPORT).new_page()
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", hub.password)
    page.click("#login_submit")
    page.wait_for_url(re.compile(rf"/user/{user}/lab"), timeout=300_000)
    expect(page.locator("#jp-main-dock-panel")).to_be_visible()
    return page


def assignment_list(page: Page):
    """Nbgrader > Assignment List, once it has loaded the released assignments."""
    page.get_by_role("menuitem", name="Nbgrader", exact=True).click()
    page.get_by_role("menuitem", name="Assignment List", exact=True).click()
    panel = page.locator(".lm-Widget", has=page.locator("#released_assignments_list")).last
    expect(panel.locator("#released_assignments_list_loading")).to_be_hidden()
    return panel


def at(notebook: nbformat.NotebookNode, wanted: str) -> int:
    return [grade_id(c) for c in notebook.cells].index(wanted)


def saved_source(path: Path, wanted: str) -> str:
    """The source of a cell of the notebook as saved on disk."""
    notebook = nbformat.read(path, as_version=4)
    return notebook.cells[at(notebook, wanted)].source


def profile(user: str):
    return synthetic_student(STUDENTS[user])


def work_through_the_lab(browser, hub: RunningHub, user: str) -> None:
    """Log in, fetch, answer as the profile does, run every cell, save and submit."""
    student = profile(user)
    page = log_in(browser, hub, user)
    panel = assignment_list(page)
    panel.locator("#released_assignments_list").get_by_role("button", name="Fetch").click()
    expect(panel.locator("#fetched_assignments_list")).to_contain_text(ASSIGNMENT)
    folder = hub.home(user) / COURSE_ID / ASSIGNMENT
    notebook = nbformat.read(folder / NOTEBOOK, as_version=4)
    fill(notebook, student.cells)  # typing them is the browser test's; here the hub's path
    nbformat.write(notebook, folder / NOTEBOOK)

    page.goto(f"{hub.url}/user/{user}/lab/tree/{COURSE_ID}/{ASSIGNMENT}/{NOTEBOOK}")
    wait_idle(page, KERNEL_MS)
    expect(page.get_by_text("official Jupyter news")).to_have_count(0)
    run_all(page, at(notebook, "lock_next"), KERNEL_MS)  # stops: the next ops are drawn now
    sheet = next_predictions_source(student.next_ops, folder)  # the lock is in the folder now
    replace_source(page, at(notebook, "next_predictions"), sheet)
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run Selected Cell and All Below", exact=True).click()
    last = output_area(page, len(notebook.cells) - 1).locator(".jp-OutputArea-output").first
    expect(last).to_be_attached(timeout=KERNEL_MS)
    wait_idle(page, KERNEL_MS)
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 60
    while saved_source(folder / NOTEBOOK, "next_predictions").strip() != sheet.strip():
        assert time.monotonic() < deadline, f"{user}'s notebook was not saved"
        time.sleep(1)
    page.screenshot(path=SHOTS / f"{user}-lab.png")

    panel = assignment_list(page)
    panel.locator("#fetched_assignments_list").get_by_role("button", name="Submit").click()
    expect(panel.locator("#submitted_assignments_list")).to_contain_text(ASSIGNMENT)
    page.context.close()


@pytest.fixture(scope="module")
def submitted(browser, hub):
    for user in STUDENTS:
        work_through_the_lab(browser, hub, user)
    return hub


def instructor_terminal(browser, hub: RunningHub, command: str, timeout_s: float) -> str:
    """Type `command` into a terminal of the instructor's own hub server (the hub's environment
    for them: the course, the exchange, the lock records); its output once it has ended."""
    page = log_in(browser, hub, INSTRUCTOR)
    home = hub.home(INSTRUCTOR)
    for name in ("terminal.log", "terminal.rc"):  # what an earlier command left
        (home / name).unlink(missing_ok=True)
    page.get_by_role("menuitem", name="File", exact=True).click()
    page.get_by_role("menuitem", name=re.compile(r"^New Launcher")).click()
    page.locator('.jp-LauncherCard[title="Start a new terminal session"]').last.click()
    terminal = page.locator(".jp-Terminal").last
    expect(terminal).to_be_visible()
    terminal.click()
    ready = home / "terminal.ready"
    ready.unlink(missing_ok=True)
    for _ in range(30):  # until the shell reads what is typed (its socket opens after the page)
        page.keyboard.type("touch ~/terminal.ready\n")
        page.wait_for_timeout(2_000)
        if ready.exists():
            break
    assert ready.exists(), "the instructor's terminal never ran a command"
    page.keyboard.type(f"({command}) > ~/terminal.log 2>&1; echo $? > ~/terminal.rc\n")
    deadline = time.monotonic() + timeout_s
    while not (home / "terminal.rc").exists() or not (home / "terminal.rc").read_text().strip():
        assert time.monotonic() < deadline, (home / "terminal.log").read_text()
        time.sleep(2)
    page.context.close()
    said = (home / "terminal.log").read_text()
    assert (home / "terminal.rc").read_text().strip() == "0", said
    return said


@pytest.fixture(scope="module")
def graded(browser, submitted):
    hub = submitted
    cycle = " && ".join(
        [
            f"cd ~/{COURSE_ID}",
            f"nbgrader collect {ASSIGNMENT}",
            f"viewcopy grade {ASSIGNMENT} --quiet",
            f"nbgrader generate_feedback {ASSIGNMENT}",
            f"nbgrader release_feedback {ASSIGNMENT}",
            f"viewcopy report {ASSIGNMENT}",
        ]
    )
    said = instructor_terminal(browser, hub, cycle, GRADING_S)
    return hub, said


@pytest.mark.hub
@pytest.mark.browser
@pytest.mark.course
def test_the_hub_says_where_and_who(hub):
    said = hub.output()
    assert f"JupyterHub for {COURSE_ID}: {hub.url}" in said
    assert "students:   alice, bob" in said and f"instructor: {INSTRUCTOR}" in said
    assert f"not in the course: {GUEST}" in said and hub.password in said


@pytest.mark.hub
@pytest.mark.browser
@pytest.mark.course
def test_each_students_locks_are_the_services_under_their_hub_name(submitted):
    hub = submitted
    data = hub.state.lock_data
    for user in STUDENTS:
        record = read_lock(hub.home(user) / COURSE_ID / ASSIGNMENT)
        for part in (PREDICTED, NEXT, PRODUCTION):
            locks = student_locks(data, user, part.service_name(ASSIGNMENT))
            assert locks is not None and locks.locks and locks.revealed_at, (user, part.key)
            for event in ("lock", "reveal"):
                receipt = record.part(part.key).receipt(event)
                assert receipt["student"] == user, (user, part.key, event)
                assert receipt["service"].startswith("viewcopy-lock-")


@pytest.mark.hub
@pytest.mark.browser
@pytest.mark.course
def test_the_instructor_grades_the_hand_ins_against_the_services_records(graded, monkeypatch):
    hub, said = graded
    assert "2 graded" in said, said
    course = hub.home(INSTRUCTOR) / COURSE_ID
    grades = read_grades(course)
    for user in STUDENTS:
        scores = {cell: score for cell, (score, _) in grades[user].items()}
        assert scores == expected_scores(profile(user), lock_of(course, user)), user
    monkeypatch.setenv("VIEWCOPY_LOCK_DATA", str(hub.state.lock_data))  # as the hub sets it
    lines = {line.student: line for line in build_report(course, ASSIGNMENT).students}
    assert {user: lines[user].lock for user in STUDENTS} == dict.fromkeys(STUDENTS, LOCKED_VERIFIED)


@pytest.mark.hub
@pytest.mark.browser
@pytest.mark.course
def test_a_student_fetches_feedback_and_sees_the_diagrams(browser, graded):
    hub, _ = graded
    user = "alice"
    page = log_in(browser, hub, user)
    panel = assignment_list(page)
    submitted = panel.locator("#submitted_assignments_list")
    submitted.get_by_role("button", name="Fetch Feedback").click()
    expect(submitted).to_contain_text("view feedback")
    feedback = sorted((hub.home(user) / COURSE_ID / ASSIGNMENT / "feedback").rglob("*.html"))
    assert len(feedback) == 1, feedback
    relative = urllib.parse.quote(feedback[0].relative_to(hub.home(user)).as_posix())
    page.route(re.compile(r"^https?://(?!127\.0\.0\.1)"), lambda route: route.abort())
    page.goto(f"{hub.url}/user/{user}/files/{relative}")
    score = page.locator("div.cell", has=page.locator('a[name="score_predictions"]'))
    diagrams = score.locator("svg", has=page.locator('[data-part="verdict"]'))
    expect(diagrams).to_have_count(len(profile(user).wrong_items))
    for diagram in diagrams.all():
        expect(diagram).to_be_visible()
    score.screenshot(path=SHOTS / "feedback.png")
    page.context.close()


@pytest.mark.hub
@pytest.mark.browser
@pytest.mark.course
def test_formgrader_opens_in_the_instructors_lab_and_nowhere_else(browser, graded):
    hub, _ = graded
    page = log_in(browser, hub, INSTRUCTOR)
    page.get_by_role("menuitem", name="Nbgrader", exact=True).click()
    page.get_by_role("menuitem", name="Formgrader", exact=True).click()
    manage = page.frame_locator("iframe").last
    expect(manage.get_by_role("link", name=ASSIGNMENT).first).to_be_visible()
    page.screenshot(path=SHOTS / "formgrader.png")
    page.goto(f"{hub.url}/user/{INSTRUCTOR}/formgrader/gradebook/{ASSIGNMENT}/{NOTEBOOK[:-6]}")
    expect(page.get_by_role("link", name=re.compile("alice|Submission")).first).to_be_visible()
    page.get_by_role("link", name=re.compile("Submission #1")).first.click()
    expect(page.locator("input#answer_21")).to_have_count(1)
    page.context.close()

    student = log_in(browser, hub, "bob")
    framed = student.request.get(f"{hub.url}/user/bob/lab")
    assert framed.headers["content-security-policy"].startswith("frame-ancestors 'none'")
    assert student.request.get(f"{hub.url}/user/bob/formgrader").status == 404
    student.context.close()


TOKEN_FORM_READY = """() => {
    const form = document.getElementById("request-token-form");
    const bound = window.jQuery && form && jQuery._data(form, "events");
    return Boolean(bound && bound.submit);
}"""
"""The hub's token page has bound its request form: token.js, which requirejs loads after the
page, handles the form's submit (the request for a token); under load that comes seconds late."""


def hub_token(browser, hub: RunningHub, user: str) -> str:
    """A token `user` requests on the hub's token page, as anyone logged in can."""
    page = log_in(browser, hub, user)
    page.goto(f"{hub.url}/hub/token")
    page.wait_for_function(TOKEN_FORM_READY)  # a click before it submits the bare form instead
    page.get_by_role("button", name=re.compile("Request new API token")).click()
    token = page.locator("#token-result")
    expect(token).not_to_be_empty()
    value = token.inner_text().strip()
    page.context.close()
    return value


def lock(hub: RunningHub, token: str, **claim: str) -> tuple[int, str]:
    """POST a lock through the hub's proxy with `token`; (status, the service's sentence)."""
    body = {"assignment": "hub-test", "fingerprint": "a" * 64, **claim}
    request = urllib.request.Request(
        f"{hub.url}/services/viewcopy-lock/v1/lock",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())["error"]


@pytest.mark.hub
@pytest.mark.browser
@pytest.mark.course
def test_a_hub_token_locks_only_as_its_student_of_this_course(browser, hub):
    alice = hub_token(browser, hub, "alice")
    assert lock(hub, alice)[0] == 200
    assert lock(hub, alice, student="bob") == (403, "this token belongs to alice, not bob")
    status, said = lock(hub, hub_token(browser, hub, GUEST))
    assert status == 403 and f"{GUEST} is not a student of this course" in said, said
    assert lock(hub, "not-a-token")[0] == 401
    data = hub.state.lock_data
    assert student_locks(data, GUEST, "hub-test") is None
    assert student_locks(data, "bob", "hub-test") is None


@pytest.mark.hub
@pytest.mark.browser
@pytest.mark.course
def test_an_nbgitpuller_link_opens_the_release_in_a_students_lab(browser, hub):
    shared = Path(tempfile.mkdtemp())  # bob's server, as bob, reads it (pytest's tmp_path: root's)
    shared.chmod(0o755)
    source = shared / "course-materials"
    release = hub.home(INSTRUCTOR) / COURSE_ID / "release" / ASSIGNMENT
    subprocess.run(["git", "init", "-q", "-b", "main", str(source)], check=True)
    (source / ASSIGNMENT).mkdir()
    (source / ASSIGNMENT / NOTEBOOK).write_bytes((release / NOTEBOOK).read_bytes())
    git = ["git", "-C", str(source), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "release"], check=True)

    page = log_in(browser, hub, "bob")
    if isolating():  # bob's account is made at his first login; git refuses another's repository
        bob = pwd.getpwnam(unix_name("bob"))
        own_tree(shared, bob.pw_uid, bob.pw_gid)
    target = f"lab/tree/{source.name}/{ASSIGNMENT}/{NOTEBOOK}"
    page.goto(
        f"{hub.url}/hub/user-redirect/git-pull?repo={source.as_uri()}&branch=main"
        f"&urlpath={urllib.parse.quote(target, safe='')}"
    )
    page.wait_for_url(re.compile(re.escape(target)), timeout=300_000)
    shown = page.locator(".jp-NotebookPanel .jp-Notebook-cell").locator("visible=true")
    expect(shown.first).to_contain_text("View or copy")  # the release's opening cell
    pulled = hub.home("bob") / source.name / ASSIGNMENT / NOTEBOOK
    assert pulled.read_bytes() == (release / NOTEBOOK).read_bytes()
    page.context.close()


def one_account_each_or_skip() -> None:
    """A hub run by root gives each person a Unix account; run by anyone else it cannot."""
    if not isolating():
        pytest.skip("a Unix user each needs a hub run as root (CI runs it as root)")


def own_token(hub: RunningHub, user: str) -> str:
    """A token of `user`'s own, with only their own permissions, as their Lab holds one."""
    admin = hub.state.secret("admin_token")
    return api(f"{hub.url}/hub/api/users/{user}/tokens", admin, "POST", {"note": "probe"})["token"]


@pytest.mark.hub
@pytest.mark.browser
@pytest.mark.course
def test_a_students_kernel_reaches_nothing_of_the_course_the_hub_or_another_student(graded):
    hub, _ = graded
    one_account_each_or_skip()
    student, victim = "bob", "alice"
    account = pwd.getpwnam(unix_name(student))
    said = run_in_kernel(
        hub.url, student, own_token(hub, student), probe(hub.state, ROOT, victim, student)
    )
    found = json.loads(said.strip().splitlines()[-1])
    assert (found["uid"], found["user"]) == (account.pw_uid, unix_name(student))
    assert account.pw_uid not in (0, os.geteuid())  # neither root nor the hub's user
    for kind in ("read", "list", "append", "create"):
        reached = {what: met for what, met in found[kind].items() if met != "PermissionError"}
        assert reached == {}, (kind, reached)
    assert found["gradebook"].startswith("OperationalError: unable to open"), found["gradebook"]
    assert found["guessed"].startswith("FileNotFoundError"), found["guessed"]  # named by chance
    assert found["own home"] == "done" and found["outbound"] == "done"  # the honest path's
    seen = "\n".join([*found["seen"], *found["environment"].values()])
    leaked = [name for name, value in secrets_of_others(hub.state, account.pw_uid).items()
              if value in seen]  # fmt: skip
    assert leaked == [], leaked


@pytest.mark.hub
@pytest.mark.browser
@pytest.mark.course
def test_the_hubs_state_is_laid_out_for_its_staff_from_the_start(graded):
    hub, _ = graded
    one_account_each_or_skip()
    state = hub.state
    staff, lock = grp.getgrnam(staff_group(COURSE_ID)), pwd.getpwnam(lock_user(COURSE_ID))
    instructor = unix_name(INSTRUCTOR)
    assert instructor in staff.gr_mem and instructor in grp.getgrgid(lock.pw_gid).gr_mem
    assert not {unix_name(s) for s in STUDENTS} & {*staff.gr_mem, *grp.getgrgid(lock.pw_gid).gr_mem}
    # closed folders close all below them (nbgrader copies a hand-in's 0644 files into the course)
    secrets = state.folder / "secrets"
    closed = [state.course_root.parent, state.course_root, state.lock_data, secrets]
    for path in closed:
        assert not path.stat().st_mode & 0o007, path
    for path in (state.folder / "secrets").iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for name in ("hub.json", "jupyterhub.sqlite", "jupyterhub.log"):
        assert stat.S_IMODE((state.folder / name).stat().st_mode) == 0o600, name
    assert (state.course_root / "gradebook.db").stat().st_gid == staff.gr_gid
    assert (state.lock_data / "key").stat().st_uid == lock.pw_uid
    service = [
        p
        for p in psutil.process_iter(["cmdline", "uids"])
        if f"lock-service --data {state.lock_data} " in " ".join(p.info["cmdline"] or [])
    ]  # this hub's own (other tests run services of their own beside it)
    assert [p.info["uids"].real for p in service] == [lock.pw_uid]
    for user in (*STUDENTS, INSTRUCTOR):
        home = state.home(user)
        assert (home.stat().st_uid, stat.S_IMODE(home.stat().st_mode)) == (
            pwd.getpwnam(unix_name(user)).pw_uid,
            0o700,
        )
    assert (state.home(INSTRUCTOR) / COURSE_ID).resolve() == state.course_root


@pytest.mark.hub
@pytest.mark.browser
@pytest.mark.course
def test_ctrl_c_stops_the_hub_and_everything_it_started(hub):
    started = psutil.Process(hub.process.pid).children(recursive=True)
    commands = [" ".join(p.cmdline()) for p in started]
    for expected in ("jupyterhub -f", "configurable-http-proxy", "lock-service"):
        assert any(expected in c for c in commands), (expected, commands)
    servers = [c for c in commands if "jupyterhub-singleuser" in c]
    assert len(servers) >= len(STUDENTS) + 1, commands  # the students', the instructor's, ...

    hub.process.send_signal(signal.SIGINT)
    assert hub.process.wait(timeout=120) == 0, hub.output()
    assert "hub stopped, nothing left running" in hub.output()
    alive = [p for p in started if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert alive == [], [p.cmdline() for p in alive]
    for port in ("port", "hub_port", "proxy_api_port", "lock_port"):  # nothing listens there
        with pytest.raises(ConnectionRefusedError), socket.socket() as probe:
            probe.connect(("127.0.0.1", getattr(hub.state, port)))
