"""Publishing a file whole: a reader sees the old file or the new one, never half of one, and two
writers of the same file never share a temporary name (the last rename wins, whole).

The bytes go to a temporary file with a unique name in the same folder (a rename is atomic only
within one file system), created with the file's own mode (never more open than it, not for an
instant: a secret's temporary is its owner's alone from the start), flushed and `fsync`ed, then
renamed over the target, and the folder is `fsync`ed so the rename survives a crash.
`write_once` publishes with a hard link instead, which never replaces: the first file made is
the file, for good (keys, secrets, ids). Standard library only: the lock client, which runs in
students' kernels, uses it too.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def write_atomically(path: Path | str, data: bytes | str, *, mode: int | None = None) -> Path:
    """Publish `data` (text is written as UTF-8) as `path`, whole; its folder is made if missing.
    `mode`: the file's permissions (default: 0o666 less the umask, as `open` gives)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _replace(_staged(path, data, mode), path)
    _sync_folder(path.parent)
    return path


def write_once(path: Path | str, data: bytes | str, *, mode: int | None = None) -> bool:
    """Publish `data` (text is written as UTF-8) as `path`, whole, only if nothing is there yet;
    its folder is made if missing. True when this call made the file; False when `path` already
    existed (or another writer's file got there first), which is then left as it was: a file
    written once is never replaced. `mode`: as for `write_atomically`; the file never has more
    permissions than it, not even while it is written."""
    path = Path(path)
    if os.path.lexists(path):
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = _staged(path, data, mode)
    try:
        os.link(temporary, path)  # never replaces: FileExistsError where a file got there first
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
    _sync_folder(path.parent)
    return True


def _staged(path: Path, data: bytes | str, mode: int | None) -> str:
    """A new temporary file beside `path` holding `data`, flushed and `fsync`ed, with `mode`
    (None: what `open` gives) from its creation: made with it (the umask can only take
    permissions away) and set exactly before a byte is written, so it is never more open."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    final = _default_mode() if mode is None else mode
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        temporary = _temporary_name(path)
        try:
            descriptor = os.open(temporary, flags, final)
        except FileExistsError:
            continue  # another writer's temporary has that name: draw another
        break
    try:
        with os.fdopen(descriptor, "wb") as sink:
            os.fchmod(sink.fileno(), final)  # exactly `mode`, whatever the umask took from it
            sink.write(payload)
            sink.flush()
            os.fsync(sink.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    return temporary


def link_atomically(path: Path | str, target: str) -> Path:
    """Make `path` a symbolic link to `target`, replacing what was there in one rename: a reader
    finds the old entry or the new link, never none."""
    path = Path(path)
    staged = _temporary_name(path)
    os.symlink(target, staged)
    _replace(staged, path)
    return path


def _temporary_name(path: Path) -> str:
    """A name beside `path` for what is staged to replace it, unlikely to be any other's."""
    return str(path.with_name(f".{path.name}.{os.urandom(6).hex()}.partial"))


def _replace(staged: str, path: Path) -> None:
    """`staged` renamed over `path` in one step; removed instead where the rename fails."""
    try:
        os.replace(staged, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staged)
        raise


def _default_mode() -> int:
    """What `open` gives a new file: 0o666 less the process's umask. Read from /proc where
    Linux shows it: setting the umask to read it races other threads' files."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        status = Path("/proc/self/status").read_text().splitlines()
        return 0o666 & ~int(next(s for s in status if s.startswith("Umask:")).split()[1], 8)
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def _sync_folder(folder: Path) -> None:
    """Make the rename durable: fsync the folder (where the platform allows opening one)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(descriptor)
    finally:
        os.close(descriptor)


def publish_folder(staged: Path | str, folder: Path | str) -> Path:
    """Move the whole folder `staged` to `folder` (which must not exist) in one rename, durably:
    a reader sees no folder or the whole one."""
    folder = Path(folder)
    os.rename(staged, folder)
    _sync_folder(folder.parent)
    return folder


def replace_folder(staged: Path | str, folder: Path | str, aside: Path | str) -> Path:
    """Put the whole folder `staged` in `folder`'s place: an existing `folder` is first renamed
    to `aside` (a reader between the two renames, for microseconds, finds none), then `staged`
    published there; `aside` is the caller's to remove."""
    with contextlib.suppress(FileNotFoundError):
        os.rename(folder, aside)
    return publish_folder(staged, folder)
