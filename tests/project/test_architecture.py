"""The architecture ARCHITECTURE.md describes, enforced: imports point down the layers, nothing
imports in a cycle, the stable paths deployed courses name still resolve, tests stand alone, and
the project cites no document outside itself."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
from support.course_notebook import RELEASE_0_1_0, ROOT
from traitlets.config import Config

from viewcopy.plugins.answer_lines import WrapAnswerLines
from viewcopy.plugins.feedback import PartsWithScores
from viewcopy.plugins.handed_in_lock import KeepHandedInLock, PlaceHandedInLock
from viewcopy.plugins.sanitize import SanitizeForInstructor
from viewcopy.plugins.scoring_policy import PredictionScoring
from viewcopy.plugins.student_measurements import KeepStudentMeasurements

PACKAGE = ROOT / "src" / "viewcopy"
LAYERS = (
    "files",
    "engine",
    "sandbox",
    "locking",
    "exercise",
    "course",
    "display",
    "notebook",
    "plugins",
    "instructor",
    "grading",
    "report",
    "five",
    "lms",
    "demo",
    "hub",
    "cli",
)
"""Lowest first: a module may import its own layer and the layers before it, never after."""
STABLE = {
    "viewcopy.checks": "viewcopy.notebook.checks",
    "viewcopy.explorer": "viewcopy.display.explorer",
    "viewcopy.feedback": "viewcopy.plugins.feedback",
    "viewcopy.output_cap": "viewcopy.plugins.output_cap",
    "viewcopy.restore": "viewcopy.plugins.restore",
    "viewcopy.trusted": "viewcopy.plugins.trusted",
}
"""Top-level paths that released notebooks, gradebooks and deployed nbgrader_config.py name."""
DEPRECATED = {"viewcopy.feedback", "viewcopy.output_cap", "viewcopy.restore", "viewcopy.trusted"}
"""The stable paths of 0.1.0's config: they warn, naming viewcopy.plugins, until 1.0.0."""
DEEP_PATHS_CONFIG = ROOT / "tests" / "data" / "release_0.1.0+70cf16b" / "nbgrader_config.py"
"""A config deployed before `viewcopy.plugins` exported the plug-ins: it names their modules."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    relative = Path(*name.split("."))
    root = PACKAGE.parent
    return (root / relative).with_suffix(".py").is_file() or (root / relative).is_dir()


def imports(path: Path) -> set[str]:
    """Every viewcopy module `path` imports, at module level or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "viewcopy"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "viewcopy":
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if is_module(submodule) else node.module)
    return found


GRAPH = {module_name(p): imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def layer(name: str) -> int | None:
    """The layer's rank, None for the top-level stable surface."""
    parts = name.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def test_every_module_lives_in_a_layer_or_is_a_stable_path():
    loose = [m for m in GRAPH if layer(m) is None and m not in ("viewcopy", *STABLE)]
    assert loose == [], "put each module in the layer that owns it (ARCHITECTURE.md)"


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if layer(m) is not None))
def test_imports_point_down_the_layers(module):
    upward = [
        target for target in GRAPH[module] if layer(target) is None or layer(target) > layer(module)
    ]
    assert upward == [], (
        f"{module} ({LAYERS[layer(module)]}) imports {upward}: a layer imports only its own and "
        "lower layers, and never the top-level stable paths"
    )


def test_no_module_imports_in_a_cycle():
    def cycle_from(start: str, path: tuple[str, ...]) -> tuple[str, ...] | None:
        for target in GRAPH.get(path[-1], ()):
            if target == start:
                return (*path, target)
            if target not in path and (found := cycle_from(start, (*path, target))):
                return found
        return None

    cycles = [c for m in GRAPH if (c := cycle_from(m, (m,)))]
    assert cycles == []


def test_the_checker_sees_a_wrong_way_import(tmp_path):
    wrong = tmp_path / "wrong.py"
    wrong.write_text("def f():\n    from viewcopy.report.build import build_report\n")
    assert imports(wrong) == {"viewcopy.report.build"}
    assert layer("viewcopy.report.build") > layer("viewcopy.engine.measure")


@pytest.mark.parametrize(("stable", "home"), STABLE.items())
def test_stable_paths_are_the_layers_own_objects(stable, home):
    surface, module = importlib.import_module(stable), importlib.import_module(home)
    public = [n for n in dir(surface) if not n.startswith("_")]
    if stable in DEPRECATED:
        with pytest.warns(DeprecationWarning) as warned:
            found = {n: getattr(surface, n) for n in public}
        for name, warning in zip(public, warned, strict=True):
            assert str(warning.message) == (
                f"{stable} is deprecated and goes in viewcopy 1.0.0: import {name} from "
                f"viewcopy.plugins instead (from viewcopy.plugins import {name})"
            )
    else:
        found = {n: getattr(surface, n) for n in public}
    assert public and all(found[n] is getattr(module, n) for n in public)


