"""The layering of DESIGN section 2, read from the code: no import goes up the house, imports between packages go
through their faces, and the light packages never import torch.

The layers, bottom to top: schemas <- provenance <- audit <- reports <- runner; inside ``audit`` its wings,
metrics <- table <- bundle <- statistics <- result <- scores | verify <- _cli <- cli (``scores`` and ``verify``
are peers: neither imports the other); inside ``runner`` the ground (cache, stages, container) <- encoders <-
operators <- corpora <- design <- plan <- scoring | execution <- pipeline | rehearsal <- reproduce | grid <- _cli
<- cli.
No module imports itself back through a circle of imports. An import of another top-level package, or of another
audit wing, names a face (a package's ``__init__``), never a module behind it, and never a private (``_``) module;
no module imports the face of a package it belongs to.

Every ``import`` and ``from ... import`` of every module counts, wherever it stands (a lazy import inside a
function is still a dependency). The one deliberate exception is DESIGN's: the ``audit`` CLI calls ``reports``
to render.

(This file is in tests/layers/, not tests/: a test module directly in tests/ puts tests/ on sys.path, where
tests/reports shadows the reports package.)
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
LAYERS = ("schemas", "provenance", "audit", "reports", "runner")
RANK = {name: rank for rank, name in enumerate(LAYERS)}
LIGHT = ("schemas", "provenance", "audit", "reports")
# DESIGN's exception: the audit command line (audit.cli and the modules of audit._cli) calls reports to render.
EXCEPTIONS = {("audit.cli", "reports"), ("audit._cli", "reports")}
# Each package's wings in order: a module may import its own wing and the wings ranked below it, never a peer (same
# rank) or a wing above.
WINGS = {
    "audit": {
        "audit.metrics": 0,
        "audit.table": 1,
        "audit.bundle": 2,
        "audit.statistics": 3,
        "audit.result": 4,
        "audit.scores": 5,
        "audit.verify": 5,
        "audit.attestation": 5,
        "audit._cli": 6,
        "audit.cli": 7,
        "audit.__main__": 8,
    },
    "runner": {
        "runner.cache": 0,
        "runner.stages": 0,
        "runner.container": 0,
        "runner.encoders": 1,
        "runner.operators": 2,
        "runner.corpora": 3,
        "runner.design": 4,
        "runner.config": 5,  # deprecated paths over the design wing, until 0.2
        "runner.designs": 5,
        "runner.plan": 5,
        "runner.scoring": 6,
        "runner.execution": 6,
        "runner.pipeline": 7,
        "runner.rehearsal": 7,
        "runner.grid": 8,  # the second synthetic bundle, sealed by the rehearsal's writer
        "runner.reproduce": 8,
        "runner._cli": 9,
        "runner.cli": 10,
        "runner.__main__": 11,
    },
}
# The audit's wings that other wings import through their faces; every top-level package's face is one for the
# other packages.
FACED_WINGS = ("audit.metrics", "audit.table", "audit.bundle", "audit.statistics", "audit.scores")


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


def excepted(module: str, top: str) -> bool:
    """Whether ``module`` importing the layer ``top`` is one of the deliberate EXCEPTIONS."""
    return any((module == owner or module.startswith(owner + ".")) and top == layer for owner, layer in EXCEPTIONS)


def upward_imports(source: str, module: str, *, is_package: bool = False) -> list[str]:
    """The imports of ``module`` that go up the layers, as ``"module -> imported"`` lines."""
    own = RANK[module.partition(".")[0]]
    found = []
    for name in sorted(imported_modules(source, module, is_package=is_package)):
        top = name.partition(".")[0]
        if top in RANK and RANK[top] > own and not excepted(module, top):
            found.append(f"{module} -> {name}")
    return found


def wing_of(module: str) -> str | None:
    """The wing a module belongs to (``audit.table.checks`` -> ``audit.table``, ``runner.plan.records`` ->
    ``runner.plan``); None for a package's face itself or outside the winged packages."""
    wing = ".".join(module.split(".")[:2])
    return wing if wing in WINGS.get(module.partition(".")[0], {}) else None


def wing_violations(source: str, module: str, *, is_package: bool = False) -> list[str]:
    """The imports of a winged module that go up its package's wings, or sideways to a peer, as ``"module ->
    imported"``."""
    own = wing_of(module)
    if own is None:
        return []
    wings = WINGS[module.partition(".")[0]]
    found = []
    for name in sorted(imported_modules(source, module, is_package=is_package)):
        other = wing_of(name)
        if other in wings and other != own and wings[other] >= wings[own]:
            found.append(f"{module} -> {name}")
    return found


