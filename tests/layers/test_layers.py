"""The layering of DESIGN section 2, read from the code: no import goes up the house, and the light packages never
import torch.

The layers, bottom to top: schemas <- provenance <- audit <- reports <- runner. Every ``import`` and ``from ...
import`` of every module counts, wherever it stands (a lazy import inside a function is still a dependency). The
one deliberate exception is DESIGN's: the ``audit`` CLI calls ``reports`` to render.

(This file is in tests/layers/, not tests/: a test module directly in tests/ puts tests/ on sys.path, where
tests/reports shadows the reports package.)
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
LAYERS = ("schemas", "provenance", "audit", "reports", "runner")
RANK = {name: rank for rank, name in enumerate(LAYERS)}
LIGHT = ("schemas", "provenance", "audit", "reports")
EXCEPTIONS = {("audit.cli", "reports")}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(source: str, module: str, *, is_package: bool) -> set[str]:
    """Every absolute module name ``source`` imports (relative imports resolved against ``module``)."""
    names: set[str] = set()
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                names.add(".".join([*base, node.module] if node.module else base))
            elif node.module:
                names.add(node.module)
    return names


def upward_imports(source: str, module: str, *, is_package: bool = False) -> list[str]:
    """The imports of ``module`` that go up the layers, as ``"module -> imported"`` lines."""
    own = RANK[module.partition(".")[0]]
    found = []
    for name in sorted(imported_modules(source, module, is_package=is_package)):
        top = name.partition(".")[0]
        if top in RANK and RANK[top] > own and (module, top) not in EXCEPTIONS:
            found.append(f"{module} -> {name}")
    return found


def package_modules(packages: tuple[str, ...]) -> list[Path]:
    return sorted(path for package in packages for path in (ROOT / package).rglob("*.py"))


def test_the_checker_finds_upward_imports_in_every_form() -> None:
    """Hand-written sources with a known answer: top-level, lazy, relative, and allowed imports."""
    source = (
        "import numpy\n"
        "import schemas.results\n"
        "from audit.metrics import eer\n"
        "def late():\n"
        "    import runner.cache\n"
        "from . import digests\n"
    )
    assert upward_imports(source, "provenance.manifest") == [
        "provenance.manifest -> audit.metrics",
        "provenance.manifest -> runner.cache",
    ]
    assert upward_imports("from ..audit import flags\n", "schemas.sub.mod") == []  # resolves to schemas.audit
    assert upward_imports("from .. import reports\n", "audit.sub.mod") == []  # resolves to audit
    assert upward_imports("from reports import write_report\n", "audit.cli") == []  # DESIGN's exception
    assert upward_imports("from reports import write_report\n", "audit.verify") == ["audit.verify -> reports"]
    assert upward_imports("from audit.metrics import eer\n", "runner.pipeline") == []
    assert imported_modules("from .digests import x\n", "provenance", is_package=True) == {"provenance.digests"}


def test_no_module_imports_up_the_layers() -> None:
    paths = package_modules(LAYERS)
    assert len(paths) > 50, "the packages were not found"
    found = []
    for path in paths:
        name = module_name(path)
        found += upward_imports(path.read_text(encoding="utf-8"), name, is_package=path.name == "__init__.py")
    assert found == [], "imports up the layers of DESIGN section 2:\n" + "\n".join(found)


def test_no_package_module_imports_a_command_line_module() -> None:
    """The CLIs are entry points: what the runner (``interbias reproduce``) needs of the audit is its public API
    (``audit.verify``, ``reports.finish_report``), never ``audit.cli``."""
    found = []
    for path in package_modules(LAYERS):
        name = module_name(path)
        imported = imported_modules(path.read_text(encoding="utf-8"), name, is_package=path.name == "__init__.py")
        found += [f"{name} -> {other}" for other in sorted(imported) if other.endswith(".cli") and other != name]
    assert found == []


def test_importing_every_light_module_does_not_import_torch() -> None:
    """A reviewer installs audit/schemas/provenance/reports without torch: no module of theirs may pull it in."""
    names = [module_name(path) for path in package_modules(LIGHT)]
    code = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.partition('.')[0] == 'torch'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
