"""The declared calibration of a run's records (``[analysis] calibration``): one implementation for the runner,
which writes each record's calibrated metrics, and the audit, which re-derives them from the verified scores.

- **Splits.** A trial is a *development* trial when both its speakers are declared development speakers, an
  *evaluation* trial when neither is (trials that mix the two are in neither), as the fixed-threshold analysis
  splits them (``audit.statistics.subgroups``). A spoof trial is in neither: calibration is measured on bona
  fide speech (targets against bona fide non-targets); spoofs belong to the spoofing-aware metrics.
- **Fit.** One map per *calibration group* (experiment, model, corpus): ``llr = scale * score + offset`` by
  ``fit_logistic_calibration`` at the declared prior (with Platt's targets when the method is ``platt``), on the
  development trials of the group's *reference* records (enrolment and test condition ``clean``, every
  subgroup's; never a complement cell). Fitted on clean speech, it is applied unchanged to every record of the
  group: how it transfers to degraded conditions is what the calibration-transfer table of the audit shows.
- **Metrics.** Per record, on its scored bona fide evaluation trials: ``cllr`` and ``act_dcf`` (at the row's
  ``p_target``, ``c_miss``, ``c_fa``) of the calibrated LLRs, ``min_cllr`` of the raw scores (PAV needs no map).

A group whose development trials lack a class, or whose scores no line can fit (constant scores, exactly or to
rounding; complete or quasi-complete separation without Platt's targets: ``fit_logistic_calibration``), has no map:
its records' calibrated metrics are absent, with the reason (the runner's summary notes it, the audit's sections say
it).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from audit.metrics.calibration import LinearCalibration, act_dcf, cllr, fit_logistic_calibration, min_cllr
from audit.metrics.point import MetricInputError
from schemas import CALIBRATED_COLUMNS, row_costs

REFERENCE_CONDITION = "clean"  # the runner's clean condition: no operator, no selection (runner.designs.CLEAN)
Group = tuple[str, str, str]


def calibration_group(row: Mapping[str, Any]) -> Group:
    """The (experiment, model, corpus) whose reference records fit the map applied to this row's record."""
    return str(row.get("experiment")), str(row.get("model")), str(row.get("corpus"))


def is_reference(row: Mapping[str, Any]) -> bool:
    """A reference record: clean on both sides, not a complement cell (its trials fit its group's map)."""
    complement = row.get("complement_of")
    no_complement = complement is None or complement != complement or complement == ""  # None, NaN or empty
    return (
        row.get("enrol_condition") == REFERENCE_CONDITION
        and row.get("test_condition") == REFERENCE_CONDITION
        and no_complement
    )


