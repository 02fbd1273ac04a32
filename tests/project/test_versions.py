"""Released versions: one semantic version, pyproject.toml's, which the installed package and
`viewcopy --version` report (without torch); a CHANGELOG for instructors that describes it first,
names every earlier landing by a commit that exists and every frozen fixture by its release; and
scripts/release.sh, which refuses a dirty tree, a tag that exists and an undescribed version, and
otherwise checks release/, builds the wheel and tags."""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib
from support.course_notebook import ROOT
from support.without_heavy import viewcopy_without_heavy, without_heavy

import viewcopy

VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")
CHANGELOG = (ROOT / "CHANGELOG.md").read_text()
RELEASES = [r for r in re.findall(r"^## (\S+)", CHANGELOG, re.M) if r != "Unreleased"]
"""The CHANGELOG's releases, newest first (above them, `## Unreleased` says what the next adds)."""
LANDINGS = re.findall(r"^### 0\.1\.0\+([0-9a-f]{7,40}) ", CHANGELOG, re.M)
"""The landings before versions, by their last commit, newest first."""


IDENTITY = {
    "GIT_AUTHOR_NAME": "release test",
    "GIT_AUTHOR_EMAIL": "release@example.org",
    "GIT_COMMITTER_NAME": "release test",
    "GIT_COMMITTER_EMAIL": "release@example.org",
}
"""Who commits and tags in a clone (a machine may have no git identity)."""


def git(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, **IDENTITY}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)


def test_the_version_is_semantic_and_the_installed_package_reports_it():
    assert SEMVER.fullmatch(VERSION), VERSION
    installed = importlib.metadata.version("viewcopy")
    assert installed == VERSION, (
        f"the installed package says {installed}, pyproject.toml {VERSION}: run scripts/setup.sh"
    )
    assert viewcopy.__version__ == VERSION


def test_the_version_is_written_in_one_place():
    """No module's code spells the version (its docs may): each reads the package's metadata
    (engine.version)."""
    spelled = []
    for path in (ROOT / "src").rglob("*.py"):
        tree = ast.parse(path.read_text())
        docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        spelled += [
            f"{path.relative_to(ROOT)}:{node.lineno}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value == VERSION and id(node) not in docs
        ]
    assert spelled == []


def test_viewcopy_version_prints_it_without_torch_pandas_or_matplotlib():
    done = viewcopy_without_heavy("--version")
    assert (done.returncode, done.stdout, done.stderr) == (0, f"viewcopy {VERSION}\n", "")