def course_config(path: Path) -> Config:
    """What nbgrader makes of a course's nbgrader_config.py."""
    config = Config()
    namespace = {"get_config": lambda: config, "__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return config


def replaced() -> dict[type, type]:
    """Today's plug-in -> the nbgrader step it stands in place of, in the same position."""
    from nbgrader.preprocessors import SaveAutoGrades

    from viewcopy.plugins import KeepHandGrades

    return {KeepHandGrades: SaveAutoGrades}


def test_the_config_deployed_at_0_1_0_loads_the_same_plug_ins_as_todays():
    config = RELEASE_0_1_0 / "nbgrader_config.py"
    with pytest.warns(DeprecationWarning) as warned:
        deployed = course_config(config)
    today = course_config(ROOT / "nbgrader_config.py")
    # every deprecated path it names warns at the config's own line, naming the replacement
    assert {str(w.message).split(" is deprecated")[0] for w in warned} == DEPRECATED
    assert all(w.filename == str(config) for w in warned)
    assert all("from viewcopy.plugins import" in str(w.message) for w in warned)
    added = {  # since 0.1.0
        KeepHandedInLock,
        PlaceHandedInLock,
        PredictionScoring,
        WrapAnswerLines,
        SanitizeForInstructor,
        PartsWithScores,
        KeepStudentMeasurements,
    }
    for section, key in [
        ("Autograde", "sanitize_preprocessors"),
        ("Autograde", "autograde_preprocessors"),
        ("GenerateFeedback", "preprocessors"),
    ]:
        now = [replaced().get(step, step) for step in today[section][key] if step not in added]
        assert deployed[section][key] == now, (section, key)
    assert any(
        step.__module__ == "viewcopy.plugins.trusted"
        for step in deployed.Autograde["autograde_preprocessors"]
    )


def plug_ins_defined() -> dict[str, type]:
    """Every nbgrader plug-in class defined in viewcopy/plugins/ (and the sandbox layer's kernel
    manager, which plugins names), by name; not their common base (plugins/base.py)."""
    from jupyter_client import KernelManager
    from nbconvert.preprocessors import Preprocessor

    found = {}
    for path in sorted((PACKAGE / "plugins").glob("*.py")):
        if path.stem == "base":
            continue
        module = importlib.import_module(f"viewcopy.plugins.{path.stem}")
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, Preprocessor | KernelManager)
                and value.__module__ in (module.__name__, "viewcopy.sandbox.kernel_manager")
            ):  # the sandboxed kernel manager lives in the sandbox layer, named from plugins
                found[name] = value
    return found


def test_viewcopy_plugins_exports_every_plug_in_as_its_own_object():
    import viewcopy.plugins

    defined = plug_ins_defined()
    assert sorted(viewcopy.plugins.__all__) == sorted(defined)
    assert all(getattr(viewcopy.plugins, n) is cls for n, cls in defined.items())


def test_every_plug_in_takes_the_html_exporters_config_quietly(caplog):
    """`nbgrader generate_feedback`'s HTML exporter configures display_data_priority for every
    preprocessor it runs: no plug-in logs it as an option it does not know (each did, every run)."""
    import logging

    from nbconvert.exporters import HTMLExporter
    from nbconvert.preprocessors import Preprocessor

    config = HTMLExporter().default_config
    made = []
    with caplog.at_level(logging.WARNING):
        for cls in plug_ins_defined().values():
            if issubclass(cls, Preprocessor):
                made.append(cls(config=config).display_data_priority)
    assert len(made) >= 10 and "not recognized" not in caplog.text, caplog.text
    assert all(priority == config.NbConvertBase.display_data_priority for priority in made)


def test_the_course_config_names_only_the_plug_in_path():
    tree = ast.parse((ROOT / "nbgrader_config.py").read_text())
    named = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module.startswith("viewcopy")
    }
    assert named == {"viewcopy.plugins"}


def test_a_config_naming_the_plug_ins_deep_paths_loads_the_same_plug_ins():
    deep, today = (
        course_config(DEEP_PATHS_CONFIG),
        course_config(ROOT / "nbgrader_config.py"),
    )
    for section, key in [
        ("Autograde", "sanitize_preprocessors"),
        ("Autograde", "autograde_preprocessors"),
        ("GenerateFeedback", "preprocessors"),
    ]:
        # PartsWithScores and KeepStudentMeasurements were added after 0.1.0+70cf16b
        later = (PartsWithScores, KeepStudentMeasurements)
        now = [replaced().get(step, step) for step in today[section][key] if step not in later]
        assert deep[section][key] == now, (section, key)


