"""A hub name maps to one Unix account and one only: distinct names (a trailing space, case,
a name that looks like another's mapped form) never share an account, every account name is one
useradd accepts, and an account of that name made for anyone else is refused. The hub refuses to
start where a person's server could not reach its Python or its home."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from viewcopy.hub.accounts import AccountTaken, ensure_user, lock_user, staff_group, unix_name
from viewcopy.hub.permissions import check_reachable

USERADD_NAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}")  # Debian's default NAME_REGEX, 32 at most

NAMES = [
    "alice", "Alice", "alice ", " alice", "vc-alice", "vc_alice", "a" * 29, "a" * 30,
    "alice@example.org", "alice_example.org", "staff-42-0123456789", "12345", "élodie",
    "x:y", "x,y", "x/y", "", "-", "_",
]  # fmt: skip


def test_hub_names_map_one_to_one_onto_names_useradd_accepts():
    mapped = {name: unix_name(name) for name in NAMES}
    assert len(set(mapped.values())) == len(NAMES), mapped
    for name, account in mapped.items():
        assert USERADD_NAME.fullmatch(account), (name, account)
    assert unix_name("alice") == "vc-alice"  # a safe name is kept, readable
    # no person's account is ever the course's groups or its lock service's
    assert {staff_group("view_or_copy"), lock_user("view_or_copy")}.isdisjoint(mapped.values())


def test_an_account_made_for_someone_else_is_refused():
    if os.geteuid() != 0:
        pytest.skip("making accounts needs root (CI runs these as root)")
    hub_name = f"t{uuid.uuid4().hex[:8]}"
    name = unix_name(hub_name)
    subprocess.run(["useradd", "--no-create-home", "--comment", "by hand", name], check=True)
    try:
        with pytest.raises(AccountTaken, match=f"{name} exists but is not the hub's account"):
            ensure_user(name, hub_name)
    finally:
        subprocess.run(["userdel", name], check=True)
    account = ensure_user(name, hub_name)  # free again: made, and found again the same
    try:
        assert ensure_user(name, hub_name) == account
        assert pwd.getpwnam(name).pw_uid == account.uid != 0
        with pytest.raises(AccountTaken):  # the same Unix name claimed for another hub name
            ensure_user(name, hub_name + " ")
    finally:
        subprocess.run(["userdel", name], check=True)


def test_a_state_folder_others_cannot_pass_is_refused_with_the_fix():
    base = Path(tempfile.mkdtemp())  # /tmp's own: others may pass (pytest's tmp_path is not)
    try:
        base.chmod(0o711)
        closed = base / "closed"
        (closed / "state").mkdir(parents=True)
        closed.chmod(0o700)
        with pytest.raises(ValueError, match=f"but {closed} is closed to other users .*chmod o"):
            check_reachable([closed / "state"])
        closed.chmod(0o711)
        check_reachable([closed / "state"])  # passes once every folder above may be passed
    finally:
        shutil.rmtree(base)