def test_the_versions_and_the_deprecated_paths_load_without_torch_pandas_or_matplotlib():
    done = without_heavy(
        "import viewcopy.grading.versions\n"
        "from viewcopy.trusted import TrustedCredit\n"
        "print(viewcopy.__version__)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{VERSION}\n"


def test_the_changelog_describes_this_version_first_and_releases_newest_first():
    assert RELEASES[0] == VERSION
    versions = [tuple(int(n) for n in SEMVER.fullmatch(r).groups()) for r in RELEASES[:-1]]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    for section in ("**Grading.**", "**A course must change.**", "**Earlier hand-ins.**"):
        assert section in CHANGELOG.split(f"## {VERSION}", 1)[1].split("\n## ", 1)[0]


def test_the_changelog_names_each_landing_by_a_commit_of_this_history_oldest_last():
    if git("rev-parse", "--is-shallow-repository").stdout.strip() != "false":
        pytest.skip("needs the whole git history (not a shallow clone, not an archive)")
    assert len(LANDINGS) == 10 and LANDINGS[-1] == "16c8ef1"  # the first release, then nine
    for commit in LANDINGS:
        found = git("rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
        assert found.returncode == 0, f"CHANGELOG names {commit}, which is not in the history"
    for older, newer in zip(LANDINGS[1:], LANDINGS[:-1], strict=True):
        assert git("merge-base", "--is-ancestor", older, newer).returncode == 0, (older, newer)
    assert git("merge-base", "--is-ancestor", LANDINGS[0], "HEAD").returncode == 0


def test_every_tag_is_a_release_the_changelog_describes():
    tags = git("tag", "--list", "v*").stdout.split()
    assert [t for t in tags if t.removeprefix("v") not in RELEASES] == []


def test_each_frozen_release_is_named_by_a_release_of_the_changelog():
    frozen = sorted(p.name for p in (ROOT / "tests" / "data").glob("release_*"))
    assert frozen == ["release_0.1.0", "release_0.1.0+70cf16b"]
    for name in frozen:
        assert f"`tests/data/{name}" in CHANGELOG, name
    assert "### 0.1.0+9440a36 " in CHANGELOG and "### 0.1.0+70cf16b " in CHANGELOG


def test_the_changelog_s_links_resolve():
    links = re.findall(r"\]\(([^)\s]+)\)", CHANGELOG)
    local = [link.partition("#")[0] for link in links if not re.match(r"[a-z]+:", link)]
    assert local and [link for link in local if not (ROOT / link).exists()] == []


@pytest.fixture
def clone(tmp_path) -> Path:
    """This repository's history in a fresh clone, with the checkout's release script, CHANGELOG
    and pyproject.toml committed on top: a clean tree to release from."""
    if not (ROOT / ".git").exists():
        pytest.skip("needs the git repository")
    folder = tmp_path / "clone"
    assert git("clone", "--quiet", "--local", str(ROOT), str(folder), cwd=tmp_path).returncode == 0
    for name in ("scripts/release.sh", "CHANGELOG.md", "pyproject.toml"):
        shutil.copy2(ROOT / name, folder / name)
    git("add", "-A", cwd=folder)
    assert git("commit", "--quiet", "--allow-empty", "-m", "release", cwd=folder).returncode == 0
    return folder


def release(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **IDENTITY, "PYTHON": sys.executable}
    return subprocess.run(
        [str(folder / "scripts" / "release.sh"), *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_release_refuses_uncommitted_changes_and_writes_nothing(clone):
    (clone / "README.md").write_text("changed\n")
    done = release(clone)
    assert done.returncode == 1 and "uncommitted changes" in done.stderr
    assert not (clone / "dist").exists() and git("tag", cwd=clone).stdout == ""


def test_release_refuses_a_tag_that_exists(clone):
    git("tag", f"v{VERSION}", cwd=clone)
    done = release(clone)
    assert done.returncode == 1 and f"tag v{VERSION} exists" in done.stderr
    assert not (clone / "dist").exists()


def test_release_refuses_a_version_the_changelog_does_not_describe(clone):
    text = (clone / "CHANGELOG.md").read_text().replace(f"## {VERSION} ", "## 0.0.1 ")
    (clone / "CHANGELOG.md").write_text(text)
    git("commit", "--quiet", "-am", "no section", cwd=clone)
    done = release(clone)
    assert done.returncode == 1 and f"no section '## {VERSION}'" in done.stderr


@pytest.mark.slow
def test_release_checks_release_builds_the_wheel_and_tags_once(clone):
    done = release(clone)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout  # release/ is what the master generates
    head = git("rev-parse", "HEAD", cwd=clone).stdout
    assert git("rev-parse", f"v{VERSION}^{{commit}}", cwd=clone).stdout == head
    wheel = clone / "dist" / f"viewcopy-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as built:
        metadata = built.read(f"viewcopy-{VERSION}.dist-info/METADATA").decode()
    assert f"\nVersion: {VERSION}\n" in metadata
    assert git("status", "--porcelain", cwd=clone).stdout == ""  # the build leaves it clean
    again = release(clone)
    assert again.returncode == 1 and "exists" in again.stderr


def test_the_playground_notebooks_old_diagram_path_warns_and_is_the_diagrams_own():
    import viewcopy.display.draw
    from viewcopy.display import diagram

    for name in ("Diagram", "render_svg"):
        with pytest.warns(
            DeprecationWarning, match=rf"display\.draw\.{name} is deprecated.*1\.0\.0"
        ):
            assert getattr(viewcopy.display.draw, name) is getattr(diagram, name)