def face_violations(source: str, module: str, *, is_package: bool, packages: set[str]) -> list[str]:
    """The imports of ``module`` that reach behind a face: a module of another top-level package or of another audit
    wing named instead of its package, any private (``_``) module of another top-level package, or the face of a
    package ``module`` belongs to (a circle through the face). ``packages``: the dotted names that are packages."""
    own_top, own_wing = module.partition(".")[0], wing_of(module)
    found = []
    for name in sorted(imported_modules(source, module, is_package=is_package)):
        top = name.partition(".")[0]
        if top not in RANK:
            continue
        wing = next((w for w in FACED_WINGS if name == w or name.startswith(w + ".")), None)
        private = any(part.startswith("_") and part != "__main__" for part in name.split(".")[1:])
        if top != own_top and private:
            found.append(f"{module} -> {name} (a private module of another package)")
        elif top != own_top and name not in packages:
            found.append(f"{module} -> {name} (behind the face of {top})")
        elif top == own_top and wing is not None and wing != own_wing and name != wing:
            found.append(f"{module} -> {name} (behind the face of {wing})")
        elif module.startswith(name + "."):
            found.append(f"{module} -> {name} (the face of its own package)")
    return found


def faces(paths: list[Path]) -> set[str]:
    """The dotted names of the packages among ``paths`` (each ``__init__`` module)."""
    return {module_name(path) for path in paths if path.name == "__init__.py"}


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every circle of imports among the modules of ``graph`` (each module's imports resolved to modules of the
    graph; an import of a package counts as one of its ``__init__``), found by depth-first search."""
    circles, state = [], dict.fromkeys(graph, 0)  # 0 unvisited, 1 on the path, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for other in sorted(graph[node]):
            if state[other] == 1:
                circles.append([*path[path.index(other) :], other])
            elif state[other] == 0:
                visit(other, [*path, other])
        state[node] = 2

    for node in sorted(graph):
        if state[node] == 0:
            visit(node, [node])
    return circles


def package_modules(packages: tuple[str, ...], *, entry_points: bool = True) -> list[Path]:
    """Every module of ``packages``; without ``__main__`` modules (``python -m``, which run a command line when
    imported) unless ``entry_points``."""
    return sorted(
        path
        for package in packages
        for path in (ROOT / package).rglob("*.py")
        if entry_points or path.name != "__main__.py"
    )


def test_the_checker_finds_upward_imports_in_every_form() -> None:
    """Hand-written sources with a known answer: top-level, lazy, relative, and allowed imports."""
    source = (
        "import numpy\n"
        "import schemas.results\n"
        "from audit.metrics.point import eer\n"
        "def late():\n"
        "    import runner.cache\n"
        "from . import digests\n"
    )
    assert upward_imports(source, "provenance.manifest") == [
        "provenance.manifest -> audit.metrics.point",
        "provenance.manifest -> runner.cache",
    ]
    assert upward_imports("from ..audit import flags\n", "schemas.sub.mod") == []  # resolves to schemas.audit
    assert upward_imports("from .. import reports\n", "audit.sub.mod") == []  # resolves to audit
    assert upward_imports("from reports import write_report\n", "audit.cli") == []  # DESIGN's exception
    assert upward_imports("from reports import write_report\n", "audit.verify") == ["audit.verify -> reports"]
    assert upward_imports("from audit.metrics.point import eer\n", "runner.pipeline") == []
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
    for path in package_modules(LAYERS, entry_points=False):  # ``python -m audit`` is a command line itself
        name = module_name(path)
        imported = imported_modules(path.read_text(encoding="utf-8"), name, is_package=path.name == "__init__.py")
        found += [f"{name} -> {other}" for other in sorted(imported) if other.endswith(".cli") and other != name]
    assert found == []


@pytest.mark.every_install  # torch installed beside it is what makes this a check
def test_importing_every_light_module_does_not_import_torch() -> None:
    """A reviewer installs audit/schemas/provenance/reports without torch: no module of theirs may pull it in."""
    names = [module_name(path) for path in package_modules(LIGHT, entry_points=False)]
    code = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.partition('.')[0] == 'torch'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_wing_checker_and_the_circle_finder_on_known_answers() -> None:
    assert wing_violations("from audit.table.checks import raise_flags\n", "audit.metrics.point") == [
        "audit.metrics.point -> audit.table.checks"
    ]
    assert wing_violations("from runner.pipeline import run\n", "runner.plan.records") == [
        "runner.plan.records -> runner.pipeline"
    ]  # up the runner's wings
    assert wing_violations("from runner.execution import Embedder\n", "runner.scoring.results") == [
        "runner.scoring.results -> runner.execution"
    ]  # peers
    assert wing_violations("from runner.design import RunConfig\n", "runner.plan.records") == []
    assert wing_violations("from runner.cache import EmbeddingCache\n", "runner.encoders.deferred") == []
    assert wing_violations("from audit.verify import verify\n", "audit.scores.scoring") == [
        "audit.scores.scoring -> audit.verify"
    ]  # peers
    assert wing_violations("from audit.result import json_safe\n", "audit.scores.scoring") == []
    assert wing_violations("from .point import eer\n", "audit.metrics.weighted_roc") == []
    assert wing_violations("from audit.bundle import verify_bundle\n", "audit.statistics.bundle") == []
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert import_circles({"a": {"b"}, "b": set()}) == []


def test_the_face_checker_on_known_answers() -> None:
    """Planted violations of each face rule, and the imports the rules allow."""
    packages = {"schemas", "provenance", "audit", "audit.metrics", "audit.table", "audit._cli", "runner", "reports"}

    def check(source: str, module: str) -> list[str]:
        return face_violations(source, module, is_package=False, packages=packages)

    assert check("from schemas.errors import InputError\n", "runner.pipeline") == [
        "runner.pipeline -> schemas.errors (behind the face of schemas)"
    ]
    assert check("from audit.metrics.point import eer\n", "runner.scoring.results") == [
        "runner.scoring.results -> audit.metrics.point (behind the face of audit)"
    ]
    assert check("from audit._cli import plumbing\n", "runner.cli") == [
        "runner.cli -> audit._cli (a private module of another package)"
    ]
    assert check("from audit.metrics.point import eer\n", "audit.table.checks") == [
        "audit.table.checks -> audit.metrics.point (behind the face of audit.metrics)"
    ]
    assert check("from audit.table import Flag\n", "audit.table.checks") == [
        "audit.table.checks -> audit.table (the face of its own package)"
    ]
    assert check("from schemas import count\n", "schemas.results") == [
        "schemas.results -> schemas (the face of its own package)"
    ]
    assert check("from schemas import InputError\n", "runner.pipeline") == []
    assert check("from audit.metrics import eer\n", "runner.scoring.results") == []
    assert check("from audit.metrics import eer\n", "audit.table.checks") == []
    assert check("from .point import eer\n", "audit.metrics.weighted_roc") == []
    assert check("from audit.verify import verify\n", "audit._cli.verify") == []  # not a wing with a face
    assert check("from schemas.flags import Flag\n", "schemas.results") == []  # inside its package


def test_imports_between_packages_go_through_faces() -> None:
    paths = package_modules(LAYERS)
    packages = faces(paths)
    found = []
    for path in paths:
        name = module_name(path)
        source = path.read_text(encoding="utf-8")
        found += face_violations(source, name, is_package=path.name == "__init__.py", packages=packages)
    assert found == [], "imports behind a face:\n" + "\n".join(found)


RUNNER_EXTRA = importlib.util.find_spec("av") is not None


@pytest.mark.parametrize(
    "package",
    [
        pytest.param(
            package,
            marks=[
                pytest.mark.skipif(
                    package == "runner" and not RUNNER_EXTRA, reason="the runner extra is not installed (light install)"
                ),
                *([pytest.mark.every_install] if package == "runner" else []),
            ],
        )
        for package in sorted({face.partition(".")[0] for face in faces(package_modules(LAYERS))})
    ],
)
def test_every_face_lends_what_it_lists(package: str) -> None:
    """Each face's ``__all__`` names what it has (a lazy face's stub names real attributes of their homes); the
    runner's faces need the runner extra, which the light install leaves out."""
    names = sorted(face for face in faces(package_modules(LAYERS)) if face.partition(".")[0] == package)
    code = (
        "import importlib\n"
        f"for name in {names!r}:\n"
        "    face = importlib.import_module(name)\n"
        "    assert hasattr(face, '__all__'), f'{name} has no __all__'\n"
        "    for item in face.__all__:\n"
        "        getattr(face, item)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_a_lazy_face_lends_every_name_its_modules_list() -> None:
    """The schemas and provenance faces lend every name of each module's ``__all__``, from that module."""
    from schemas.faces import lent_names

    for package in ("schemas", "provenance"):
        lent = lent_names(package, ROOT / package / "__init__.pyi")
        for path in sorted((ROOT / package).glob("[!_]*.py")):
            listed = next(
                node.value
                for node in ast.parse(path.read_text(encoding="utf-8")).body
                if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets)
            )
            missing = [name for name in ast.literal_eval(listed) if lent.get(name) != f"{package}.{path.stem}"]
            assert missing == [], f"{package}.{path.stem} lists names its face does not lend: {missing}"


def test_no_winged_module_imports_up_its_wings() -> None:
    found = []
    for path in package_modules(("audit", "runner")):
        name = module_name(path)
        found += wing_violations(path.read_text(encoding="utf-8"), name, is_package=path.name == "__init__.py")
    assert found == [], "imports up the wings:\n" + "\n".join(found)


def test_no_circle_of_imports() -> None:
    paths = {module_name(path): path for path in package_modules(LAYERS)}
    graph = {}
    for name, path in paths.items():
        imported = imported_modules(path.read_text(encoding="utf-8"), name, is_package=path.name == "__init__.py")
        resolved = {other for other in imported if other in paths}
        resolved |= {other.rpartition(".")[0] for other in imported if other.rpartition(".")[0] in paths}
        graph[name] = {other for other in resolved if other != name and not name.startswith(other + ".")}
    assert import_circles(graph) == []
