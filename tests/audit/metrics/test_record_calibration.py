"""audit.metrics.record_calibration: a group whose development scores no line can fit (issue 42: an encoder that
scores its development speakers as constants, or scores that separate but for a tie) has no map, with the fit's
reason; its records' calibrated metrics are empty with that reason, and the other groups are not stopped. Oracle:
the reason is the one a brute force finds (one distinct score; a separating threshold), and the fitted group's
metrics are the library's on its own trials."""

from __future__ import annotations

import numpy as np
import pytest

from audit.metrics.calibration import act_dcf, cllr, fit_logistic_calibration, min_cllr
from audit.metrics.record_calibration import CalibrationRecord, declared_calibration

DEV = ["d1", "d2", "d3"]


def _record(group: str, dev_scores: np.ndarray, eval_scores: np.ndarray) -> CalibrationRecord:
    """A clean record of ``group``: development trials between d1..d3, then evaluation trials between e1..e3;
    labels alternate target, non-target."""
    n_dev, n_eval = dev_scores.size, eval_scores.size
    enrol = np.array([DEV[i % 3] for i in range(n_dev)] + [f"e{i % 3 + 1}" for i in range(n_eval)])
    labels = np.r_[np.arange(n_dev) % 2 == 0, np.arange(n_eval) % 2 == 0].astype(np.int64)
    test = np.where(labels == 1, enrol, np.roll(enrol, 1))
    return CalibrationRecord(
        f"{group}.clean",
        ("E01", group, "corpus"),
        True,
        np.r_[dev_scores, eval_scores],
        labels,
        enrol,
        test,
        np.zeros(n_dev + n_eval, dtype=bool),
        (0.2, 1.0, 1.0),
    )


@pytest.mark.parametrize("platt", [False, True])
def test_groups_no_line_can_fit_have_no_map_and_say_why(platt: bool) -> None:
    rng = np.random.default_rng(0)
    eval_scores = rng.normal(size=30) + (np.arange(30) % 2 == 0)
    good_dev = rng.normal(size=40) + (np.arange(40) % 2 == 0)
    quasi = np.where(np.arange(12) % 2 == 0, [0.5, 0.6, 0.9] * 4, [0.1, 0.3, 0.5] * 4)  # a tie at the boundary
    records = [
        _record("constant", np.full(1005, 0.7), eval_scores),
        _record("quasi", quasi, eval_scores),
        _record("good", good_dev, eval_scores),
    ]
    metrics, fits = declared_calibration(records, DEV, 0.5, platt=platt)
    constant = fits[("E01", "constant", "corpus")]
    assert constant.fit is None and constant.reason is not None and "constant (1005 trials at 0.7)" in constant.reason
    assert metrics["constant.clean"]["cllr"] is None
    assert "no calibration for its group: the calibration scores are constant" in str(
        metrics["constant.clean"]["calibration_not_computable"]
    )
    quasi_fit = fits[("E01", "quasi", "corpus")]
    targets, nontargets = quasi[::2], quasi[1::2]
    assert targets.min() == nontargets.max()  # the brute force's tie at the boundary
    if platt:
        assert quasi_fit.fit is not None  # Platt's targets fit it
    else:
        assert quasi_fit.fit is None and "quasi-complete separation" in str(quasi_fit.reason)
    good = fits[("E01", "good", "corpus")].fit
    expected = fit_logistic_calibration(good_dev, np.arange(40) % 2 == 0, 0.5, platt=platt)
    assert good is not None and (good.scale, good.offset) == pytest.approx((expected.scale, expected.offset))
    labels = np.arange(30) % 2 == 0
    assert metrics["good.clean"] == pytest.approx(
        {
            "cllr": cllr(good.apply(eval_scores), labels),
            "min_cllr": min_cllr(eval_scores, labels),
            "act_dcf": act_dcf(good.apply(eval_scores), labels, 0.2),
        }
    )
