"""Publishing a file whole: a reader sees the old file or the new one, never half of one, and two
writers of the same file never share a temporary name (the last rename wins, whole).

The bytes go to a temporary file with a unique name in the same folder (a rename is atomic only
within one file system), are flushed and `fsync`ed, then renamed over the target, and the folder
is `fsync`ed so the rename survives a crash. Standard library only: the lock client, which runs in
students' kernels, uses it too.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomically(path: Path | str, data: bytes | str, *, mode: int | None = None) -> Path:
    """Publish `data` (text is written as UTF-8) as `path`, whole; its folder is made if missing.
    `mode`: the file's permissions (default: 0o666 less the umask, as `open` gives)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    descriptor, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".partial"
    )
    try:
        with os.fdopen(descriptor, "wb") as sink:
            sink.write(payload)
            sink.flush()
            os.fsync(sink.fileno())
        os.chmod(temporary, _default_mode() if mode is None else mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    _sync_folder(path.parent)
    return path


def link_atomically(path: Path | str, target: str) -> Path:
    """Make `path` a symbolic link to `target`, replacing what was there in one rename: a reader
    finds the old entry or the new link, never none."""
    path = Path(path)
    staged = path.with_name(f".{path.name}.{os.urandom(6).hex()}.partial")
    os.symlink(target, staged)
    try:
        os.replace(staged, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staged)
        raise
    return path


def _default_mode() -> int:
    """What `open` gives a new file: 0o666 less the process's umask (mkstemp gives 0o600). Read
    from /proc where Linux shows it: setting the umask to read it races other threads' files."""
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
