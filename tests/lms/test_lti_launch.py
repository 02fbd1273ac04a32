"""Students and instructors launch from the LMS into the hub with LTI 1.3.

A real LTI 1.3 platform (`support.lti_platform`, on lti1p3platform) runs on loopback, and
`viewcopy hub --lti` starts on its registration; the tool is registered at the platform with the
URLs the hub prints. In Chromium, a student and an instructor open the course's link in the LMS
and land in their own JupyterLab, in their own group, on a student's or a grader's server; the
launches are recorded in the course's lms/link.json; the lock service takes the student's notebook
token and refuses the instructor's. Over plain HTTP: a teaching assistant is a grader, a role
outside the course is refused, and forged launches (another key, another audience, expired, a
replayed id_token, another deployment) are refused without logging anyone in. Played as the
standard describes the platform (the id_token's claims as LTI 1.3 lays them out): a launch is
taken once, also after a restart, whole or mixed with another login's cookies; ids that
normalise alike, or that spell another's hub name, get accounts of their own; anything but a
well-formed resource link launch is a 400 with a sentence; no refusal shows a server folder.

Slow: a hub (the course built and released) and two JupyterLab servers; about 40 s on an idle
two-core machine.
"""

from __future__ import annotations

import html
import json
import re
import signal
import stat
import subprocess
import sys
import urllib.parse
from pathlib import Path

import psutil
import pytest
from support.course_notebook import ROOT
from support.lti_platform import (
    INSTRUCTOR,
    LEARNER,
    ROLES,
    TEACHING_ASSISTANT,
    Member,
    Platform,
    require_lti,
)
from support.running_hub import RunningHub, require_hub, start_hub
from support.servers import free_port

from viewcopy.course.assignment import COURSE_ID
from viewcopy.lms.keys import ToolKey
from viewcopy.lms.link import CourseLink
from viewcopy.lms.registration import REGISTRATION_FILE, hub_name
from viewcopy.lms.vocabulary import (
    CONTEXT_CLAIM,
    CUSTOM_CLAIM,
    DEPLOYMENT_CLAIM,
    MESSAGE_TYPE_CLAIM,
    RESOURCE_LINK_CLAIM,
    ROLES_CLAIM,
)

pytestmark = [pytest.mark.lms, pytest.mark.hub, pytest.mark.browser, pytest.mark.course]

require_lti()
require_hub("VIEWCOPY_REQUIRE_HUB")

import requests  # noqa: E402
from playwright.sync_api import expect  # noqa: E402
from support.browser_lab import patient  # noqa: E402 (after the checks: playwright)

STUDENTS, GRADERS = f"nbgrader-{COURSE_ID}", f"formgrade-{COURSE_ID}"
# LMS ids as LMSs make them: the student's is already a safe hub name, the instructor's is not
STUDENT = Member("5f2b9c1e-7d4a-4e4b-9a51-0c3c2f1d6a10", "Ada Student", "ada@uni.example")
TEACHER = Member("Staff|42", "Grace Instructor", "grace@uni.example", (INSTRUCTOR,))
ASSISTANT = Member("ta-7", "Alan Assistant", "alan@uni.example", (TEACHING_ASSISTANT,))
MENTOR = Member("mentor-3", "Max Mentor", "max@uni.example", (f"{ROLES}Mentor",))
MALLORY = Member("mallory-9", "Mallory Learner", "mallory@uni.example", (LEARNER,))
LOGIN, CALLBACK, KEY_SET = "lti13/oauth_login", "lti13/oauth_callback", "lti13/jwks"
SCOPES = ("lti-ags/scope/lineitem", "lti-ags/scope/score", "lti-nrps/scope/contextmembership")


class LtiHub(RunningHub):
    """`viewcopy hub --lti` running, and the hub's own model of a user."""

    def user(self, name: str) -> dict | None:
        """The hub's model of a user (the course-admin token), None if there is none."""
        answer = requests.get(
            f"{self.url}/hub/api/users/{name}",
            headers={"Authorization": f"token {self.state.secret('admin_token')}"},
            timeout=30,
        )
        if answer.status_code == 404:
            return None
        answer.raise_for_status()
        return answer.json()


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    running = Platform.start(tmp_path_factory.mktemp("platform"))
    running.enrol([STUDENT, TEACHER, ASSISTANT, MENTOR, MALLORY])
    yield running
    running.stop()


