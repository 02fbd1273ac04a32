"""JupyterLab on loopback and the notebook as Chromium shows it, for tests that act as a student.

No viewcopy logic here: starting and stopping the server, and finding cells and outputs in the page.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Browser, Locator, Page, expect, sync_playwright
from support.chromium import CHROMIUM, CHROMIUM_ARGS
from support.course_notebook import ROOT
from support.servers import free_port, lab_environment

# No "official Jupyter news?" prompt over the page, and JupyterLab 4's default windowing mode named
# explicitly: it keeps every cell in the page (the "full" mode detaches cells scrolled out of view).
USER_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false"},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "contentVisibility"},
}
# Error and stderr outputs, as JupyterLab marks them.
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
KERNEL_MS = 600_000
"""How long a notebook's kernel may take: the whole notebook on a busy two-core machine (torch
imported, the twenty measured)."""


@dataclass(frozen=True)
class JupyterLab:
    """A running JupyterLab server serving `root`, its Jupyter state in `home`."""

    process: subprocess.Popen
    port: int
    token: str
    root: Path
    home: Path

    def url(self, notebook: str, workspace: str | None = None) -> str:
        """The notebook (relative to the root) opened in JupyterLab; in a workspace of its own when
        named (the default workspace reopens every notebook a page before left open)."""
        where = "lab" if workspace is None else f"lab/workspaces/{workspace}"
        return f"http://127.0.0.1:{self.port}/{where}/tree/{notebook}?token={self.token}"

    def ready(self) -> bool:
        try:
            self.api("GET", "status")
            return True
        except (urllib.error.URLError, OSError):
            return False

    def api(self, method: str, path: str, body: dict | None = None) -> dict | None:
        """One call of the server's REST API, its JSON answer (None when it has no body)."""
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/api/{path}",
            data=None if body is None else json.dumps(body).encode(),
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
        with direct.open(request, timeout=60) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    def open_notebook(self, path: str) -> tuple[str, str]:
        """Open the notebook at `path` (relative to the root) as JupyterLab does: a session with
        a new kernel, started by the server for that notebook. (session id, kernel id)."""
        body = {"path": path, "name": Path(path).name, "type": "notebook",
                "kernel": {"name": "python3"}}  # fmt: skip
        session = self.api("POST", "sessions", body)
        return session["id"], session["kernel"]["id"]

    def close_notebook(self, session_id: str) -> None:
        """Close the session and shut its kernel down."""
        self.api("DELETE", f"sessions/{session_id}")

    def close_notebooks_in(self, folder: Path) -> None:
        """Close every session of a notebook in `folder` (under the root): their kernels stop."""
        for session in self.api("GET", "sessions"):
            if (self.root / session["path"]).parent == folder:
                self.close_notebook(session["id"])

    def use_settings(self, overrides: dict[str, dict] | None = None) -> None:
        """The user settings of the pages loaded from now on (the server reads them at each page
        load): USER_SETTINGS, each plugin in `overrides` replaced. Called with none, it puts back
        USER_SETTINGS alone, dropping what a page saved (a theme picked from the palette)."""
        folder = self.home / "user-settings"
        shutil.rmtree(folder, ignore_errors=True)
        write_user_settings(folder, {**USER_SETTINGS, **(overrides or {})})

    def stop(self) -> None:
        """SIGTERM (the server shuts its kernels down), then SIGKILL if it hangs."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)


def write_user_settings(folder: Path, settings: dict[str, dict] = USER_SETTINGS) -> None:
    for plugin, values in settings.items():
        path = folder / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def start_jupyterlab(root: Path, home: Path, log: Path, timeout: float = 180) -> JupyterLab:
    """Start JupyterLab on a free loopback port with a fresh token; wait until it answers."""
    write_user_settings(home / "user-settings")
    port, token = free_port(), secrets.token_hex(16)
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--allow-root",
        "--no-browser",
        "--ServerApp.open_browser=False",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={home / 'user-settings'}",
        f"--LabApp.workspaces_dir={home / 'workspaces'}",
    ]
    with log.open("w") as sink:
        process = subprocess.Popen(
            command, cwd=root, env=lab_environment(home), stdout=sink, stderr=subprocess.STDOUT
        )
    lab = JupyterLab(process, port, token, root, home)
    deadline = time.monotonic() + timeout
    while not lab.ready():
        if process.poll() is not None or time.monotonic() > deadline:
            lab.stop()
            tail = "\n".join(log.read_text().splitlines()[-20:])
            raise RuntimeError(f"JupyterLab did not start (exit {process.poll()}):\n{tail}")
        time.sleep(0.5)
    return lab


EXPECT_MS = 60_000
"""How long `expect` waits, unless a module's pages are slower to answer (`patient`)."""


