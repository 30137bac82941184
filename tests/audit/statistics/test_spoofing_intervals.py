"""Spoofing-aware intervals of the bundle path (audit.statistics.spoofing): each draw is the metric of the trials
repeated as often as the two-way draw weighs them (oracle: the library's functions on the repeated trials), the
interval the percentile interval of those draws; a cell of one enrolment speaker gets its values and no interval."""

from __future__ import annotations

import numpy as np
import pytest

from audit.metrics import a_dcf_draws, min_t_dcf_draws, t_eer_draws
from audit.metrics.point import MetricInputError, eer
from audit.metrics.record_spoofing import SpoofingSet
from audit.metrics.spoofing import a_dcf, min_t_dcf, sasv_eer, spf_eer, sv_eer, t_eer
from audit.statistics.contrasts import SpeakerDraws
from audit.statistics.draws import percentile_interval
from audit.statistics.spoofing import SpoofingInput, spoofing_intervals
from schemas.results import SPOOFING_COLUMNS
from schemas.trials import TrialKind

TARGET, NONTARGET, SPOOF = int(TrialKind.TARGET), int(TrialKind.NONTARGET), int(TrialKind.SPOOF)


def _cell(rng: np.random.Generator, n_speakers: int) -> SpoofingSet:
    """Per speaker 3 targets, 3 spoofs of that speaker and 3 non-targets against other speakers."""
    speakers = np.array([f"s{i}" for i in range(n_speakers)])
    own = np.repeat(np.arange(n_speakers), 3)
    other = (own + rng.integers(1, n_speakers, own.size)) % n_speakers
    kinds = np.repeat([TARGET, SPOOF, NONTARGET], own.size)
    enrol = speakers[np.r_[own, own, own]]
    test = speakers[np.r_[own, own, other]]
    asv = np.round(rng.normal(np.select([kinds == TARGET, kinds == SPOOF], [2.0, 1.0], 0.0), 1.0), 1)
    cm = np.round(rng.normal(np.where(kinds == SPOOF, -1.0, 1.0), 1.0), 1)
    return SpoofingSet(asv, cm, kinds.astype(np.int64), enrol, test, 0)


def _library(asv: np.ndarray, cm: np.ndarray, kinds: np.ndarray) -> dict[str, float]:
    metrics = {
        "sv_eer": lambda: sv_eer(asv, kinds),
        "spf_eer": lambda: spf_eer(asv, kinds),
        "sasv_eer": lambda: sasv_eer(asv, kinds),
        "a_dcf": lambda: a_dcf(asv, kinds),
        "cm_eer": lambda: eer(cm, kinds != SPOOF),
        "min_t_dcf": lambda: min_t_dcf(cm, asv, kinds),
        "t_eer": lambda: t_eer(cm, asv, kinds),
    }
    values = {}
    for name, metric in metrics.items():
        try:
            values[name] = metric()
        except MetricInputError:
            values[name] = np.nan
    return values


def test_each_draw_is_the_metric_of_the_repeated_trials() -> None:
    rng = np.random.default_rng(8)
    cell = _cell(rng, 6)
    draws = SpeakerDraws.of([cell.enrol_speaker, cell.test_speaker], 30, 4)
    (row,) = spoofing_intervals([SpoofingInput({"record_id": "r"}, cell)], draws, 0.9)
    index = {speaker: position for position, speaker in enumerate(draws.index)}
    expected: dict[str, list[float]] = {name: [] for name in SPOOFING_COLUMNS}
    for m in draws.multiplicities.astype(int):
        pairs = zip(cell.enrol_speaker, cell.test_speaker, strict=True)
        repeat = [m[index[e]] * (1 if e == t else m[index[t]]) for e, t in pairs]
        keep = np.repeat(np.arange(cell.kinds.size), repeat)
        for name, value in _library(cell.asv[keep], cell.cm[keep], cell.kinds[keep]).items():
            expected[name].append(value)
    point = _library(cell.asv, cell.cm, cell.kinds)
    for name in SPOOFING_COLUMNS:
        drawn = np.array(expected[name])
        defined = drawn[np.isfinite(drawn)]
        assert row[name]["estimate"] == pytest.approx(point[name]), name
        assert row[name]["n_undefined"] == drawn.size - defined.size, name
        assert (row[name]["low"], row[name]["high"]) == pytest.approx(tuple(np.quantile(defined, [0.05, 0.95]))), name


def test_the_weighted_metrics_drawn_once_per_distinct_draw_are_those_of_every_draw() -> None:
    """a-DCF, min t-DCF and t-EER are measured once per distinct draw of the cell's speakers (4 speakers, 200
    draws: many repeat): the intervals are, bit for bit, those of the metrics over every draw's trial weights."""
    rng = np.random.default_rng(10)
    cell = _cell(rng, 4)
    draws = SpeakerDraws.of([cell.enrol_speaker, cell.test_speaker], 200, 2)
    (row,) = spoofing_intervals([SpoofingInput({"record_id": "r"}, cell)], draws, 0.9)
    weights = draws.trial_weights(cell.enrol_speaker, cell.test_speaker)
    every = {
        "a_dcf": a_dcf_draws(cell.asv, cell.kinds, weights),
        "min_t_dcf": min_t_dcf_draws(cell.cm, cell.asv, cell.kinds, weights),
        "t_eer": t_eer_draws(cell.cm, cell.asv, cell.kinds, weights),
    }
    assert np.unique(weights, axis=0).shape[0] < weights.shape[0]
    for name, drawn in every.items():
        assert {key: row[name][key] for key in ("low", "high", "n_undefined")} == percentile_interval(drawn, 0.9)


def test_a_cell_of_one_enrolment_speaker_gets_its_values_and_no_interval() -> None:
    rng = np.random.default_rng(9)
    cell = _cell(rng, 4)
    alone = cell.enrol_speaker == "s0"
    one = SpoofingSet(cell.asv[alone], cell.cm[alone], cell.kinds[alone], cell.enrol_speaker[alone],
                      cell.test_speaker[alone], 0)  # fmt: skip
    draws = SpeakerDraws.of([cell.enrol_speaker, cell.test_speaker], 20, 1)
    (row,) = spoofing_intervals([SpoofingInput({"record_id": "one"}, one)], draws, 0.95)
    for name in SPOOFING_COLUMNS:
        assert "withheld" in row[name] or "not_computable" in row[name], name