@pytest.fixture(scope="module")
def hub(tmp_path_factory, platform):
    """`viewcopy hub --lti` on the platform's registration, once it says what to give the LMS;
    the tool then registered at the platform with those values."""
    folder = tmp_path_factory.mktemp("hub")
    registration = folder / "from-the-lms.json"
    registration.write_text(json.dumps(platform.registration()))
    running = start_hub(
        folder,
        *("--lti", str(registration), "--repo", str(ROOT), "--port", str(free_port())),
        kind=LtiHub,
    )
    try:
        platform.register_tool(
            login_url=running.printed("login URL (OIDC login initiation)"),
            launch_url=running.printed("target link URI"),
            redirect_uris=[running.printed("redirect URL")],
            key_set_url=running.printed("key set URL (public JWK set)"),
        )
    except BaseException:  # a setup that fails stops the hub: nothing left running
        running.stop()
        raise
    yield running
    running.process.send_signal(signal.SIGINT)
    try:
        assert running.process.wait(timeout=120) == 0, running.output()
    except subprocess.TimeoutExpired:
        running.process.kill()
        raise
    assert "hub stopped, nothing left running" in running.output()


@pytest.fixture(scope="module")
def browser(chromium):
    """The session's Chromium, `expect` waiting longer on the hub's pages."""
    with patient(120_000):
        yield chromium


@pytest.fixture(scope="module")
def launched(browser, platform, hub):
    """The student and the instructor, each having opened the course's link in the LMS: their
    pages, open in their own JupyterLab."""
    pages = {}
    for member in (STUDENT, TEACHER):
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.goto(platform.launch_url(member.user_id))
        name = hub_name(member.user_id)
        page.wait_for_url(re.compile(rf"{re.escape(hub.url)}/user/{name}/lab"), timeout=300_000)
        expect(page.locator("#jp-main-dock-panel")).to_be_visible()
        pages[member.user_id] = page
    yield pages
    for page in pages.values():
        page.context.close()


def test_the_hub_says_what_to_give_the_lms(hub, platform):
    base = f"{hub.url}/hub"
    assert hub.printed("login URL (OIDC login initiation)") == f"{base}/{LOGIN}"
    assert hub.printed("redirect URL") == f"{base}/{CALLBACK}"
    assert hub.printed("key set URL (public JWK set)") == f"{base}/{KEY_SET}"
    assert hub.printed("target link URI") == base
    scopes = next(line for line in hub.said if "scopes:" in line)
    assert all(f"https://purl.imsglobal.org/spec/{scope}" in scopes for scope in SCOPES), scopes
    assert "password" not in hub.output()
    # the registration is kept in the course's lms/ folder, with the course's own key
    kept = json.loads((hub.state.lms / REGISTRATION_FILE).read_text())
    given = {k: v for k, v in platform.registration().items() if k != "deployment_id"}
    assert kept == {**given, "deployment_ids": [platform.deployment_id], "username_claim": "sub"}
    key = ToolKey.ensure(hub.state.lms)
    assert stat.S_IMODE(key.path.stat().st_mode) == 0o600
    assert hub.printed("key id") == key.kid
    served = requests.get(f"{base}/{KEY_SET}", timeout=30)
    assert served.headers["content-type"].startswith("application/json")
    assert served.json() == key.jwks()
    assert "d" not in served.json()["keys"][0]  # the public half only


