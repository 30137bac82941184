"""Metrics per group of ``audit scores`` (all trials, then each subgroup and condition): the EER variants,
minDCF and AUC with the speaker bootstrap's intervals, the calibration metrics and the spoofing-aware metrics, and
the DET curves."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from audit.bundle import bayes_error_entry, curve
from audit.metrics import EER_METHODS, MetricInputError, grouped_metrics, weighted_eers
from audit.scores.calibration import DevCalibration, calibration_row
from audit.scores.config import TWO_WAY, ScoringConfig
from audit.scores.joining import MAX_LISTED_PAIRS, finding
from audit.scores.spoofing import spoofing_row
from audit.statistics import cluster_codes, draw_cluster_weights, estimate_with_interval, pointwise_band
from schemas import Flag, Severity, count


def trial_groups(trials: pd.DataFrame) -> list[tuple[str, str, np.ndarray]]:
    """(grouping, value, mask) for all trials, then each subgroup and condition present."""
    groups = [("all", "all trials", np.ones(len(trials), dtype=bool))]
    for column in ("subgroup", "condition"):
        if column in trials:
            for value in sorted(trials[column].dropna().unique()):
                groups.append((column, str(value), (trials[column] == value).to_numpy()))
    return groups


def _speaker_codes(enrol: np.ndarray, test: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None, int]:
    """The bootstrap's codes of each trial's speakers from their categorical codes (one sorted set of speakers):
    the enrolment speaker's position among the speakers present, and the partner (the test speaker of a trial
    between two speakers; the count of speakers, a column of weight 1, for a trial of one), as
    ``audit.statistics.pair_codes`` gives them from the ids, without a look-up per trial."""
    present = np.unique(enrol if test is None else np.concatenate([enrol, test]))
    position = np.zeros(int(present[-1]) + 1 if present.size else 0, dtype=np.int64)
    position[present] = np.arange(present.size)
    codes = position[enrol]
    if test is None:
        return codes, None, present.size
    partners = position[test]
    return codes, np.where(partners == codes, present.size, partners), present.size


def _bootstrap(
    scores: np.ndarray,
    labels: np.ndarray,
    enrol: np.ndarray,
    test: np.ndarray | None,
    estimates: Mapping[str, float],
    config: ScoringConfig,
    bands: dict[tuple[str, str], dict[str, Any]] | None,
    group: tuple[str, str],
) -> dict[str, Any]:
    """Each EER variant's interval from the speaker bootstrap of the bundle audit (``audit.statistics``): two-way
    when the test speakers are known (a trial between two speakers counts once per drawn copy of each; resampling
    the enrolment side alone covered 0.87-0.91), bias-corrected as a single EER is there. ``enrol`` and ``test``
    are the speakers' categorical codes, ``estimates`` the group's EERs (``eer_<method>``, as ``eer`` gives them);
    the three variants come from one pass of the compiled loops. Given ``bands``, the group's DET band from the
    same draws (``audit.statistics.pointwise_band``) is put there under ``group``."""
    codes, partners, n_speakers = _speaker_codes(enrol, test)
    weights = draw_cluster_weights(n_speakers, config.n_resamples, config.seed)
    if bands is not None:
        bands[group] = pointwise_band(scores, labels.astype(bool), weights, codes, partners, config.level)
    out: dict[str, Any] = {
        "n_speakers": n_speakers,
        "bootstrap_clusters": "enrolment speaker" if test is None else TWO_WAY,
    }
    resampled = weighted_eers(scores, labels, codes, weights, partners)
    for method in EER_METHODS:
        estimate = estimates[f"eer_{method}"]
        interval = estimate_with_interval(estimate, resampled[method], config.level, corrected=True)
        out[f"eer_{method}_low"] = interval["low"]
        out[f"eer_{method}_high"] = interval["high"]
        out[f"eer_{method}_undefined_draws"] = interval["n_undefined"]
    return out


def group_metrics(
    trials: pd.DataFrame,
    config: ScoringConfig,
    with_speakers: bool,
    bands: dict[tuple[str, str], dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """One row per group: trial counts, the three EERs, minDCF, AUC and (with speakers) bootstrap intervals; given
    ``bands``, each such group's DET band from the same draws, keyed by (grouping, group)."""
    rows = []
    for grouping, value, mask in trial_groups(trials):
        subset = trials if mask.all() else trials[mask]  # all trials: no copy of millions of rows
        scores, labels = subset["score"].to_numpy(float), subset["label"].to_numpy(np.int64)
        row: dict[str, Any] = {"grouping": grouping, "group": value, "trials": len(subset)}
        try:
            metrics = grouped_metrics(
                scores, labels, np.zeros(len(subset), dtype=np.int64), 1,
                p_target=config.p_target, c_miss=config.c_miss, c_fa=config.c_fa,
            )  # fmt: skip
        except MetricInputError as error:
            rows.append(row | {"not_computable": str(error)})
            continue
        row |= {name: values[0].item() for name, values in metrics.items()}
        if with_speakers:
            try:
                test = subset["test_speaker"].cat.codes.to_numpy() if "test_speaker" in subset else None
                enrol = subset["enrol_speaker"].cat.codes.to_numpy()
                row |= _bootstrap(scores, labels, enrol, test, row, config, bands, (grouping, value))
            except MetricInputError as error:
                row["interval_not_computable"] = str(error)
        rows.append(row)
    return rows


