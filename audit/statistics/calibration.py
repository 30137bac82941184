"""Calibration transfer with speaker-level intervals: a calibration fitted on the clean records' development trials
(``audit.metrics.record_calibration``), applied to every record of its group, measured on each record's bona fide
evaluation trials: Cllr, minCllr, actDCF, minDCF and the two losses ``Cllr - minCllr`` (what miscalibration costs in
bits) and ``actDCF - minDCF`` (what the Bayes threshold of the calibrated scores costs at the row's operating
point), each with a percentile interval from the audit's shared two-way speaker draws.

The map is held fixed across draws: the intervals are those of the evaluation trials given the declared
calibration (its development speakers are not evaluation speakers). Each draw weighs a trial by the multiplicity
of its enrolment speaker times that of its test speaker (a target once, its speaker's multiplicity), as every
other interval of the audit. Cllr and actDCF are weighted means of per-trial costs (one compiled pass for all
draws); minDCF and minCllr come from each draw's weighted counts per tie group (minCllr by PAV per draw).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from audit.metrics import (
    Group,
    GroupFit,
    LinearCalibration,
    MetricInputError,
    act_dcf,
    bayes_threshold,
    calibration_records,
    cllr,
    fit_groups,
    min_cllr,
    min_cllr_of_groups,
    min_dcf,
    weighted_sums,
)
from audit.statistics.contrasts import ONE_SPEAKER, SpeakerDraws, estimate_with_interval, withheld_interval
from audit.statistics.draws import FloatArray
from schemas import CalibrationDeclaration, cell_text

METRICS = ("cllr", "min_cllr", "act_dcf", "min_dcf", "cllr_minus_min_cllr", "act_dcf_minus_min_dcf")


@dataclass(frozen=True)
class CalibrationInput:
    """One record's bona fide evaluation trials under its group's map."""

    key: Mapping[str, str]
    fit: LinearCalibration
    scores: NDArray[np.float64]
    labels: NDArray[np.bool_]
    enrol_speaker: NDArray[Any]
    test_speaker: NDArray[Any]
    costs: tuple[float, float, float]  # p_target, c_miss, c_fa


def _dense_weights(draws: SpeakerDraws) -> FloatArray:
    """Resamples x (speakers + 1) multiplicities out of the compiled loops' tiles (the last column weighs 1)."""
    tiles = draws.weights.tiles
    dense: FloatArray = tiles.transpose(0, 2, 1).reshape(-1, tiles.shape[1])[: draws.weights.rows]
    return dense