def test_a_launch_lands_each_in_their_own_lab_in_their_group(hub, launched):
    student, teacher = hub_name(STUDENT.user_id), hub_name(TEACHER.user_id)
    assert student == STUDENT.user_id and re.fullmatch(r"staff-42-[0-9a-f]{10}", teacher)
    assert hub.user(student)["groups"] == [STUDENTS]
    assert hub.user(teacher)["groups"] == [GRADERS]
    # a student's server: no formgrader, not framable; a grader's: formgrader, in Lab's frame
    page = launched[STUDENT.user_id]
    assert page.request.get(f"{hub.url}/user/{student}/formgrader").status == 404
    lab = page.request.get(f"{hub.url}/user/{student}/lab")
    assert lab.headers["content-security-policy"].startswith("frame-ancestors 'none'")
    page = launched[TEACHER.user_id]
    assert page.request.get(f"{hub.url}/user/{teacher}/formgrader").status == 200
    lab = page.request.get(f"{hub.url}/user/{teacher}/lab")
    assert lab.headers["content-security-policy"].startswith("frame-ancestors 'self'")
    # neither reaches the other's server
    assert page.request.get(f"{hub.url}/user/{student}/api/status").status == 403


def test_each_launch_is_recorded_in_the_courses_link(hub, platform, launched):
    link = CourseLink.read(hub.state.lms)
    assert link.issuer == platform.issuer and link.deployment_id == platform.deployment_id
    assert link.context_id == platform.context_id
    assert link.lineitems == platform.lineitems_url
    assert link.memberships_url == platform.memberships_url
    assert "https://purl.imsglobal.org/spec/lti-ags/scope/score" in link.scopes
    for member in (STUDENT, TEACHER):
        person = link.person(hub_name(member.user_id))
        assert (person.sub, person.name, person.email) == (
            member.user_id,
            member.name,
            member.email,
        )
        assert person.roles == member.roles


def server_token(name: str) -> str:
    """The hub token of `name`'s JupyterLab server: what its notebooks send the lock service."""
    for process in psutil.process_iter(["cmdline"]):
        if any("jupyterhub-singleuser" in part for part in process.info["cmdline"] or ()):
            environment = process.environ()
            if environment.get("JUPYTERHUB_USER") == name:
                return environment["JUPYTERHUB_API_TOKEN"]
    raise AssertionError(f"no JupyterLab server of {name} is running")


def lock(hub: LtiHub, token: str) -> tuple[int, str]:
    answer = requests.post(
        f"{hub.url}/services/viewcopy-lock/v1/lock",
        json={"assignment": "lti-launch", "fingerprint": "a" * 64},
        headers={"Authorization": f"token {token}"},
        timeout=30,
    )
    return answer.status_code, answer.text


def test_the_lock_service_takes_a_launched_student_and_refuses_the_instructor(hub, launched):
    student, teacher = hub_name(STUDENT.user_id), hub_name(TEACHER.user_id)
    status, said = lock(hub, server_token(student))
    assert status == 200, said
    status, said = lock(hub, server_token(teacher))
    assert status == 403 and f"{teacher} is not a student of this course" in said, said


# --- over plain HTTP: the launch as the browser makes it, and forgeries ------------------------


def launch_form(session: requests.Session, platform: Platform, member: Member) -> dict:
    """Open the course's link in the LMS as `member`, as far as the platform's signed launch:
    the form's action, id_token and state."""
    page = session.get(platform.launch_url(member.user_id), timeout=30)
    assert page.status_code == 200, page.text
    found = dict(re.findall(r'name="(id_token|state)" value="([^"]*)"', page.text))
    action = re.search(r'action="([^"]*)"', page.text).group(1)
    return {"action": html.unescape(action), **{k: html.unescape(v) for k, v in found.items()}}


def fresh_login(session: requests.Session, hub: LtiHub, platform: Platform, **asked) -> dict:
    """A login initiation at the hub, stopped at its redirect to the platform: the state and
    nonce the hub expects back (its cookies are in `session`)."""
    query = {
        "iss": platform.issuer,
        "login_hint": MALLORY.user_id,
        "target_link_uri": f"{hub.url}/hub",
        "lti_message_hint": "resource-m01-02",
        "client_id": platform.client_id,
        "lti_deployment_id": platform.deployment_id,
        **asked,
    }
    answer = session.get(f"{hub.url}/hub/{LOGIN}", params=query, allow_redirects=False)
    if answer.status_code != 302:
        return {"status": answer.status_code, "text": answer.text}
    sent = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(answer.headers["location"]).query))
    assert answer.headers["location"].startswith(f"{platform.url}/authorize?")
    return {"status": 302, "state": sent["state"], "nonce": sent["nonce"]}


