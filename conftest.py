"""Suite-wide test setup, at the root: a conftest.py in tests/ would put tests/ on sys.path, where tests/reports
shadows the reports package."""

from __future__ import annotations

import sys

import pytest


def pytest_runtest_setup(item: pytest.Item) -> None:
    """hypothesis reads ``__file__`` of every module in ``sys.modules`` (to draw the constants of local code), and
    speechbrain leaves lazy placeholders of optional integrations there (``speechbrain.integrations.k2_fsa``) whose
    attribute access raises ImportError when the integration is not installed: modules that cannot load are removed
    before a property-based test, so the fuzzers run the same in the whole suite as alone."""
    if not getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
        return
    for name, module in list(sys.modules.items()):
        try:
            getattr(module, "__file__", None)
        except ImportError:
            del sys.modules[name]
