"""Who is who: each LMS person (issuer and `sub`) bound to one hub name for good, in
`<course>/lms/people.json`.

A person is offered their `username_claim` made safe (`registration.hub_name`). The first launch
(or roster read) binds that name to them. A name already bound to someone else is never given
to a second person, however their ids compare: they get it with a stable suffix (a hash of their
issuer and sub), or, where even that is held, a refusal. Later launches, the roster and the
grade push read the binding, not the claim, so a person's name never moves. The hub name is
also the gradebook's student id and the Unix account's. An instructor sees and repairs bindings
with `viewcopy lms people`.

A course linked by an earlier release, which kept no bindings, starts from the people its
`link.json` recorded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from viewcopy.files.atomic import write_atomically
from viewcopy.files.exclusive import exclusively
from viewcopy.lms.registration import SAFE_NAME, hub_name

PEOPLE_FILE, LOCK_FILE = "people.json", ".people.lock"
BY_LAUNCH, BY_ROSTER, BY_INSTRUCTOR = "launch", "roster", "instructor"
BY_EARLIER_RELEASE = "link.json (an earlier release)"
SUFFIXES = (8, 16, 24)
"""Hex digits of the stable suffix tried, in turn, for a name someone else holds."""


class NameTaken(ValueError):
    """A name that stays another person's: the sentence names its holder and the fix."""


@dataclass(frozen=True)
class Binding:
    """One person's hub name: their LMS `issuer` and `sub`, since when and by what."""

    issuer: str
    sub: str
    name: str
    bound: str
    by: str

    def describe(self) -> str:
        return f"{self.name}: {self.sub!r} of {self.issuer} (bound {self.bound}, by {self.by})"


@dataclass(frozen=True)
class People:
    """The course's bindings: one name per person, one person per name."""

    bindings: tuple[Binding, ...] = ()

    @classmethod
    def read(cls, folder: Path) -> People:
        """The bindings in a course's lms/ folder; an earlier release's link.json people where
        there are none yet; ValueError naming the file where it cannot be read."""
        path = folder / PEOPLE_FILE
        if not path.is_file():
            return _from_earlier_release(folder)
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))["people"]
            return cls(tuple(Binding(**row) for row in rows))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(
                f"{path} cannot be read ({exc!r}): restore it from a backup (it says which LMS "
                "person each hub name is)"
            ) from None

    def write(self, folder: Path) -> None:
        rows = [vars(b) for b in sorted(self.bindings, key=lambda b: b.name)]
        write_atomically(
            folder / PEOPLE_FILE, json.dumps({"people": rows}, indent=2) + "\n", mode=0o600
        )

    def of(self, issuer: str, sub: str) -> Binding | None:
        return next((b for b in self.bindings if (b.issuer, b.sub) == (issuer, sub)), None)

    def holder(self, name: str) -> Binding | None:
        return next((b for b in self.bindings if b.name == name), None)

    def sub_of(self, name: str) -> str | None:
        """The LMS user id bound to hub name `name`, None if no one holds it."""
        held = self.holder(name)
        return held.sub if held else None

    def bound(self, issuer: str, sub: str, offered: str, by: str) -> People:
        """These bindings with the person bound: to their name if they have one, else to the
        name `offered` (their claim), or to it with their stable suffix where another holds it.
        NameTaken where every such name is held (only ids made to collide get there)."""
        if self.of(issuer, sub) is not None:
            return self
        preferred = hub_name(offered)
        digest = hashlib.sha256(f"{issuer}\0{sub}".encode()).hexdigest()
        for name in (preferred, *(_suffixed(preferred, digest[:n]) for n in SUFFIXES)):
            if self.holder(name) is None:
                return self._with(Binding(issuer, sub, name, _now(), by))
        raise NameTaken(
            f"every hub name for {sub!r} of {issuer} ({preferred} and its suffixed forms) is held "
            "by someone else: the course's instructor binds one with `viewcopy lms people bind`"
        )

    def rebound(self, issuer: str, sub: str, name: str) -> People:
        """The person bound to `name` (an instructor's repair); NameTaken where another holds it."""
        if not SAFE_NAME.fullmatch(name):
            raise NameTaken(
                f"{name!r} is not a hub name: lowercase letters, digits, '.', '_' and '-', "
                "64 at most, starting with a letter or digit"
            )
        held = self.holder(name)
        if held is not None and (held.issuer, held.sub) != (issuer, sub):
            raise NameTaken(
                f"{held.describe()}: release it first (`viewcopy lms people release {name}`), "
                "and that person gets a new name at their next launch"
            )
        kept = tuple(b for b in self.bindings if (b.issuer, b.sub) != (issuer, sub))
        return replace(self, bindings=(*kept, Binding(issuer, sub, name, _now(), BY_INSTRUCTOR)))

    def released(self, name: str) -> People:
        """The bindings without `name`'s; NameTaken (saying so) where no one holds it."""
        if self.holder(name) is None:
            raise NameTaken(f"no one holds the hub name {name!r}: nothing to release")
        return replace(self, bindings=tuple(b for b in self.bindings if b.name != name))

    def _with(self, binding: Binding) -> People:
        return replace(self, bindings=(*self.bindings, binding))


def bind(folder: Path, issuer: str, sub: str, offered: str, by: str) -> str:
    """The hub name of `sub` of `issuer`, bound now if they had none (people.json rewritten)."""
    people = change(folder, lambda people: people.bound(issuer, sub, offered, by))
    return people.of(issuer, sub).name


def change(folder: Path, how: Callable[[People], People]) -> People:
    """Read, change (`how`) and write the course's bindings, one writer at a time."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    with exclusively(folder / LOCK_FILE):
        before = People.read(folder)
        after = how(before)
        if after != before or not (folder / PEOPLE_FILE).exists():
            after.write(folder)
    return after


def _suffixed(name: str, suffix: str) -> str:
    return f"{name[: 63 - len(suffix)].rstrip('-._')}-{suffix}"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _from_earlier_release(folder: Path) -> People:
    """The people an earlier release's link.json recorded, each bound to the name they had."""
    from viewcopy.lms.link import CourseLink

    link = CourseLink.read(folder)
    if link is None:
        return People()
    return People(
        tuple(
            Binding(link.issuer, person.sub, name, link.updated, BY_EARLIER_RELEASE)
            for name, person in sorted(link.people.items())
        )
    )