def post_launch(session: requests.Session, hub: LtiHub, id_token: str, state: str):
    return session.post(
        f"{hub.url}/hub/{CALLBACK}",
        data={"id_token": id_token, "state": state},
        allow_redirects=False,
        timeout=30,
    )


def logged_in(session: requests.Session) -> bool:
    return "jupyterhub-hub-login" in session.cookies


def test_a_teaching_assistant_grades_and_a_mentor_is_refused(hub, platform):
    for member, status, group in ((ASSISTANT, 302, GRADERS), (MENTOR, 403, None)):
        session = requests.Session()
        form = launch_form(session, platform, member)
        assert form["action"] == f"{hub.url}/hub/{CALLBACK}"
        answer = post_launch(session, hub, form["id_token"], form["state"])
        assert answer.status_code == status, answer.text
        if group is None:
            assert "neither a learner" in html.unescape(answer.text)
            assert hub.user(hub_name(member.user_id)) is None and not logged_in(session)
        else:
            assert hub.user(hub_name(member.user_id))["groups"] == [group]
            assert logged_in(session)


def test_the_hub_and_the_roster_read_a_persons_roles_alike(hub, platform):
    """Whoever the hub logs in as a student the roster enrols, and nobody else: the roles an LMS
    gives one person (a Learner who also develops content, a Learner's sub-role, an assistant
    who is also a Learner, a designer) mean the same at a launch and in the roster."""
    from nbgrader.api import Gradebook

    from viewcopy.course.assignment import course_id, gradebook_url
    from viewcopy.course.folder import Course
    from viewcopy.lms.roster import roster

    membership = "http://purl.imsglobal.org/vocab/lis/v2/membership"
    mixed = [
        Member("dual-1", "Dana Dual", "dana@uni.example", (LEARNER, f"{ROLES}ContentDeveloper")),
        Member("audit-2", "Abe Audit", "abe@uni.example", (f"{membership}/Learner#Auditor",)),
        Member("ta-3", "Tia Learner", "tia@uni.example", (TEACHING_ASSISTANT, LEARNER)),
        Member("design-4", "Des Igner", "des@uni.example", (f"{ROLES}ContentDeveloper",)),
    ]
    platform.enrol([STUDENT, TEACHER, ASSISTANT, MENTOR, MALLORY, *mixed])
    groups = {}
    for member in mixed:
        session = requests.Session()
        form = launch_form(session, platform, member)
        post_launch(session, hub, form["id_token"], form["state"])
        user = hub.user(hub_name(member.user_id))
        groups[member.user_id] = user["groups"] if user else []
    course = hub.state.course_root
    roster(Course.at(course))
    with Gradebook(gradebook_url(course), course_id(course)) as gradebook:
        enrolled = {s.id for s in gradebook.students}
    for member in mixed:
        name = hub_name(member.user_id)
        assert (groups[member.user_id] == [STUDENTS]) == (name in enrolled), (member, groups)
    assert groups["dual-1"] == groups["audit-2"] == [STUDENTS]  # Learners, whatever else
    assert groups["ta-3"] == [GRADERS] and groups["design-4"] == []


