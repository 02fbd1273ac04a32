"""A launch's message as the hub serves it: an LTI 1.3 resource link launch, its claims read once.

`LaunchMessage.read` takes a verified id_token's claims and gives one value, or `BadLaunch` with
a sentence naming the claim and what to do: another message type (a Deep Linking request, for
content selection, is not a launch into the lab), no person (`sub`), no course context, or any
claim, required or optional, that is not the shape LTI 1.3 gives it. The hub's login, the
course's link and the people's names read the launch from here, so no claim is read twice or
trusted unchecked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from viewcopy.lms.vocabulary import (
    AGS_CLAIM,
    CONTEXT_CLAIM,
    CUSTOM_CLAIM,
    DEPLOYMENT_CLAIM,
    MESSAGE_TYPE_CLAIM,
    NRPS_CLAIM,
    RESOURCE_LINK_CLAIM,
    RESOURCE_LINK_REQUEST,
    ROLES_CLAIM,
)

ASK = "ask the course's instructor to check the tool's settings in the LMS"


class BadLaunch(ValueError):
    """A launch the hub does not serve or cannot read: the sentence says which claim and why."""


@dataclass(frozen=True)
class LaunchMessage:
    """One resource link launch: who (issuer and `sub`, name, email, roles), from where (the
    deployment, the course context, the resource link) and the services it offers (AGS, NRPS)."""

    issuer: str
    sub: str
    deployment_id: str
    roles: tuple[str, ...]
    context_id: str
    context_title: str
    resource_link_id: str
    name: str = ""
    email: str = ""
    lineitems: str | None = None
    lineitem: str | None = None
    scopes: tuple[str, ...] = ()
    memberships_url: str | None = None
    claims: Mapping = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def read(cls, claims: Mapping) -> LaunchMessage:
        """The launch in a verified id_token's `claims`; BadLaunch where the hub cannot serve it."""
        kind = claims.get(MESSAGE_TYPE_CLAIM)
        if kind != RESOURCE_LINK_REQUEST:
            raise BadLaunch(_not_a_resource_link(kind))
        sub = claims.get("sub")
        if not isinstance(sub, str) or not sub:
            raise BadLaunch(
                "this launch names no one (its sub claim is missing or empty, as in an anonymous "
                "launch): the lab keeps each person's work and grade, so open it from the LMS "
                "while logged in as yourself"
            )
        context = _object(claims, CONTEXT_CLAIM, required=True)
        if not isinstance(context.get("id"), str) or not context["id"]:
            raise BadLaunch(_malformed(CONTEXT_CLAIM, "an object with a non-empty id"))
        link = _object(claims, RESOURCE_LINK_CLAIM, required=True)
        if not isinstance(link.get("id"), str) or not link["id"]:
            raise BadLaunch(_malformed(RESOURCE_LINK_CLAIM, "an object with a non-empty id"))
        ags, nrps = _object(claims, AGS_CLAIM), _object(claims, NRPS_CLAIM)
        _object(claims, CUSTOM_CLAIM)
        name = _text(claims, "name") or " ".join(
            filter(None, (_text(claims, "given_name"), _text(claims, "family_name")))
        )
        return cls(
            issuer=_text(claims, "iss", required=True),
            sub=sub,
            deployment_id=_text(claims, DEPLOYMENT_CLAIM, required=True),
            roles=_texts(claims, ROLES_CLAIM, required=True),
            context_id=context["id"],
            context_title=_text(context, "title", CONTEXT_CLAIM)
            or _text(context, "label", CONTEXT_CLAIM),
            resource_link_id=link["id"],
            name=name,
            email=_text(claims, "email"),
            lineitems=_text(ags, "lineitems", AGS_CLAIM) or None,
            lineitem=_text(ags, "lineitem", AGS_CLAIM) or None,
            scopes=_texts(ags, "scope", within=AGS_CLAIM),
            memberships_url=_text(nrps, "context_memberships_url", NRPS_CLAIM) or None,
            claims=claims,
        )

    def custom(self) -> Mapping:
        """The LMS's custom parameters for this link (an object, maybe empty)."""
        return self.claims.get(CUSTOM_CLAIM) or {}


def _not_a_resource_link(kind: object) -> str:
    if kind is None:
        return (
            f"this launch says no message type ({MESSAGE_TYPE_CLAIM} is missing): the hub "
            f"serves resource link launches ({RESOURCE_LINK_REQUEST}) only; {ASK}"
        )
    said = (
        f"this hub serves resource link launches ({RESOURCE_LINK_REQUEST}) only, and the LMS "
        f"sent {str(kind)!r}"
    )
    if kind == "LtiDeepLinkingRequest":
        return (
            said + ": the lab offers no content to pick (Deep Linking); add it to the course as an "
            "external tool link or assignment and open that"
        )
    return f"{said}; {ASK}"


def _malformed(claim: str, shape: str) -> str:
    return f"the launch's {claim} claim is not {shape}, as LTI 1.3 gives it: {ASK}"


def _object(claims: Mapping, claim: str, required: bool = False) -> Mapping:
    value = claims.get(claim)
    if value is None and not required:
        return {}
    if value is None:
        raise BadLaunch(
            f"this launch comes from outside a course (it has no {claim} claim): open the lab "
            "from its link on your course's page in the LMS"
            if claim == CONTEXT_CLAIM
            else f"the launch has no {claim} claim, which every resource link launch carries: {ASK}"
        )
    if not isinstance(value, Mapping):
        raise BadLaunch(_malformed(claim, "an object"))
    return value


def _text(claims: Mapping, name: str, within: str = "", required: bool = False) -> str:
    value = claims.get(name)
    where = f"{within}'s {name!r}" if within else name
    if value is None or (value == "" and not required):
        if required:
            raise BadLaunch(f"the launch has no {where} claim, which every launch carries: {ASK}")
        return ""
    if not isinstance(value, str) or not value:
        raise BadLaunch(_malformed(where, "a non-empty string"))
    return value


def _texts(claims: Mapping, name: str, within: str = "", required: bool = False) -> tuple:
    value = claims.get(name)
    where = f"{within}'s {name!r}" if within else name
    if value is None and not required:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadLaunch(_malformed(where, "a list of strings"))
    return tuple(value)
