"""Suite-wide test setup, at the root of the repository (tests/ is a package: ``tests.runner.fake_corpora``).

The light sessions (``nox -s fast``, ``nox -s audit``: ``INTERBIAS_LIGHT=1``, or no torch installed) hold the tiers
to their marks: a test that needs torch or a real encoder is marked ``runner``. In a light session a test module
marked ``runner`` as a whole is not even imported, and importing a model stack (torch, torchaudio, speechbrain,
transformers, resemblyzer, onnxruntime) from anything else fails with the rule it broke, instead of passing
because another module happened to load torch first.
"""

from __future__ import annotations

import ast
import functools
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path

import pytest

MODEL_STACKS = frozenset({"torch", "torchaudio", "speechbrain", "transformers", "resemblyzer", "onnxruntime"})

# Torch's OpenMP threads spin between parallel regions unless told to sleep: two test workers each running a model on
# the two cores then spend their CPU spinning against each other (two ECAPA-TDNN processes side by side on this
# 2-core machine: 49 CPU s and 113 s wall each with the default, 8.7 CPU s and 17 s wall passive). libgomp reads the
# variable when torch first loads it, after this file; the runs' own policy (runner.execution.threads) sets the same,
# too late in a test process that has already imported torch. A value the caller set is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@functools.cache
def light_session() -> bool:
    """Whether this session holds the tiers: asked for (``INTERBIAS_LIGHT=1``), or torch is not installed."""
    return os.environ.get("INTERBIAS_LIGHT") == "1" or importlib.util.find_spec("torch") is None


class ModelStackBlocker(importlib.abc.MetaPathFinder):
    """Refuses every import of an installed model stack, naming the mark the importing test lacks.

    A probe (``importlib.util.find_spec("torch")``) still gets the truth: ``None`` where the stack is not installed,
    a spec where it is; only loading the module fails.
    """

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] not in MODEL_STACKS:
            return None
        others = (finder for finder in sys.meta_path if finder is not self and hasattr(finder, "find_spec"))
        if not any(finder.find_spec(fullname, path, target) for finder in others):
            return None
        return importlib.machinery.ModuleSpec(fullname, _Refusal())


class _Refusal(importlib.abc.Loader):
    """The loader of a blocked model stack: creating the module raises."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        raise ModuleNotFoundError(
            f"light session: {spec.name!r} imported by a test not marked runner; mark it @pytest.mark.runner "
            "(tests that need torch or a real encoder run in nox -s tests only)",
            name=spec.name,
        )

    def exec_module(self, module: object) -> None:
        raise AssertionError("unreachable: create_module refuses")


def marked_runner_module(path: Path) -> bool:
    """Whether the test module's ``pytestmark`` (read from its source, without importing it) includes ``runner``."""
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(target, ast.Name) and target.id == "pytestmark" for target in targets):
            return any(isinstance(sub, ast.Attribute) and sub.attr == "runner" for sub in ast.walk(node.value))
    return False


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--after-light-tier",
        default="",
        metavar="FOLDERS",
        help="comma-separated test folders whose tests not marked runner (nor every_install) have just run on the "
        "light install (nox -s audit): left out here, so that CI runs each test once",
    )


def pytest_configure(config: pytest.Config) -> None:
    if light_session() and not any(isinstance(finder, ModelStackBlocker) for finder in sys.meta_path):
        sys.meta_path.insert(0, ModelStackBlocker())


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """In a light session, a module marked runner as a whole is left out before it is imported."""
    if light_session() and collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        return True if marked_runner_module(collection_path) else None
    return None


def _drop_modules_that_cannot_load() -> None:
    """hypothesis reads ``__file__`` of every module in ``sys.modules`` (to draw the constants of local code), once
    when the suite is collected and again before each property-based test, and speechbrain leaves lazy placeholders
    of optional integrations there (``speechbrain.integrations.k2_fsa``) whose attribute access raises ImportError
    when the integration is not installed: such modules are removed first, so the fuzzers run the same in the whole
    suite as alone."""
    for name, module in list(sys.modules.items()):
        try:
            getattr(module, "__file__", None)
        except ImportError:
            del sys.modules[name]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _drop_modules_that_cannot_load()
    folders = [Path(config.rootpath, folder) for folder in config.getoption("--after-light-tier").split(",") if folder]
    if folders:
        ran = [item for item in items if _ran_on_the_light_install(item, folders)]
        if ran:
            config.hook.pytest_deselected(items=ran)
            items[:] = [item for item in items if item not in set(ran)]


def _ran_on_the_light_install(item: pytest.Item, folders: list[Path]) -> bool:
    """Whether ``nox -s audit`` has run this test: in one of its folders, not marked runner, and not a check that
    means more where the model stacks are installed (marked every_install)."""
    in_tier = any(item.path.is_relative_to(folder) for folder in folders)
    return in_tier and not item.get_closest_marker("runner") and not item.get_closest_marker("every_install")


def pytest_runtest_setup(item: pytest.Item) -> None:
    if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
        _drop_modules_that_cannot_load()