def test_forged_and_replayed_launches_are_refused(hub, platform):
    # The harness itself: a launch the platform signs, for the nonce of a fresh login, is taken.
    session = requests.Session()
    login = fresh_login(session, hub, platform)
    honest = platform.id_token(STUDENT.user_id, login["nonce"])
    assert post_launch(session, hub, honest, login["state"]).status_code == 302
    assert logged_in(session)

    # The same id_token again, with a fresh login's state: its nonce is not this login's.
    session = requests.Session()
    login = fresh_login(session, hub, platform)
    replayed = post_launch(session, hub, honest, login["state"])
    assert replayed.status_code == 400 and "nonce mismatch" in replayed.text
    assert not logged_in(session)

    # Forged for Mallory, who never launched: each must leave no user and no login.
    forgeries = {
        "another key": ({"key": platform.other_key()}, 400, "Signature verification failed"),
        "another audience": ({"audience": "another-tool"}, 401, "audience"),
        "expired": ({"expires_in": -60}, 400, "Signature has expired"),
        "another deployment": ({DEPLOYMENT_CLAIM: "deployment-other"}, 403, "deployment"),
    }
    for forgery, (how, status, why) in forgeries.items():
        session = requests.Session()
        login = fresh_login(session, hub, platform)
        forged = platform.id_token(MALLORY.user_id, login["nonce"], **how)
        answer = post_launch(session, hub, forged, login["state"])
        said = html.unescape(answer.text).lower()
        assert (answer.status_code, why.lower() in said) == (status, True), (
            forgery,
            answer.status_code,
            answer.text[-2000:],
        )
        assert_discreet(hub, answer) and not logged_in(session), forgery
    assert hub.user(hub_name(MALLORY.user_id)) is None

    # A login initiated from another platform, or for another deployment, goes no further.
    refused = fresh_login(requests.Session(), hub, platform, iss="https://lms.elsewhere.example")
    assert refused["status"] == 400 and "is not one of its launches" in refused["text"]
    refused = fresh_login(requests.Session(), hub, platform, lti_deployment_id="other")
    assert refused["status"] == 400
    assert "viewcopy lms deployment add other" in html.unescape(refused["text"])


def assert_discreet(hub: LtiHub, answer: requests.Response) -> bool:
    """The page shows no server folder and no secret of the hub."""
    page = html.unescape(answer.text)
    folders = (hub.state.folder, hub.state.course_root, hub.state.lms, ROOT, Path(sys.prefix))
    for folder in folders:
        assert str(folder) not in page, (folder, page[-2000:])
    for secret in ("cookie_secret", "password", "admin_token"):
        assert hub.state.secret(secret) not in page, secret
    assert "Traceback" not in page and answer.status_code < 500, page[-2000:]
    return True


def replay(cookies, hub: LtiHub, id_token: str, state: str) -> requests.Response:
    """Send a launch as another browser would that holds copies of these cookies."""
    thief = requests.Session()
    thief.cookies.update(cookies)
    answer = post_launch(thief, hub, id_token, state)
    assert not logged_in(thief)
    return answer


def test_a_launch_is_taken_once_even_sent_again_whole(hub, platform):
    """IMS Security Framework 1.0, 5.1.3: each nonce once. The victim's whole launch (the signed
    id_token, its state, the browser's login cookies) sent again is refused; so is the victim's
    login state with a nonce of the attacker's own login."""
    victim = requests.Session()
    form = launch_form(victim, platform, STUDENT)
    cookies = victim.cookies.copy()  # what a copy of the victim's request carries
    assert post_launch(victim, hub, form["id_token"], form["state"]).status_code == 302
    assert logged_in(victim)

    answer = replay(cookies, hub, form["id_token"], form["state"])
    said = html.unescape(answer.text)
    assert answer.status_code == 400 and "this launch was already used" in said, said[-2000:]
    assert assert_discreet(hub, answer)

    attacker = requests.Session()
    login = fresh_login(attacker, hub, platform)  # a login of the attacker's own
    mixed, nonce_cookie = requests.cookies.RequestsCookieJar(), "lti13authenticator-nonce-state"
    for cookie in cookies:  # the victim's state cookie ...
        if cookie.name != nonce_cookie:
            mixed.set_cookie(cookie)
    for cookie in attacker.cookies:  # ... with the nonce cookie of the attacker's login
        if cookie.name == nonce_cookie:
            mixed.set_cookie(cookie)
    token = platform.id_token(MALLORY.user_id, login["nonce"])
    answer = replay(mixed, hub, token, form["state"])
    said = html.unescape(answer.text)
    assert answer.status_code == 400 and "its state was taken before" in said, said[-2000:]


def launch_as(platform: Platform, hub: LtiHub, member: Member, **claims) -> requests.Session:
    """A launch of `member` (its claims replaced by `claims`) for a fresh login: the session."""
    session = requests.Session()
    login = fresh_login(session, hub, platform)
    token = platform.id_token(member.user_id, login["nonce"], **claims)
    answer = post_launch(session, hub, token, login["state"])
    assert answer.status_code == 302 and logged_in(session), answer.text[-2000:]
    return session


