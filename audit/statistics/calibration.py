"""Calibration transfer with speaker-level intervals: a calibration fitted on the clean records' development trials
(``audit.metrics.record_calibration``), applied to every record of its group, measured on each record's bona fide
evaluation trials: Cllr, minCllr, actDCF, minDCF and the two losses ``Cllr - minCllr`` (what miscalibration costs in
bits) and ``actDCF - minDCF`` (what the Bayes threshold of the calibrated scores costs at the row's operating
point), each with an interval from the audit's shared two-way speaker draws.

The map is part of what is measured, so its own uncertainty is in the intervals (issue 42): each draw refits it on
the development trials as that draw weighs them (the development speakers are resampled with the evaluation
speakers, as the fixed-threshold analysis re-chooses its threshold per resample), then measures the evaluation
trials with it. With fewer than ``MIN_DEV_SPEAKERS`` development speakers per class the map is a few speakers'
and its variation cannot be resampled: the values are given without an interval, and the section says why. Each
draw weighs a trial by the multiplicity of its enrolment speaker times that of its test speaker (a target once, its
speaker's multiplicity), as every other interval of the audit. minDCF and minCllr come from each draw's
weights per tie group (both in one compiled pass per draw, minCllr by PAV); Cllr and actDCF from each draw's
refitted LLRs (one compiled pass over fixed per-trial costs when the map is given rather than fitted here).
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
    CalibrationRecord,
    Group,
    GroupFit,
    LinearCalibration,
    MetricInputError,
    TieGroups,
    act_dcf,
    bayes_threshold,
    calibration_records,
    cllr,
    fit_groups,
    fit_logistic_calibration_draws,
    min_cllr,
    min_dcf,
    weighted_sums,
)
from audit.statistics.contrasts import ONE_SPEAKER, SpeakerDraws, estimate_with_interval, withheld_interval
from audit.statistics.draws import FloatArray, IntArray, basic_estimate, basic_interval, percentile_interval
from audit.statistics.subgroups import MIN_DEV_SPEAKERS, development_speakers
from schemas import CalibrationDeclaration, cell_text

METRICS = ("cllr", "min_cllr", "act_dcf", "min_dcf", "cllr_minus_min_cllr", "act_dcf_minus_min_dcf")


@dataclass(frozen=True)
class DevelopmentTrials:
    """A calibration group's development trials (bona fide, both speakers development speakers, its clean records)
    and how its map is fitted on them: what each draw refits the map on."""

    scores: NDArray[np.float64]
    labels: NDArray[np.bool_]
    enrol_speaker: NDArray[Any]
    test_speaker: NDArray[Any]
    prior: float
    platt: bool

    def speakers(self) -> dict[str, int]:
        """The speakers behind its trials of each class (``development_speakers``)."""
        return development_speakers(self.enrol_speaker, self.test_speaker, self.labels)


@dataclass(frozen=True)
class CalibrationInput:
    """One record's bona fide evaluation trials under its group's map, and the development trials the map was
    fitted on (each draw refits it there); ``development`` None: a map given from elsewhere, held fixed."""

    key: Mapping[str, str]
    fit: LinearCalibration
    scores: NDArray[np.float64]
    labels: NDArray[np.bool_]
    enrol_speaker: NDArray[Any]
    test_speaker: NDArray[Any]
    costs: tuple[float, float, float]  # p_target, c_miss, c_fa
    development: DevelopmentTrials | None = None


_BLOCK = 1 << 22  # draw x trial values per block of the refitted maps' LLRs


def refitted_maps(development: DevelopmentTrials, draws: SpeakerDraws) -> tuple[FloatArray, FloatArray]:
    """The map refitted on each draw's weighting of the development trials: scales and offsets, NaN where a draw
    leaves a fit undefined (``fit_logistic_calibration_draws``)."""
    weights = draws.trial_weights(development.enrol_speaker, development.test_speaker)
    return fit_logistic_calibration_draws(
        development.scores, development.labels, weights, development.prior, platt=development.platt
    )


def _fixed_map_draws(
    record: CalibrationInput, distinct: FloatArray, enrol: IntArray, partner: IntArray
) -> tuple[FloatArray, FloatArray]:
    """Cllr and actDCF of each ``distinct`` draw (``SpeakerDraws.distinct``; the trials' codes index its columns)
    under the record's own map (one compiled pass over fixed per-trial costs)."""
    labels = record.labels
    llrs = record.fit.apply(record.scores)
    p_target, c_miss, c_fa = record.costs
    threshold = bayes_threshold(p_target, c_miss, c_fa)
    costs = np.where(labels, np.logaddexp(0.0, -llrs), np.logaddexp(0.0, llrs))
    columns = np.column_stack(
        [labels * costs, labels, ~labels * costs, ~labels, labels & (llrs < threshold), ~labels & (llrs >= threshold)]
    ).astype(float)
    sums = weighted_sums(distinct, enrol, partner, columns)
    weight_miss, weight_fa = c_miss * p_target, c_fa * (1.0 - p_target)
    with np.errstate(divide="ignore", invalid="ignore"):
        cllr_draws = (sums[:, 0] / sums[:, 1] + sums[:, 2] / sums[:, 3]) / (2.0 * math.log(2.0))
        act_draws = (weight_miss * sums[:, 4] / sums[:, 1] + weight_fa * sums[:, 5] / sums[:, 3]) / min(
            weight_miss, weight_fa
        )
    return cllr_draws, act_draws


def _refitted_map_draws(
    record: CalibrationInput, maps: tuple[FloatArray, FloatArray], trial_weights: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Cllr and actDCF of every draw, each under its own refitted map (NaN where that map is undefined)."""
    scale, offset = maps
    labels = record.labels
    p_target, c_miss, c_fa = record.costs
    threshold = bayes_threshold(p_target, c_miss, c_fa)
    weight_miss, weight_fa = c_miss * p_target, c_fa * (1.0 - p_target)
    cllr_draws, act_draws = np.full(scale.size, np.nan), np.full(scale.size, np.nan)
    step = max(1, _BLOCK // max(1, record.scores.size))
    for start in range(0, scale.size, step):
        rows = slice(start, start + step)
        llrs = scale[rows, None] * record.scores[None, :] + offset[rows, None]
        weights = trial_weights[rows]
        targets, nontargets = weights @ labels, weights @ ~labels
        with np.errstate(divide="ignore", invalid="ignore"):  # NaN maps give NaN draws
            costs = np.where(labels, np.logaddexp(0.0, -llrs), np.logaddexp(0.0, llrs))
            cllr_draws[rows] = ((weights * costs) @ labels / targets + (weights * costs) @ ~labels / nontargets) / (
                2.0 * math.log(2.0)
            )
            missed = (weights * (llrs < threshold)) @ labels / targets
            accepted = (weights * (llrs >= threshold)) @ ~labels / nontargets
            act_draws[rows] = (weight_miss * missed + weight_fa * accepted) / min(weight_miss, weight_fa)
    act_draws[~np.isfinite(scale)] = np.nan
    return cllr_draws, act_draws


def _draws(
    record: CalibrationInput, draws: SpeakerDraws, maps: tuple[FloatArray, FloatArray] | None
) -> dict[str, FloatArray]:
    """Each metric's value on every draw (NaN where a class drew no weight or the refitted map is undefined), the
    map refitted per draw (``maps``) or held fixed (None). What the trial weights alone decide is measured once per
    distinct draw of the record's speakers (``SpeakerDraws.distinct``) and repeated."""
    enrol, partner = draws.codes(record.enrol_speaker, record.test_speaker)
    assert partner is not None
    distinct, enrol_local, partner_local, repeated = draws.distinct(enrol, partner)
    if maps is None:
        cllr_draws, act_draws = _fixed_map_draws(record, distinct, enrol_local, partner_local)
        cllr_draws, act_draws = cllr_draws[repeated], act_draws[repeated]
    else:
        trial_weights = draws.trial_weights(record.enrol_speaker, record.test_speaker)
        cllr_draws, act_draws = _refitted_map_draws(record, maps, trial_weights)
    groups = TieGroups.of(record.scores, record.labels)
    min_cllr_draws, min_dcf_draws = groups.draw_minima(distinct, enrol_local, partner_local, *record.costs)
    min_cllr_draws, min_dcf_draws = min_cllr_draws[repeated], min_dcf_draws[repeated]
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


MAP_METRICS = frozenset({"cllr", "act_dcf", "cllr_minus_min_cllr", "act_dcf_minus_min_dcf"})  # need the map
# Minima fitted on the trials they score (PAV, the best threshold) are optimistic, and more so in a resample: their
# estimates are bias-corrected and their intervals reflected (``basic_interval``), within their ranges. A loss X - M
# takes the percentile interval of X's draws less M's reflected draws (2 M - M*), around X less M's bias-corrected
# estimate, at least 0; Cllr and actDCF get percentile intervals. Chosen by simulation (benchmarks/
# calibration_coverage.py, DESIGN section 4).
REFLECTED = {"min_cllr": (0.0, 1.0), "min_dcf": (0.0, 1.0)}
LOSSES = {"cllr_minus_min_cllr": ("cllr", "min_cllr"), "act_dcf_minus_min_dcf": ("act_dcf", "min_dcf")}


def calibration_transfer(
    records: Sequence[CalibrationInput], draws: SpeakerDraws, level: float
) -> list[dict[str, Any]]:
    """Per record, each metric of ``METRICS`` with its interval from ``draws``, or why it has none: a record of one
    enrolment speaker (``ONE_SPEAKER``); the metrics that need the map (``MAP_METRICS``) when it was fitted on fewer
    than ``MIN_DEV_SPEAKERS`` development speakers per class (``few_dev_speakers``: minCllr and minDCF keep theirs,
    they need no map). Each row says whether its map was refitted per draw (``map``). The estimates of the minima
    and the losses are bias-corrected (``in_sample``: as computed)."""
    return _transfer(records, draws, level)[0]


def calibration_statistics(
    records: Sequence[CalibrationInput], draws: SpeakerDraws, level: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``calibration_transfer``'s rows and, from the same draws, the per-subgroup calibration gaps
    (``subgroup_calibration_gaps``)."""
    rows, drawn = _transfer(records, draws, level)
    return rows, subgroup_calibration_gaps(records, rows, drawn, level)


_Drawn = tuple[dict[str, float], dict[str, FloatArray]]  # a record's estimates and draws of every metric


def _transfer(
    records: Sequence[CalibrationInput], draws: SpeakerDraws, level: float
) -> tuple[list[dict[str, Any]], dict[int, _Drawn]]:
    """``calibration_transfer``'s rows, and by position the estimates and draws of each record that has them."""
    maps: dict[int, tuple[FloatArray, FloatArray]] = {}  # per development set: the maps of every draw, fitted once
    rows = []
    kept: dict[int, _Drawn] = {}
    for position, record in enumerate(records):
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
        development = record.development
        speakers = development.speakers() if development is not None else None  # counted once per record
        few = speakers is not None and min(speakers.values()) < MIN_DEV_SPEAKERS
        if development is not None and not few and id(development) not in maps:
            maps[id(development)] = refitted_maps(development, draws)
        refitted = maps.get(id(development)) if development is not None and not few else None
        row["map"] = "refitted per draw" if refitted is not None else ("too few development speakers to refit"
                                                                        if few else "held fixed")  # fmt: skip
        if speakers is not None:
            row["dev_speakers"] = speakers
        drawn = _draws(record, draws, refitted)
        kept[position] = (estimates, drawn)
        for name in METRICS:
            value = _interval(name, estimates, drawn, level)
            if few and name in MAP_METRICS:
                assert speakers is not None
                value = withheld_interval(value["estimate"], few_dev_speakers(speakers)) | {
                    key: value[key] for key in ("in_sample",) if key in value
                }
            row[name] = value
        rows.append(row)
    return rows, kept


def _interval(
    name: str, estimates: Mapping[str, float], drawn: Mapping[str, FloatArray], level: float
) -> dict[str, Any]:
    """The metric's estimate and interval by its rule (``REFLECTED``, ``LOSSES`` or percentile); ``degenerate`` when
    every defined draw it rests on is the same number."""
    if name in REFLECTED:
        return _with_degenerate(basic_interval(drawn[name], estimates[name], level, REFLECTED[name]), drawn[name])
    if name not in LOSSES:
        return _with_degenerate(
            estimate_with_interval(estimates[name], drawn[name], level, corrected=False), drawn[name]
        )
    actual, minimum = LOSSES[name]
    corrected = basic_estimate(drawn[minimum], estimates[minimum])
    mirrored = drawn[actual] - (2.0 * estimates[minimum] - drawn[minimum])
    interval = percentile_interval(mirrored, level)
    value = {
        "estimate": max(0.0, estimates[actual] - corrected),
        "low": None if interval["low"] is None else max(0.0, interval["low"]),
        "high": None if interval["high"] is None else max(0.0, interval["high"]),
        "n_undefined": interval["n_undefined"],
        "in_sample": float(estimates[name]),
    }
    return _with_degenerate(value, mirrored)


SETTING_KEYS = ("experiment", "model", "corpus", "condition")  # a subgroup setting: its records differ in subgroup


def _corrected_loss(estimates: Mapping[str, float], drawn: Mapping[str, FloatArray]) -> float:
    """``Cllr - minCllr`` with minCllr bias-corrected, not cut at 0 (the loss's estimate before ``LOSSES``' floor)."""
    return estimates["cllr"] - basic_estimate(drawn["min_cllr"], estimates["min_cllr"])


def subgroup_calibration_gaps(
    records: Sequence[CalibrationInput],
    rows: Sequence[Mapping[str, Any]],
    drawn: Mapping[int, _Drawn],
    level: float,
) -> list[dict[str, Any]]:
    """Per subgroup setting (experiment, encoder, corpus and condition with records of two or more subgroups, all
    under their group's one declared map): each subgroup's ``Cllr - minCllr`` (its ``calibration_transfer`` row's)
    and its difference to the first subgroup (sorted), from the same draws: the loss's estimate less the
    reference's (minCllr bias-corrected, neither cut at 0), with the percentile interval of the per-draw differences
    of the two losses (Cllr* - minCllr*) moved to that estimate (by their mean's distance from it: each minimum's
    resample optimism taken out, as in its own estimate). A loss's own interval reflects minCllr's draws
    (``LOSSES``), which adds the spreads of Cllr and minCllr; in a difference the minima's optimism largely cancels
    and the reflection only widens it: on the tests' design (20 speakers per subgroup, a planted gap of 0.105 bits)
    this rule's interval was 0.24 bits wide on average over 80 data sets and held the gap 0.975 of the time (a gap
    of 0: 0.12 wide, 1.0), the reflected one 0.72 wide on the tests' data set. A difference involving a loss
    without an interval (one speaker, a map on too few development speakers, a record without metrics) has none,
    and says why."""
    settings: dict[tuple[str, ...], dict[str, int]] = {}
    for position, record in enumerate(records):
        subgroup = str(record.key.get("subgroup") or "")
        if subgroup:
            setting = tuple(str(record.key.get(name) or "") for name in SETTING_KEYS)
            settings.setdefault(setting, {}).setdefault(subgroup, position)
    results = []
    for setting, members in sorted(settings.items()):
        if len(members) < 2:
            continue
        names = sorted(members)
        reference = names[0]
        subgroups: dict[str, Any] = {}
        for name in names:
            position = members[name]
            row, record = rows[position], records[position]
            subgroups[name] = {
                "record_id": str(record.key.get("record_id", "")),
                "n_speakers": int(np.unique(record.enrol_speaker.astype(str)).size),
                "n_target": row["n_target"],
                "n_nontarget": row["n_nontarget"],
                "cllr_minus_min_cllr": row.get("cllr_minus_min_cllr"),
            }
            if name != reference:
                subgroups[name]["difference_to_reference"] = _loss_difference(
                    (rows[position], drawn.get(position)), (rows[members[reference]], drawn.get(members[reference])),
                    level,
                )  # fmt: skip
        results.append(
            {"key": dict(zip(SETTING_KEYS, setting, strict=True)), "reference": reference, "subgroups": subgroups}
        )
    return results


def _loss_difference(
    subgroup: tuple[Mapping[str, Any], _Drawn | None], reference: tuple[Mapping[str, Any], _Drawn | None], level: float
) -> dict[str, Any] | None:
    """One subgroup's loss less the reference subgroup's, with the interval of the differences of their draws, or
    without one and why (the first reason either loss gives); None when either has no loss."""
    loss, reference_loss = subgroup[0].get("cllr_minus_min_cllr"), reference[0].get("cllr_minus_min_cllr")
    if loss is None or reference_loss is None:
        return None
    reasons = [value["withheld"] for value in (loss, reference_loss) if "withheld" in value]
    if subgroup[1] is None or reference[1] is None:  # a record of one speaker: no draws were made
        return withheld_interval(loss["estimate"] - reference_loss["estimate"], reasons[0])
    (estimates, drawn), (reference_estimates, reference_drawn) = subgroup[1], reference[1]
    estimate = _corrected_loss(estimates, drawn) - _corrected_loss(reference_estimates, reference_drawn)
    if reasons:
        return withheld_interval(estimate, reasons[0])
    differences = (drawn["cllr"] - drawn["min_cllr"]) - (reference_drawn["cllr"] - reference_drawn["min_cllr"])
    defined = differences[np.isfinite(differences)]
    moved = differences - (defined.mean() if defined.size else 0.0) + estimate
    return _with_degenerate({"estimate": float(estimate), **percentile_interval(moved, level)}, differences)


def few_dev_speakers(speakers: Mapping[str, int]) -> str:
    """Why a map fitted on too few development speakers gets no interval."""
    return (
        f"few development speakers: the map was fitted on {speakers['target']} speaker(s) with target trials and "
        f"{speakers['nontarget']} with non-target trials, fewer than {MIN_DEV_SPEAKERS} per class, so its own "
        "variation cannot be resampled and no interval is given"
    )


def _with_degenerate(value: dict[str, Any], drawn: FloatArray) -> dict[str, Any]:
    """``value`` with ``degenerate`` set when its interval has no width: a zero-width interval is no measure of
    uncertainty, and is said to be none, with why: every defined draw is the same number (e.g. an actDCF of 1 in
    every draw: no calibrated LLR reaches the Bayes threshold, every trial is rejected in every resample), or a
    reflected interval lies wholly beyond the metric's range and was cut to its bound (a minDCF of 1 whose draws lie
    below it: the bias-corrected truth is the bound)."""
    defined = drawn[np.isfinite(drawn)]
    if defined.size and defined.min() == defined.max():
        return value | {"degenerate": f"every resample gives the same value ({defined[0]:.6g}): no spread to show"}
    if value.get("low") is not None and value["low"] == value["high"]:
        bound = f"the interval lies at the metric's bound ({value['low']:.6g}): no spread to show"
        return value | {"degenerate": bound}
    return value


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
    platt = declaration.method == "platt"
    fits = fit_groups(records, dev_speakers, declaration.prior, platt=platt)
    development = _development_trials(records, dev_speakers, declaration.prior, platt)
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
                development[record.group],
            )
        )
    return inputs, fits


def _development_trials(
    records: Sequence[CalibrationRecord], dev_speakers: Sequence[str], prior: float, platt: bool
) -> dict[Group, DevelopmentTrials]:
    """Per group, the development trials its map is fitted on (``fit_groups``' trials: its reference records'),
    with their speakers, one object per group (the draws' maps are fitted once per group)."""
    parts: dict[Group, list[tuple[NDArray[Any], ...]]] = {}
    for record in records:
        parts.setdefault(record.group, [])
        if record.reference:
            dev, _ = record.masks(dev_speakers)
            parts[record.group].append(
                (record.scores[dev], record.labels[dev] == 1, record.enrol_speaker[dev], record.test_speaker[dev])
            )

    def joined(chosen: list[tuple[NDArray[Any], ...]], column: int) -> NDArray[Any]:
        return np.concatenate([part[column] for part in chosen]) if chosen else np.zeros(0)

    return {
        group: DevelopmentTrials(
            joined(chosen, 0), joined(chosen, 1), joined(chosen, 2), joined(chosen, 3), prior=prior, platt=platt
        )
        for group, chosen in parts.items()
    }


def _few_text(few: Mapping[str, Mapping[str, int]]) -> str:
    """The groups whose maps rest on too few development speakers, those of equal counts together."""
    by_count: dict[tuple[int, int], list[str]] = {}
    for group, speakers in sorted(few.items()):
        by_count.setdefault((speakers["target"], speakers["nontarget"]), []).append(group)
    parts = [
        f"{len(groups)} map(s) ({', '.join(groups)}) on {target} development speaker(s) with target trials and "
        f"{nontarget} with non-target trials"
        for (target, nontarget), groups in sorted(by_count.items())
    ]
    return f" Here: {'; '.join(parts)}." if parts else ""


# The coverage of these intervals measured by benchmarks/calibration_coverage.py (figures in benchmarks/RESULTS.md):
# per metric the lowest and highest over its designs and operating points.
MEASURED = (
    "Measured coverage of these 95% intervals (benchmarks/calibration_coverage.py: a map fitted with Platt's targets "
    "on 10 or 20 development speakers, applied to a degraded condition or to its own clean one, 5 to 40 evaluation "
    "speakers x 10 + 10 trials, 200-300 data sets per design, Monte-Carlo SE 0.013-0.015): Cllr 0.93-0.97; "
    "Cllr - minCllr 1.00 and actDCF - minDCF 0.80-1.00 (conservative where the map transfers badly); minCllr "
    "0.83-0.94; minDCF 0.76-0.96 at p_target 0.2 but 0.56-0.87 at 0.01 (few false alarms decide it); actDCF 0.93-1.00 "
    "from 40 evaluation speakers but 0.67 at 10 and 0.46 at 5 with p_target 0.01. Below 40 evaluation speakers, and "
    "at a p_target of 0.01, read the actDCF and minDCF intervals as too narrow."
)


def calibration_transfer_section(
    rows: Sequence[dict[str, Any]], fits: Mapping[Group, GroupFit], interval_text: Callable[[dict[str, Any]], str]
) -> dict[str, Any]:
    """The report's calibration-transfer table: per record (condition and encoder) the two losses, Cllr, actDCF,
    minCllr and minDCF with their intervals (printed by ``interval_text``, as the statistics section prints its own),
    the rule of the intervals, the groups whose maps rest on too few development speakers for one, and the coverage
    the intervals reached in simulation."""

    def text(value: dict[str, Any] | None) -> str:
        return interval_text(value) if value else "n/a"

    columns = {
        "Cllr - minCllr": "cllr_minus_min_cllr",
        "actDCF - minDCF": "act_dcf_minus_min_dcf",
        "Cllr": "cllr",
        "actDCF": "act_dcf",
        "minCllr": "min_cllr",
        "minDCF": "min_dcf",
    }
    table = [
        {
            **{name: row["key"][name] for name in ("experiment", "model", "condition", "subgroup") if row["key"][name]},
            **{title: text(row.get(name)) for title, name in columns.items()},
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
    few = {
        f"{row['key']['experiment']}/{row['key']['model']}": row["dev_speakers"]
        for row in rows
        if row.get("map") == "too few development speakers to refit"
    }
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
            "at the row's operating point), Cllr, actDCF, minCllr and minDCF; estimate [95% interval] from the same "
            "two-way speaker draws as the contrasts.",
            "The map is part of what is measured: each draw resamples the development speakers with the evaluation "
            "speakers and refits the map, so its own uncertainty is in the intervals. minCllr and minDCF are minima "
            "fitted on the very trials they score (PAV, the best threshold), optimistic in the sample and more so "
            "in a resample: their estimates are bias-corrected (2 x the estimate less the draws' mean; report.json "
            "keeps the in-sample value) and their intervals reflected (basic bootstrap); each loss takes the "
            "percentile interval of Cllr's (actDCF's) draws less the minimum's reflected draws, around the loss "
            "with the minimum bias-corrected, at least 0; Cllr and actDCF get percentile intervals. An interval "
            "of no width (every draw the same value, or cut to the metric's bound) is printed as none.",
            f"A map fitted on fewer than {MIN_DEV_SPEAKERS} development speakers per class is those few speakers' "
            "and its variation cannot be resampled: no interval is given for its Cllr, actDCF or either loss (minCllr "
            "and minDCF need no map and keep theirs)." + _few_text(few),
            MEASURED,
            f"Maps: {maps}." if maps else "No map could be fitted.",
            *([f"No map for {len(missing)} group(s): {'; '.join(missing[:5])}."] if missing else []),
            *([f"{len(skipped)} record(s) without metrics: {'; '.join(skipped[:5])}."] if skipped else []),
        ],
        "table": table,
    }


def subgroup_calibration_section(
    gaps: Sequence[Mapping[str, Any]], interval_text: Callable[[dict[str, Any]], str]
) -> dict[str, Any]:
    """The report's per-subgroup calibration gaps: per setting and subgroup its ``Cllr - minCllr`` under the declared
    map and its difference to the reference subgroup, with intervals (printed by ``interval_text``)."""
    table = []
    for gap in gaps:
        reference = gap["reference"]
        for name, subgroup in gap["subgroups"].items():
            difference = subgroup.get("difference_to_reference")
            table.append(
                {
                    **{key: value for key, value in gap["key"].items() if value and key != "corpus"},
                    "subgroup": name,
                    "speakers": subgroup["n_speakers"],
                    "Cllr - minCllr": interval_text(subgroup["cllr_minus_min_cllr"])
                    if subgroup.get("cllr_minus_min_cllr")
                    else "n/a",
                    "difference to reference": "reference"
                    if name == reference
                    else (interval_text(difference) if difference else "n/a"),
                    "trials": subgroup["n_target"] + subgroup["n_nontarget"],
                }
            )
    return {
        "id": "calibration-subgroups",
        "title": "Calibration gap per subgroup under the declared calibration",
        "status": "info",
        "lines": [
            "Accent and gender differences in verification sit largely in calibration (Estevez and Ferrer): one map "
            "for all subgroups can be right for one and wrong for another at the same discrimination. Per setting "
            "(experiment, encoder, condition) with records of two or more subgroups, each subgroup's Cllr - minCllr "
            "(bits lost to miscalibration) under the one map the run declared (fitted on the clean development "
            "trials of every subgroup, the calibration-transfer table's), and its difference to the first subgroup "
            "(sorted; positive: calibrated worse than the reference), estimate [95% interval] from the same two-way "
            "speaker draws, the map refitted per draw as there.",
            "The difference's estimate takes both minCllr bias-corrected and neither loss cut at 0; its interval is "
            "the percentile interval of the per-draw differences of the two losses (Cllr less minCllr in each draw), "
            "moved to that estimate: the minima's resample optimism largely cancels in a difference. A loss without "
            "an interval (one speaker, a map on too few development speakers) gives its difference none. Coverage on "
            "one simulated design (20 speakers per subgroup, 80 data sets, tests/audit/statistics): 1.0 for a gap of "
            "zero, 0.975 for a planted gap of 0.105 bits; not measured over designs.",
        ],
        "table": table,
    }