def test_the_graded_cells_checks_are_on_the_stable_path():
    import viewcopy

    for check in ("prediction_credit", "rules_after_credit", "specificity_credit"):
        assert callable(getattr(viewcopy.checks, check))
    assert callable(viewcopy.checks.classify_credit) and callable(viewcopy.checks.the_twenty)


def test_no_test_module_imports_another():
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if "data" in path.relative_to(ROOT / "tests").parts:
            continue
        found = {
            a.name if isinstance(node, ast.Import) else node.module
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Import | ast.ImportFrom)
            for a in getattr(node, "names", [])
        }
        assert not {m for m in found if m and m.startswith("test_")}, path.name


def test_the_project_cites_no_document_outside_itself():
    outside = ("DESIGN" + " §", "DESIGN" + ".md", "../" + "shared")
    skip = {
        ".git",
        ".venv",
        ".torch-venvs",
        "demo_course",
        "artifacts",
        "__pycache__",
        ".pytest_cache",
    }
    for path in ROOT.rglob("*"):
        if path.is_file() and not skip & set(path.relative_to(ROOT).parts):
            text = path.read_text(errors="ignore") if path.stat().st_size < 5_000_000 else ""
            assert not [c for c in outside if c in text], path


def layer_modules(layer_name: str) -> list[Path]:
    return sorted((PACKAGE / layer_name).rglob("*.py"))


def test_the_engine_reads_no_item_of_the_lab():
    """ARCHITECTURE.md: the engine knows nothing of the lab's content and reads no item; an
    Evidence carries the label its caller gives."""
    readers = [
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path in layer_modules("engine")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr == "item"
        and isinstance(node.ctx, ast.Load) and path.name != "evidence.py"
    ]  # fmt: skip
    assert readers == []
    said = " ".join((PACKAGE / "engine" / "__init__.py").read_text().split())
    assert "no predictions, rules or grades, and it reads no item" in said


def loaded_by_name(path: Path) -> list[tuple[int, str]]:
    """(line, what) of each module `path` loads by a string name: import_module, __import__ or
    a fork server's preload."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name.endswith(("import_module", "set_forkserver_preload")) or name == "__import__":
                found.append((node.lineno, ast.unparse(node.args[0]) if node.args else ""))
    return found


BY_NAME = {
    "engine/version.py": "the stable paths' names and deprecated names, each from the map its "
    "module gives (an import would load them all at `import viewcopy`)",
    "sandbox/kernel_template.py": "what another process (the template) imports before it forks",
    "grading/worker.py": "what another process (the workers' fork server) imports before it forks",
    "__init__.py": "`viewcopy.checks`, a stable path module of its own, imported when first used",
}
"""Where a module is loaded by a string name, and why an import cannot serve there."""


def test_nothing_loads_a_module_by_name_where_an_import_serves():
    loads = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := loaded_by_name(path))
    }
    assert set(loads) == set(BY_NAME), loads
    from viewcopy.course.assignment import LAB_IMPORTS

    assert not set(LAB_IMPORTS) & set(STABLE), "the template pre-imports the layers' modules"


def test_the_packages_own_settings_are_read_in_one_place():
    """ARCHITECTURE.md: c.LockService, c.PredictionScoring, c.LmsPush and c.CourseDeclaration are
    read from a course's config by course.settings only."""
    from viewcopy.course.settings import SETTINGS

    sections = {section.__name__ for section in SETTINGS}
    readers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "course" / "settings.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if section_read(node) in sections:
                readers.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert readers == [], "read the course's settings through course.settings"


def section_read(node: ast.AST) -> str | None:
    """The section a node reads from a config (`config.X`, `config["X"]`, `config.get("X")`,
    on anything whose name says config), if it reads one."""
    if isinstance(node, ast.Attribute) and "config" in ast.unparse(node.value).lower():
        return node.attr
    if isinstance(node, ast.Subscript) and "config" in ast.unparse(node.value).lower():
        key = node.slice
        return key.value if isinstance(key, ast.Constant) else None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and "config" in ast.unparse(node.func.value).lower()
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ):
        return node.args[0].value
    return None


def test_the_settings_reader_check_sees_a_read_of_a_section():
    for source in (
        "self.config.LockService",
        'config["LmsPush"]',
        'course_config(c).get("LockService")',
    ):
        assert section_read(ast.parse(source, mode="eval").body) in {"LockService", "LmsPush"}