def home_of(session: requests.Session, hub: LtiHub) -> str:
    """Whose hub home page the session's login opens."""
    page = session.get(f"{hub.url}/hub/home", timeout=30).text
    return re.search(r'id="login_widget".*?<span[^>]*>\s*([^<\s]+)', page, re.S).group(1)


def test_no_two_people_share_an_account(hub, platform):
    """An id that differs from the student's by a trailing space, and an id that is the
    instructor's hub name, each get an account of their own; the student's and the instructor's
    accounts, groups and link.json entries stay theirs."""
    from viewcopy.lms.people import People

    student, teacher = hub_name(STUDENT.user_id), hub_name(TEACHER.user_id)
    assert home_of(launch_as(platform, hub, STUDENT), hub) == student
    assert home_of(launch_as(platform, hub, TEACHER), hub) == teacher
    for lookalike in (STUDENT.user_id + " ", teacher):
        session = launch_as(platform, hub, MALLORY, sub=lookalike)
        name = People.read(hub.state.lms).of(platform.issuer, lookalike).name
        assert name not in (student, teacher) and home_of(session, hub) == name
        assert hub.user(name)["groups"] == [STUDENTS]
    link = CourseLink.read(hub.state.lms)
    assert link.person(student).sub == STUDENT.user_id
    assert link.person(teacher).sub == TEACHER.user_id
    assert hub.user(student)["groups"] == [STUDENTS] and hub.user(teacher)["groups"] == [GRADERS]
    listed = viewcopy_lms("people", "--course", str(hub.state.course_root))
    assert listed.returncode == 0, listed.stderr
    assert f"{teacher}: {TEACHER.user_id!r} of {platform.issuer}" in listed.stdout


REFUSED_CLAIMS = {
    "a Deep Linking request": (
        {MESSAGE_TYPE_CLAIM: "LtiDeepLinkingRequest"},
        (),
        "sent 'LtiDeepLinkingRequest': the lab offers no content to pick",
    ),
    "a submission review": (
        {MESSAGE_TYPE_CLAIM: "LtiSubmissionReviewRequest"},
        (),
        "sent 'LtiSubmissionReviewRequest'",
    ),
    "no context": ({}, (CONTEXT_CLAIM,), "comes from outside a course"),
    "a context that is a string": ({CONTEXT_CLAIM: "course-101"}, (), "is not an object"),
    "a context without a label": ({CONTEXT_CLAIM: {"id": "c", "label": ""}}, (), "label"),
    "roles that are one string": ({ROLES_CLAIM: LEARNER}, (), "not a list of strings"),
    "no sub": ({}, ("sub",), "this launch names no one"),
    "no resource link": ({}, (RESOURCE_LINK_CLAIM,), RESOURCE_LINK_CLAIM),
    "a resource link that is a list": ({RESOURCE_LINK_CLAIM: ["x"]}, (), "is not an object"),
    "custom parameters that are a list": ({CUSTOM_CLAIM: ["x"]}, (), "is not an object"),
    "no message type": ({}, (MESSAGE_TYPE_CLAIM,), "says no message type"),
}


def test_only_a_well_formed_resource_link_launch_logs_in(hub, platform):
    """Each launch the hub does not serve, or whose claims are missing or malformed, is a 400
    with a sentence naming it: no 500, no folder shown, nobody logged in or bound."""
    from viewcopy.lms.people import People

    bound = People.read(hub.state.lms)
    for kind, (claims, omit, why) in REFUSED_CLAIMS.items():
        session = requests.Session()
        login = fresh_login(session, hub, platform)
        token = platform.id_token(MALLORY.user_id, login["nonce"], omit=omit, **claims)
        answer = post_launch(session, hub, token, login["state"])
        said = html.unescape(answer.text)
        assert (answer.status_code, why in said) == (400, True), (kind, said[-2000:])
        assert assert_discreet(hub, answer) and not logged_in(session), kind
    assert hub.user(hub_name(MALLORY.user_id)) is None
    assert People.read(hub.state.lms) == bound


