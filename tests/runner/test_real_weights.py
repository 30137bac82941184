"""Missing registry weights fail a test where the suite requires them (``nox -s tests``) and skip it elsewhere."""

from __future__ import annotations

import pytest

from tests.runner.real_weights import weights_absent


def test_missing_weights_fail_where_required_and_skip_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INTERBIAS_REAL_WEIGHTS", "required")
    with pytest.raises(pytest.fail.Exception, match="no installed weights"):
        weights_absent("no installed weights for ('ecapa-tdnn',)")
    monkeypatch.delenv("INTERBIAS_REAL_WEIGHTS")
    with pytest.raises(pytest.skip.Exception, match="no installed weights"):
        weights_absent("no installed weights for ('ecapa-tdnn',)")