def launch_chromium(request) -> Browser:
    """Debian's Chromium, headless, closed when the requesting fixture's scope ends; `expect`
    waits up to EXPECT_MS. One a process: a second sync Playwright started inside the first's
    event loop fails, so the session's one (conftest's `chromium`) serves every test."""
    playwright = sync_playwright().start()
    request.addfinalizer(playwright.stop)
    chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    request.addfinalizer(chromium.close)
    expect.set_options(timeout=EXPECT_MS)
    return chromium


@contextlib.contextmanager
def patient(timeout_ms: float) -> Iterator[None]:
    """`expect` waits up to `timeout_ms` inside (a hub's pages answer slower), EXPECT_MS after."""
    expect.set_options(timeout=timeout_ms)
    try:
        yield
    finally:
        expect.set_options(timeout=EXPECT_MS)


def artifacts(name: str) -> Path:
    """artifacts/<name>/, emptied: what is there after a run is that run's."""
    folder = ROOT / "artifacts" / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def at(notebook, grade_id: str) -> int:
    """The index of the notebook's cell with this nbgrader grade_id."""
    ids = [c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in notebook.cells]
    return ids.index(grade_id)


def cell(page: Page, index: int) -> Locator:
    """The notebook's cell at `index` (JupyterLab numbers every cell it lays out)."""
    return page.locator(f'.jp-Notebook-cell[data-windowed-list-index="{index}"]')


def output_area(page: Page, index: int) -> Locator:
    """Everything the cell at `index` printed or displayed."""
    return cell(page, index).locator(".jp-Cell-outputArea")


def keep_console(page: Page, log: Path) -> None:
    """Write the page's console messages and uncaught errors to `log` as they come."""
    log.write_text("")

    def keep(line: str) -> None:
        with log.open("a") as sink:
            sink.write(line + "\n")

    page.on("console", lambda message: keep(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: keep(f"pageerror: {error}"))


def wait_idle(page: Page, timeout_ms: float) -> None:
    """No cell is queued or running, and the status bar says the kernel is connected and idle.

    (Not the toolbar's execution indicator: it says idle before the kernel is connected, and
    Run All Cells clicked then runs nothing.)
    """
    expect(page.locator(".jp-InputPrompt", has_text="[*]")).to_have_count(0, timeout=timeout_ms)
    kernel = page.locator('.jp-StatusBar-TextItem[title^="Change kernel"]')
    expect(kernel).to_have_text(re.compile(r"\| Idle$"), timeout=timeout_ms)


def run_all(page: Page, last: int, timeout_ms: float) -> None:
    """Run > Run All Cells and wait until it ends; AssertionError with what the page shows on
    stderr if the cell at `last` has no output then (a cell failed and Run All stopped there)."""
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    finished = output_area(page, last).locator(".jp-OutputArea-output").first
    running = page.locator(".jp-InputPrompt", has_text="[*]").first
    expect(running.or_(finished).first).to_be_attached()
    wait_idle(page, timeout_ms)
    try:
        expect(finished).to_be_attached(timeout=10_000)
    except AssertionError as early:
        shown = page.locator(STDERR).all_text_contents()
        raise AssertionError(
            f"Run All stopped before the last cell; stderr: {shown[:2]}"
        ) from early


def run_cell(page: Page, index: int) -> None:
    """Select the cell at `index` by its prompt and press Shift+Enter (it runs, or is queued)."""
    cell(page, index).locator(".jp-InputArea-prompt").click()
    page.keyboard.press("Shift+Enter")


def replace_source(page: Page, index: int, source: str) -> None:
    """Select all of a cell's text in its editor and type `source` over it (as one paste)."""
    cell(page, index).locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(source)
    page.keyboard.press("Escape")


def screenshot(page: Page, target: Locator, path: Path) -> None:
    """What the notebook shows of `target` scrolled to its top (cut where a student scrolls)."""
    target.evaluate("node => node.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)  # the notebook settles after a scroll (JupyterLab lays out lazily)
    target.evaluate("node => node.scrollIntoView({block: 'start'})")
    box = target.bounding_box()
    window = page.locator(".jp-NotebookPanel-notebook").bounding_box()
    top = max(box["y"], window["y"])
    bottom = min(box["y"] + box["height"], window["y"] + window["height"])
    page.screenshot(
        path=path, clip={"x": box["x"], "y": top, "width": box["width"], "height": bottom - top}
    )