def viewcopy_lms(*args: str) -> subprocess.CompletedProcess:
    viewcopy = str(Path(sys.executable).parent / "viewcopy")
    return subprocess.run(
        [viewcopy, "lms", *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_a_second_deployment_launches_once_added_without_a_restart(hub, platform):
    """Canvas makes a deployment per course-level install: its launches are refused, naming the
    command that adds it; once added, the running hub takes them."""
    second = "deployment-course-install-2"
    session = requests.Session()
    login = fresh_login(session, hub, platform, lti_deployment_id="")
    token = platform.id_token(ASSISTANT.user_id, login["nonce"], **{DEPLOYMENT_CLAIM: second})
    answer = post_launch(session, hub, token, login["state"])
    said = html.unescape(answer.text)
    assert answer.status_code == 403 and f"deployment {second!r}" in said, said[-2000:]
    assert f"`viewcopy lms deployment add {second}` in the course's folder" in said
    assert_discreet(hub, answer) and not logged_in(session)
    # the folder the instructor adds it in is the hub's log's to say
    added = f"viewcopy lms deployment add {second} --course {hub.state.course_root}"
    assert added in hub.state.log.read_text()
    run = viewcopy_lms("deployment", "add", second, "--course", str(hub.state.course_root))
    assert run.returncode == 0, run.stderr
    session = requests.Session()
    login = fresh_login(session, hub, platform, lti_deployment_id=second)
    token = platform.id_token(ASSISTANT.user_id, login["nonce"], **{DEPLOYMENT_CLAIM: second})
    assert post_launch(session, hub, token, login["state"]).status_code == 302
    assert logged_in(session)


def test_the_platform_rotating_its_key_is_followed(hub, platform, tmp_path):
    """The hub keeps the platform's keys; a launch signed with a new key (a new kid) is taken,
    its key fetched again, and one signed with the retired key is then refused."""
    session = requests.Session()
    login = fresh_login(session, hub, platform)
    retired = platform.id_token(STUDENT.user_id, login["nonce"])
    rotated = ToolKey.ensure(tmp_path)  # a new RSA pair, as the platform writes it (PEM)
    (platform.folder / "platform_key.pem").write_text(rotated.private_pem)
    (platform.folder / "platform_public.pem").write_text(rotated.public_pem)
    fresh = platform.id_token(STUDENT.user_id, login["nonce"])
    assert post_launch(session, hub, fresh, login["state"]).status_code == 302
    session = requests.Session()
    login = fresh_login(session, hub, platform)
    answer = post_launch(session, hub, retired, login["state"])
    said = html.unescape(answer.text)
    assert answer.status_code == 400 and "does not hold" in said, said[-2000:]
    assert not logged_in(session)


def test_a_bad_registration_is_one_error_naming_the_field_and_the_file(tmp_path, platform):
    viewcopy = str(Path(sys.executable).parent / "viewcopy")
    bad = tmp_path / "registration.json"
    bad.write_text(json.dumps({**platform.registration(), "client_id": ""}))
    missing = tmp_path / "nowhere.json"
    for registration, expected in ((bad, "client_id must be"), (missing, "does not exist")):
        run = subprocess.run(
            [viewcopy, "hub", "--lti", str(registration), "--state", str(tmp_path / "state")]
            + ["--port", str(free_port())],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        lines = run.stderr.strip().splitlines()
        assert run.returncode == 2 and len(lines) == 1, run.stderr
        assert lines[0].startswith("viewcopy hub: error: ") and str(registration) in lines[0]
        assert expected in lines[0], lines[0]
    assert not (tmp_path / "state").exists()  # refused before anything was made


def test_a_launch_spent_before_a_restart_stays_spent(hub, platform):
    """The hub remembers spent launches in the course's lms/ folder: a launch replayed after
    `viewcopy hub` was stopped and started again is still refused; a fresh one is taken."""
    victim = requests.Session()
    form = launch_form(victim, platform, STUDENT)
    cookies = victim.cookies.copy()
    assert post_launch(victim, hub, form["id_token"], form["state"]).status_code == 302
    hub.restart()
    answer = replay(cookies, hub, form["id_token"], form["state"])
    said = html.unescape(answer.text)
    assert answer.status_code == 400 and "this launch was already used" in said, said[-2000:]
    launch_as(platform, hub, STUDENT)
