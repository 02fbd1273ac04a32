"""environment.yml and pyproject.toml describe the same environment, and the package ships its
files that are not Python."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import tomllib
import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
ENVIRONMENT = yaml.safe_load((ROOT / "environment.yml").read_text())
CONDA_NAMES = {"torch": "pytorch"}


def pip_entries() -> list[str]:
    """What environment.yml asks pip for (a package conda-forge lacks, and the project)."""
    return next(e["pip"] for e in ENVIRONMENT["dependencies"] if isinstance(e, dict))


def conda_specs() -> dict[str, str]:
    """Every package environment.yml installs, by conda or by pip, and its version range."""
    specs = {}
    for entry in [*ENVIRONMENT["dependencies"], *pip_entries()]:
        if isinstance(entry, str) and entry != "-e .":
            name, spec = re.fullmatch(r"([\w-]+)\s*(.*)", entry).groups()
            specs[name] = spec.replace(" ", "")
    return specs


def test_every_runtime_course_and_hub_requirement_is_in_conda_with_the_same_range():
    extras = PROJECT["optional-dependencies"]
    wanted = [*PROJECT["dependencies"], *extras["course"], *extras["hub"]]
    expected = {}
    for text in wanted:
        requirement = Requirement(text)
        expected[CONDA_NAMES.get(requirement.name, requirement.name)] = ",".join(
            sorted(str(s) for s in requirement.specifier)
        )
    found = {name: ",".join(sorted(spec.split(","))) for name, spec in conda_specs().items()}
    assert {k: found.get(k) for k in expected} == expected
    # the hub's proxy: npm's package for pip installs (scripts/setup.sh), conda-forge's here
    assert set(found) - set(expected) == {"python", "pip", "configurable-http-proxy"}


def test_python_range_and_the_package_itself():
    assert conda_specs()["python"] == PROJECT["requires-python"]
    assert pip_entries()[-1] == "-e ."  # the project last, after what conda-forge lacks


def test_torch_is_a_range_not_a_pin():
    torch = next(Requirement(r) for r in PROJECT["dependencies"] if r.startswith("torch"))
    assert all(s.operator not in ("==", "===") for s in torch.specifier)


def test_console_script_points_at_a_callable():
    module, _, name = PROJECT["scripts"]["viewcopy"].partition(":")
    assert callable(getattr(importlib.import_module(module), name))


def test_the_package_data_covers_every_page_template():
    """A wheel ships each file of the nbgrader page templates (viewcopy.plugins.templates)."""
    globs = PYPROJECT["tool"]["setuptools"]["package-data"]["viewcopy.plugins.templates"]
    folder = ROOT / "src" / "viewcopy" / "plugins" / "templates"
    files = [
        path.relative_to(folder)
        for path in folder.rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc")
    ]
    assert files
    assert [f for f in files if not any(f.match(glob) for glob in globs)] == []


def readme_quick_start() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.strip().splitlines()]


def test_the_quick_start_is_two_commands_that_set_up_and_ci_runs_the_second():
    main_job, tests = readme_quick_start()
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert tests in ci
    for command, runs in ((main_job, "viewcopy demo"), (tests, "python -m pytest")):
        script = ROOT / command.split()[0]
        assert script.is_file() and script.stat().st_mode & 0o111, command
        lines = [line.strip() for line in script.read_text().splitlines()]
        assert "scripts/setup.sh" in lines, f"{command} must set up first"
        assert any(line.startswith(runs) for line in lines), command
