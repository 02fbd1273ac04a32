"""What the tool is to the LMS, declared once: its URLs on the course's hub and the lab's title
as a gradebook column or line item (the scopes it asks for: lms.vocabulary.TOOL_SCOPES)."""

from __future__ import annotations

LAB_TITLE = "View or copy (M01.02)"
"""The lab's assignment as the LMS names it: the line item's label, the import file's column."""

LOGIN_PATH, CALLBACK_PATH, KEY_SET_PATH = "lti13/oauth_login", "lti13/oauth_callback", "lti13/jwks"
"""The hub's LTI endpoints, under its `/hub/` prefix."""


def hub_urls(hub: str) -> dict[str, str]:
    """The values to give the LMS for a hub at `hub` (its public URL, with or without `/hub`)."""
    base = hub.rstrip("/").removesuffix("/hub") + "/hub"
    return {
        "login URL (OIDC login initiation)": f"{base}/{LOGIN_PATH}",
        "redirect URL": f"{base}/{CALLBACK_PATH}",
        "key set URL (public JWK set)": f"{base}/{KEY_SET_PATH}",
        "target link URI": base,
    }
