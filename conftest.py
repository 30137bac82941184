"""Suite-wide test setup, at the root: a conftest.py in tests/ would put tests/ on sys.path, where tests/reports
shadows the reports package."""

from __future__ import annotations

import sys

import pytest


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
def pytest_collection_modifyitems() -> None:
    _drop_modules_that_cannot_load()


def pytest_runtest_setup(item: pytest.Item) -> None:
    if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
        _drop_modules_that_cannot_load()