def speaker_split(
    enrol: NDArray[Any], test: NDArray[Any], dev_speakers: Collection[str]
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """(development, evaluation) masks: both speakers development speakers, or neither.

    >>> dev, evaluation = speaker_split(np.array(["a", "a", "c"]), np.array(["b", "c", "d"]), {"a", "b"})
    >>> dev.tolist(), evaluation.tolist()
    ([True, False, False], [False, False, True])
    """
    declared = np.asarray(sorted({str(name) for name in dev_speakers}), dtype=object)
    enrol_dev = np.isin(np.asarray(enrol).astype(str), declared.astype(str))
    test_dev = np.isin(np.asarray(test).astype(str), declared.astype(str))
    return enrol_dev & test_dev, ~enrol_dev & ~test_dev


@dataclass(frozen=True)
class CalibrationRecord:
    """One record's trials as the calibration needs them (scores NaN where a trial was not scored)."""

    record_id: str
    group: Group
    reference: bool
    scores: NDArray[np.float64]
    labels: NDArray[np.int64]
    enrol_speaker: NDArray[Any]
    test_speaker: NDArray[Any]
    spoof: NDArray[np.bool_]
    costs: tuple[float, float, float]  # p_target, c_miss, c_fa

    def masks(self, dev_speakers: Collection[str]) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        """(development, evaluation) masks of the scored bona fide trials."""
        dev, evaluation = speaker_split(self.enrol_speaker, self.test_speaker, dev_speakers)
        usable = np.isfinite(self.scores) & ~self.spoof
        return dev & usable, evaluation & usable


@dataclass(frozen=True)
class GroupFit:
    """A calibration group's map, or why it has none; the development trials it was fitted on."""

    group: Group
    fit: LinearCalibration | None
    n_dev_target: int
    n_dev_nontarget: int
    reason: str | None = None


def fit_groups(
    records: Sequence[CalibrationRecord], dev_speakers: Collection[str], prior: float, *, platt: bool = False
) -> dict[Group, GroupFit]:
    """Each group's map, fitted on the development trials of its reference records (pooled); ``platt``: with
    Platt's smoothed targets (``fit_logistic_calibration``)."""
    pooled: dict[Group, list[tuple[NDArray[np.float64], NDArray[np.int64]]]] = {}
    for record in records:
        pooled.setdefault(record.group, [])
        if record.reference:
            dev, _ = record.masks(dev_speakers)
            pooled[record.group].append((record.scores[dev], record.labels[dev]))
    fits = {}
    for group, parts in pooled.items():
        scores = np.concatenate([s for s, _ in parts]) if parts else np.zeros(0)
        labels = np.concatenate([lab for _, lab in parts]) if parts else np.zeros(0, dtype=np.int64)
        n_target, n_nontarget = int((labels == 1).sum()), int((labels == 0).sum())
        if not parts:
            fits[group] = GroupFit(group, None, 0, 0, "no reference (clean) record")
        elif not (n_target and n_nontarget):
            fits[group] = GroupFit(
                group, None, n_target, n_nontarget, "the development trials of its clean records lack a class"
            )
        else:
            try:
                fit = fit_logistic_calibration(scores, labels, prior, platt=platt)
                fits[group] = GroupFit(group, fit, n_target, n_nontarget)
            except MetricInputError as error:
                fits[group] = GroupFit(group, None, n_target, n_nontarget, str(error))
    return fits


def calibrated_metrics(
    record: CalibrationRecord, fit: GroupFit, dev_speakers: Collection[str]
) -> dict[str, float | str | None]:
    """``cllr``, ``min_cllr`` and ``act_dcf`` of the record's bona fide evaluation trials (None each, and the
    reason in ``calibration_not_computable``, when the group has no map or the trials lack a class)."""
    empty: dict[str, float | str | None] = dict.fromkeys(CALIBRATED_COLUMNS)
    if fit.fit is None:
        return empty | {"calibration_not_computable": f"no calibration for its group: {fit.reason}"}
    _, evaluation = record.masks(dev_speakers)
    scores, labels = record.scores[evaluation], record.labels[evaluation]
    try:
        llrs = fit.fit.apply(scores)
        return {
            "cllr": cllr(llrs, labels),
            "min_cllr": min_cllr(scores, labels),
            "act_dcf": act_dcf(llrs, labels, *record.costs),
        }
    except MetricInputError as error:
        return empty | {"calibration_not_computable": f"its evaluation trials: {error}"}


def declared_calibration(
    records: Sequence[CalibrationRecord], dev_speakers: Collection[str], prior: float, *, platt: bool = False
) -> tuple[dict[str, dict[str, float | str | None]], dict[Group, GroupFit]]:
    """Every record's calibrated metrics (by record id) and every group's map."""
    fits = fit_groups(records, dev_speakers, prior, platt=platt)
    return {record.record_id: calibrated_metrics(record, fits[record.group], dev_speakers) for record in records}, fits


_TrialArrays = tuple[NDArray[np.int64], NDArray[Any], NDArray[Any], NDArray[np.bool_]]


def _trial_arrays(trials: pd.DataFrame) -> _TrialArrays:
    """A trial list's labels, enrolment and test speakers and spoof mask, as the calibration reads them."""
    spoof = (trials["trial_kind"] == "spoof").to_numpy(bool) if "trial_kind" in trials else np.zeros(len(trials), bool)
    return (
        trials["label"].astype(int).to_numpy().astype(np.int64),
        trials["enrol_speaker"].astype(str).to_numpy(),
        trials["test_speaker"].astype(str).to_numpy(),
        spoof,
    )


def calibration_records(
    rows: Sequence[Mapping[str, Any]],
    trials_of: Callable[[str], pd.DataFrame],
    scores_of: Callable[[str], NDArray[np.float64]],
) -> list[CalibrationRecord]:
    """One :class:`CalibrationRecord` per results row, from its trial list and its scores (NaN where unscored).

    The records of one trial list (one frame from ``trials_of``) share its arrays, converted once: a bundle's
    records are many conditions of a few lists (136 records of 7 lists in the default bundle)."""
    converted: dict[int, tuple[pd.DataFrame, _TrialArrays]] = {}  # the frame kept: its id stays its own
    records = []
    for row in rows:
        record_id = str(row["record_id"])
        trials = trials_of(record_id)
        if id(trials) not in converted:
            converted[id(trials)] = (trials, _trial_arrays(trials))
        labels, enrol_speaker, test_speaker, spoof = converted[id(trials)][1]
        records.append(
            CalibrationRecord(
                record_id,
                calibration_group(row),
                is_reference(row),
                np.asarray(scores_of(record_id), dtype=np.float64),
                labels,
                enrol_speaker,
                test_speaker,
                spoof,
                row_costs(row),
            )
        )
    return records
