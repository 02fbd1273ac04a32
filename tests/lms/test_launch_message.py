"""A launch is read once, as LTI 1.3 lays it out (`lms.launch_message`): a resource link launch
is taken whole; another message type, a missing person or course, and any claim of the wrong
shape, required or optional, is a BadLaunch whose sentence names the claim."""

from __future__ import annotations

import pytest
from support.launch_claims import ISSUER, launch_claims

from viewcopy.lms.launch_message import BadLaunch, LaunchMessage
from viewcopy.lms.vocabulary import (
    AGS_CLAIM,
    CONTEXT_CLAIM,
    CUSTOM_CLAIM,
    DEPLOYMENT_CLAIM,
    MESSAGE_TYPE_CLAIM,
    NRPS_CLAIM,
    RESOURCE_LINK_CLAIM,
    ROLES_CLAIM,
)


def test_a_resource_link_launch_is_read_whole():
    claims = launch_claims("u1", "Instructor", lineitem=f"{ISSUER}/c/lineitems/7")
    launch = LaunchMessage.read({**claims, CUSTOM_CLAIM: {"student_id": "42"}})
    assert (launch.issuer, launch.sub, launch.deployment_id) == (ISSUER, "u1", "1:dep")
    assert launch.roles == tuple(claims[ROLES_CLAIM])
    assert (launch.context_id, launch.context_title) == (
        "course-101",
        claims[CONTEXT_CLAIM]["title"],
    )
    assert launch.resource_link_id == "link-1"
    assert (launch.name, launch.email) == ("Person u1", "u1@example.edu")
    assert (launch.lineitems, launch.lineitem) == (
        f"{ISSUER}/c/lineitems",
        f"{ISSUER}/c/lineitems/7",
    )
    assert launch.scopes == ("s",)
    assert launch.memberships_url == claims[NRPS_CLAIM]["context_memberships_url"]
    assert launch.custom() == {"student_id": "42"}


def test_optional_claims_may_be_absent_and_a_name_made_of_its_parts():
    claims = launch_claims("u1")
    for optional in (AGS_CLAIM, NRPS_CLAIM, "name", "email"):
        del claims[optional]
    launch = LaunchMessage.read({**claims, "given_name": "Ada", "family_name": "Lovelace"})
    assert (launch.name, launch.email, launch.lineitems, launch.scopes) == (
        "Ada Lovelace",
        "",
        None,
        (),
    )
    assert launch.memberships_url is None and launch.custom() == {}


@pytest.mark.parametrize(
    ("kind", "named"),
    [
        ("LtiDeepLinkingRequest", "'LtiDeepLinkingRequest': the lab offers no content to pick"),
        ("LtiSubmissionReviewRequest", "sent 'LtiSubmissionReviewRequest'"),
        (None, "says no message type"),
    ],
)
def test_only_a_resource_link_launch_is_served(kind, named):
    claims = {**launch_claims("u1"), MESSAGE_TYPE_CLAIM: kind}
    with pytest.raises(BadLaunch, match=named):
        LaunchMessage.read(claims)


BROKEN = {
    "no sub": ({"sub": None}, "names no one"),
    "an empty sub": ({"sub": ""}, "names no one"),
    "a numeric sub": ({"sub": 42}, "names no one"),
    "no context": ({CONTEXT_CLAIM: None}, "comes from outside a course"),
    "a context string": ({CONTEXT_CLAIM: "course-101"}, f"{CONTEXT_CLAIM} claim is not an object"),
    "a context without id": ({CONTEXT_CLAIM: {"title": "T"}}, "an object with a non-empty id"),
    "a numeric context title": ({CONTEXT_CLAIM: {"id": "c", "title": 7}}, "'title' claim is not"),
    "no resource link": ({RESOURCE_LINK_CLAIM: None}, f"no {RESOURCE_LINK_CLAIM} claim"),
    "a resource link list": ({RESOURCE_LINK_CLAIM: ["l"]}, "is not an object"),
    "no roles": ({ROLES_CLAIM: None}, f"{ROLES_CLAIM} claim is not a list of strings"),
    "roles as one string": ({ROLES_CLAIM: "Learner"}, "not a list of strings"),
    "no deployment": ({DEPLOYMENT_CLAIM: None}, f"no {DEPLOYMENT_CLAIM} claim"),
    "a numeric deployment": ({DEPLOYMENT_CLAIM: 5}, "not a non-empty string"),
    "an AGS string": ({AGS_CLAIM: "https://l"}, f"{AGS_CLAIM} claim is not an object"),
    "AGS scopes as one string": ({AGS_CLAIM: {"scope": "s"}}, "'scope' claim is not a list"),
    "an NRPS list": ({NRPS_CLAIM: []}, f"{NRPS_CLAIM} claim is not an object"),
    "custom as a list": ({CUSTOM_CLAIM: ["a"]}, f"{CUSTOM_CLAIM} claim is not an object"),
    "a numeric email": ({"email": 7}, "email claim is not a non-empty string"),
}


@pytest.mark.parametrize("broken", list(BROKEN))
def test_a_missing_or_malformed_claim_is_named(broken):
    change, named = BROKEN[broken]
    claims = {**launch_claims("u1"), **change}
    with pytest.raises(BadLaunch) as raised:
        LaunchMessage.read({k: v for k, v in claims.items() if v is not None})
    assert named in str(raised.value)
    assert str(raised.value).endswith(("in the LMS", "as yourself", "and open that"))