def _group_counts(
    scores: FloatArray, labels: NDArray[np.bool_], trial_weights: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Per draw (rows of ``trial_weights``) the target and non-target weight of each tie group, ascending."""
    distinct, group = np.unique(scores, return_inverse=True)
    order = np.argsort(group, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(group[order]) != 0])
    ordered = trial_weights[:, order]
    targets = np.add.reduceat(ordered * labels[order], starts, axis=1)
    nontargets = np.add.reduceat(ordered * ~labels[order], starts, axis=1)
    assert targets.shape[1] == distinct.size
    return targets, nontargets


def _min_dcf_draws(targets: FloatArray, nontargets: FloatArray, costs: tuple[float, float, float]) -> FloatArray:
    """Normalised minDCF of each draw from its tie-group counts (accept ``>=`` each threshold, or none)."""
    p_target, c_miss, c_fa = costs
    total_t, total_n = targets.sum(axis=1, keepdims=True), nontargets.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        # Thresholds at each group (accepting it and above) and reject-all: misses are the groups below.
        missed = np.concatenate([np.zeros_like(total_t), np.cumsum(targets, axis=1)], axis=1) / total_t
        accepted = np.concatenate([np.cumsum(nontargets[:, ::-1], axis=1)[:, ::-1], np.zeros_like(total_n)], axis=1)
        false_alarms = accepted / total_n
        weight_miss, weight_fa = c_miss * p_target, c_fa * (1.0 - p_target)
        cost = (weight_miss * missed + weight_fa * false_alarms).min(axis=1) / min(weight_miss, weight_fa)
    cost[(total_t[:, 0] <= 0) | (total_n[:, 0] <= 0)] = np.nan
    return cost


def _draws(record: CalibrationInput, draws: SpeakerDraws, dense: FloatArray) -> dict[str, FloatArray]:
    """Each metric's value on every draw (NaN where a class drew no weight)."""
    enrol, partner = draws.codes(record.enrol_speaker, record.test_speaker)
    labels = record.labels
    llrs = record.fit.apply(record.scores)
    p_target, c_miss, c_fa = record.costs
    threshold = bayes_threshold(p_target, c_miss, c_fa)
    costs = np.where(labels, np.logaddexp(0.0, -llrs), np.logaddexp(0.0, llrs))
    columns = np.column_stack(
        [labels * costs, labels, ~labels * costs, ~labels, labels & (llrs < threshold), ~labels & (llrs >= threshold)]
    ).astype(float)
    sums = weighted_sums(draws.weights, enrol, partner, columns)
    weight_miss, weight_fa = c_miss * p_target, c_fa * (1.0 - p_target)
    with np.errstate(divide="ignore", invalid="ignore"):
        cllr_draws = (sums[:, 0] / sums[:, 1] + sums[:, 2] / sums[:, 3]) / (2.0 * math.log(2.0))
        act_draws = (weight_miss * sums[:, 4] / sums[:, 1] + weight_fa * sums[:, 5] / sums[:, 3]) / min(
            weight_miss, weight_fa
        )
    assert partner is not None  # test speakers given: two-way codes (a trial of one speaker partners the 1-column)
    trial_weights = dense[:, enrol] * dense[:, partner]
    targets, nontargets = _group_counts(record.scores, labels, trial_weights)
    min_cllr_draws = np.full(targets.shape[0], np.nan)
    for row in range(targets.shape[0]):
        try:
            min_cllr_draws[row] = min_cllr_of_groups(targets[row], nontargets[row])
        except MetricInputError:
            continue
    min_dcf_draws = _min_dcf_draws(targets, nontargets, record.costs)
    return {
        "cllr": cllr_draws,
        "min_cllr": min_cllr_draws,
        "act_dcf": act_draws,
        "min_dcf": min_dcf_draws,
        "cllr_minus_min_cllr": cllr_draws - min_cllr_draws,
        "act_dcf_minus_min_dcf": act_draws - min_dcf_draws,
    }


def _estimates(record: CalibrationInput) -> dict[str, float]:
    llrs = record.fit.apply(record.scores)
    values = {
        "cllr": cllr(llrs, record.labels),
        "min_cllr": min_cllr(record.scores, record.labels),
        "act_dcf": act_dcf(llrs, record.labels, *record.costs),
        "min_dcf": min_dcf(record.scores, record.labels, *record.costs),
    }
    values["cllr_minus_min_cllr"] = values["cllr"] - values["min_cllr"]
    values["act_dcf_minus_min_dcf"] = values["act_dcf"] - values["min_dcf"]
    return values


def calibration_transfer(
    records: Sequence[CalibrationInput], draws: SpeakerDraws, level: float
) -> list[dict[str, Any]]:
    """Per record, each metric of ``METRICS`` with its interval from ``draws``, or why it has none."""
    dense = _dense_weights(draws)
    rows = []
    for record in records:
        row: dict[str, Any] = {"key": dict(record.key), "n_target": int(record.labels.sum()),
                               "n_nontarget": int((~record.labels).sum())}  # fmt: skip
        try:
            estimates = _estimates(record)
        except MetricInputError as error:
            rows.append(row | {"skipped": str(error)})
            continue
        if np.unique(record.enrol_speaker).size < 2:  # the draws only reweigh one speaker's trials
            rows.append(row | {name: withheld_interval(estimates[name], ONE_SPEAKER) for name in METRICS})
            continue
        drawn = _draws(record, draws, dense)
        # Percentile intervals: their coverage was measured so (Cllr 0.980, actDCF 0.987 on LLR-drawn scores).
        rows.append(
            row
            | {name: estimate_with_interval(estimates[name], drawn[name], level, corrected=False) for name in METRICS}
        )
    return rows


def calibration_inputs(
    rows: Sequence[Mapping[str, Any]],
    trials_of: Callable[[str], pd.DataFrame],
    scores_of: Callable[[str], NDArray[np.float64]],
    declaration: CalibrationDeclaration,
    dev_speakers: Sequence[str],
) -> tuple[list[CalibrationInput], dict[Group, GroupFit]]:
    """One input per results row whose calibration group has a map (``audit.metrics.record_calibration``), and
    every group's map or why it has none."""
    records = calibration_records(rows, trials_of, scores_of)
    fits = fit_groups(records, dev_speakers, declaration.prior, platt=declaration.method == "platt")
    inputs = []
    for row, record in zip(rows, records, strict=True):
        fit = fits[record.group].fit
        if fit is None:
            continue
        _, evaluation = record.masks(dev_speakers)
        key = {
            name: cell_text(row.get(name)) or "" for name in ("experiment", "model", "corpus", "condition", "subgroup")
        }
        inputs.append(
            CalibrationInput(
                key | {"record_id": record.record_id},
                fit,
                record.scores[evaluation],
                record.labels[evaluation] == 1,
                record.enrol_speaker[evaluation],
                record.test_speaker[evaluation],
                record.costs,
            )
        )
    return inputs, fits


def calibration_transfer_section(
    rows: Sequence[dict[str, Any]], fits: Mapping[Group, GroupFit], interval_text: Callable[[dict[str, Any]], str]
) -> dict[str, Any]:
    """The report's calibration-transfer table: per record (condition and encoder) the two losses, Cllr and
    actDCF with their intervals (printed by ``interval_text``, as the statistics section prints its own)."""

    def text(value: dict[str, Any] | None) -> str:
        return interval_text(value) if value else "n/a"

    table = [
        {
            **{name: row["key"][name] for name in ("experiment", "model", "condition", "subgroup") if row["key"][name]},
            "Cllr - minCllr": text(row.get("cllr_minus_min_cllr")),
            "actDCF - minDCF": text(row.get("act_dcf_minus_min_dcf")),
            "Cllr": text(row.get("cllr")),
            "actDCF": text(row.get("act_dcf")),
            "trials": row["n_target"] + row["n_nontarget"],
        }
        for row in rows
    ]
    fitted = [fit for fit in fits.values() if fit.fit is not None]
    maps = "; ".join(
        f"{'/'.join(fit.group[:2])}: llr = {fit.fit.scale:.4g} score {fit.fit.offset:+.4g} "
        f"({fit.n_dev_target} + {fit.n_dev_nontarget} development trials)"
        for fit in fitted
        if fit.fit is not None
    )
    missing = [f"{'/'.join(fit.group)}: {fit.reason}" for fit in fits.values() if fit.fit is None]
    skipped = [f"{row['key']['record_id']}: {row['skipped']}" for row in rows if "skipped" in row]
    return {
        "id": "calibration-transfer",
        "title": "Calibration fitted on clean speech, applied to every condition",
        "status": "info",
        "lines": [
            "Declared calibration ([analysis] calibration): per experiment and encoder, a linear logistic map fitted "
            "on the development speakers' trials of the clean records, applied unchanged to every condition. Per "
            "record, on its bona fide evaluation trials (no development speaker on either side): Cllr - minCllr "
            "(bits lost to miscalibration) and actDCF - minDCF (cost of the Bayes threshold of the calibrated scores "
            "at the row's operating point), Cllr and actDCF; estimate [95% interval] from the same two-way speaker "
            "draws as the contrasts (the map held fixed).",
            f"Maps: {maps}." if maps else "No map could be fitted.",
            *([f"No map for {len(missing)} group(s): {'; '.join(missing[:5])}."] if missing else []),
            *([f"{len(skipped)} record(s) without metrics: {'; '.join(skipped[:5])}."] if skipped else []),
        ],
        "table": table,
    }
