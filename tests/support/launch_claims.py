"""The claims of an LTI 1.3 resource link launch as the standard lays them out (LTI Core 1.3,
5.3 and 5.4, the AGS and NRPS claims), for tests that read a launch without a platform."""

from __future__ import annotations

from viewcopy.lms.vocabulary import (
    AGS_CLAIM,
    CONTEXT_CLAIM,
    DEPLOYMENT_CLAIM,
    LTI,
    NRPS_CLAIM,
    ROLES_CLAIM,
)

MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
ISSUER = "https://lms.example.edu"


def launch_claims(sub: str, role: str = "Learner", context: str = "course-101", **ags: str) -> dict:
    """A resource link launch by `sub` in `context`, with `role` (a membership role name)."""
    return {
        "iss": ISSUER,
        "sub": sub,
        "aud": "tool-client",
        "name": f"Person {sub}",
        "email": f"{sub.strip()}@example.edu",
        LTI + "message_type": "LtiResourceLinkRequest",
        LTI + "version": "1.3.0",
        LTI + "resource_link": {"id": "link-1", "title": "View or copy (M01.02)"},
        DEPLOYMENT_CLAIM: "1:dep",
        ROLES_CLAIM: [MEMBERSHIP + role],
        CONTEXT_CLAIM: {"id": context, "label": "PTMW", "title": "PyTorch and the memory wall"},
        AGS_CLAIM: {"lineitems": f"{ISSUER}/c/lineitems", "scope": ["s"], **ags},
        NRPS_CLAIM: {"context_memberships_url": f"{ISSUER}/c/members"},
    }