def group_curves(
    trials: pd.DataFrame, rows: list[dict[str, Any]], bands: Mapping[tuple[str, str], dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Per group whose metrics were computed: its DET curve, EER point (interp) and score histogram, with its band
    where ``bands`` holds one (the figure shades it)."""
    computed = {(row["grouping"], row["group"]): row for row in rows if "not_computable" not in row}
    curves = []
    for grouping, value, mask in trial_groups(trials):
        row = computed.get((grouping, value))
        if row is None:
            continue
        scores, labels = trials["score"].to_numpy(float)[mask], trials["label"].to_numpy(np.int64)[mask]
        drawn = curve(grouping, value, scores, labels, row["eer_interp"])
        band = (bands or {}).get((grouping, value))
        curves.append(drawn | {"band": band} if band is not None else drawn)
    return curves


def bayes_error_curves(trials: pd.DataFrame, calibration: DevCalibration | None) -> list[dict[str, Any]]:
    """With a fitted calibration: the Bayes error plot's curves of the first group (all trials, or the first
    subgroup) on its bona fide trials (a trial keyed spoof left out, as the calibration metrics leave it)."""
    if calibration is None or calibration.fit is None:
        return []
    spoof = trials["cm_spoof"].to_numpy(bool) if "cm_spoof" in trials else np.zeros(len(trials), dtype=bool)
    for grouping, value, mask in trial_groups(trials):
        subset = trials[mask & ~spoof]
        labels = subset["label"].to_numpy(np.int64)
        if (labels == 1).any() and (labels == 0).any():
            llrs = calibration.fit.apply(subset["score"].to_numpy(float))
            return [bayes_error_entry(f"{grouping} {value}", llrs, labels, series=str(value))]
    return []


def resampled(subset: pd.DataFrame, config: ScoringConfig) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Per-trial enrolment-speaker codes and the speaker draws of one group, as ``_bootstrap`` draws them."""
    if "enrol_speaker" not in subset:
        return None
    codes, n_clusters = cluster_codes(subset["enrol_speaker"].to_numpy())
    if n_clusters < 2:
        return None
    return codes, draw_cluster_weights(n_clusters, config.n_resamples, config.seed), config.level


def calibration_metrics(
    trials: pd.DataFrame, config: ScoringConfig, calibration: DevCalibration | None
) -> list[dict[str, Any]]:
    """One row per group: minCllr, and with a fitted calibration Cllr, actDCF and the losses, with intervals
    (with a declared calibration only: minCllr's resamples cost a PAV pass over every trial each).

    Calibration is a property of the verification scores on bona fide speech: targets against bona fide
    non-targets. A trial keyed spoof in the countermeasure file (``cm_spoof``) is left out and counted (a spoof
    scored as a non-target would charge the calibration for what the spoofing-aware metrics measure)."""
    fit = calibration.fit if calibration is not None else None
    spoof = trials["cm_spoof"].to_numpy(bool) if "cm_spoof" in trials else np.zeros(len(trials), dtype=bool)
    rows = []
    for grouping, value, mask in trial_groups(trials):
        subset = trials[mask & ~spoof]
        scores, labels = subset["score"].to_numpy(float), subset["label"].to_numpy(np.int64)
        operating_point = (config.p_target, config.c_miss, config.c_fa)
        draws = resampled(subset, config) if calibration is not None else None
        row = calibration_row(scores, labels, fit, operating_point, draws)
        counts = {"trials": len(subset), "spoof_trials_left_out": int((mask & spoof).sum())}
        rows.append({"grouping": grouping, "group": value} | counts | row)
    return rows


def flag_poor_calibration(rows: list[dict[str, Any]]) -> Flag | None:
    """Groups whose actDCF exceeds 1: at the Bayes threshold the calibrated LLRs cost more than the better of
    accepting and rejecting everyone, which needs no scores at all (minDCF is at most 1 by definition)."""
    poor = [row for row in rows if row.get("act_dcf", 0.0) > 1.0]
    if not poor:
        return None
    named = ", ".join(
        f"{row['group']} ({row['act_dcf']:.3g} against minDCF {row['act_dcf'] - row['act_dcf_minus_min_dcf']:.3g})"
        for row in poor[:MAX_LISTED_PAIRS]
    )
    return finding(
        "poorly-calibrated",
        Severity.WARNING,
        f"actDCF above 1 in {count(len(poor), 'group')}, worse than deciding without the scores: {named}.",
    )


def spoofing_metrics(trials: pd.DataFrame, config: ScoringConfig) -> list[dict[str, Any]]:
    """One row per group: the spoofing-aware metrics of its trials with a usable countermeasure score."""
    rows = []
    for grouping, value, mask in trial_groups(trials):
        subset = trials[mask & (trials["kind"] >= 0).to_numpy()]
        asv, cm = subset["score"].to_numpy(float), subset["cm_score"].to_numpy(float)
        row = spoofing_row(asv, cm, subset["kind"].to_numpy(np.int64), resampled(subset, config))
        rows.append({"grouping": grouping, "group": value} | row)
    return rows
