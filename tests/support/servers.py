"""Real servers the tests start on 127.0.0.1: the course lock service and PostgreSQL; and the
environment a Jupyter server a test starts runs in."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def lab_environment(home: Path) -> dict[str, str]:
    """This Python's bin first, outside autograde, with Jupyter's and IPython's state in `home`."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("NBGRADER_EXECUTION", None)
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        env[name] = str(home / name.lower())
    return env


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_service(data_dir: Path) -> tuple[subprocess.Popen, str]:
    """A real service process on a free port, once it answers its health check."""
    port = free_port()
    code = "from pathlib import Path; from viewcopy.locking.service import serve; "
    code += f"serve(Path({str(data_dir)!r}), port={port})"
    log = data_dir.parent / f"{data_dir.name}.log"
    with log.open("w") as output:
        process = subprocess.Popen([sys.executable, "-c", code], stdout=output, stderr=output)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        with contextlib.suppress(OSError):
            urllib.request.urlopen(f"{url}/v1/health", timeout=1).close()
            return process, url
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"the lock service did not start on {url}:\n{log.read_text()}")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# --- a real PostgreSQL server for gradebooks, started by the tests ------------------------------


def postgres_bin() -> Path | None:
    """The folder of PostgreSQL's server programs (Debian's `postgresql` package), if installed."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    return found[-1].parent if found else None


class Postgres:
    """A PostgreSQL server in a temporary folder on 127.0.0.1 (run as `postgres` when the tests
    run as root: the server refuses root), with trust authentication for the user `viewcopy`."""

    def __init__(self, bin_dir: Path):
        import pwd
        import tempfile

        self.bin = bin_dir
        self.folder = Path(tempfile.mkdtemp(prefix="viewcopy-pg-"))
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_user:
            owner = pwd.getpwnam("postgres")
            os.chown(self.folder, owner.pw_uid, owner.pw_gid)
        self.data, self.port = self.folder / "data", free_port()
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "viewcopy", "-E", "UTF8")
        options = f"-k {self.folder} -c listen_addresses=127.0.0.1 -p {self.port}"
        log = str(self.folder / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", log, "-w", "start")

    def _run(self, program: str, *args: str) -> None:
        command = [*self.as_user, str(self.bin / program), *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{program} failed: {done.stdout}{done.stderr}")

    def database(self, name: str) -> str:
        """A new, empty database: its SQLAlchemy URL."""
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "viewcopy", name)
        return f"postgresql+psycopg2://viewcopy@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)
