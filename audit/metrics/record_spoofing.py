"""Spoofing-aware metrics of a run's spoof cells: one implementation for the runner, which writes them into the
spoof cells' results rows, and the audit, which re-derives them from the verified per-trial scores.

A spoof cell's trial list keeps the target trials of its genuine list and replaces the non-targets by spoofs of
the enrolment speaker (``runner.trials.add_spoof_trials``), so its own trials hold no bona fide non-target. The
evaluation set of the spoofing-aware metrics is the three kinds together, as SASV 2022 and ASVspoof 5 define it:
the cell's targets and spoofs, and the bona fide non-targets of its *companion*, the genuine cell ``e->e`` of the
same experiment, model, corpus and subgroup whose enrolment condition is the spoof cell's (its targets must be
the spoof cell's, pair for pair, or no metric is given). Each trial needs a finite ASV score and a finite
countermeasure score (``cm_score`` of the score files); others are left out and counted.

Metrics (``audit.metrics.spoofing``, EERs ``rocch``): ``sv_eer``, ``spf_eer``, ``sasv_eer`` and ``a_dcf`` (Shim et
al.'s costs) of the ASV score, ``cm_eer`` of the countermeasure (bona fide against spoofs), ``min_t_dcf``
(ASVspoof 2019 constants, ASV at its EER threshold) and ``t_eer`` of the tandem.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from audit.metrics.point import MetricInputError, eer
from audit.metrics.spoofing import a_dcf, min_t_dcf, sasv_eer, spf_eer, sv_eer, t_eer
from schemas import SPOOFING_COLUMNS, TrialKind

_KIND_CODES = {kind.word: int(kind) for kind in TrialKind}


def trial_kinds(trials: pd.DataFrame) -> NDArray[np.int64]:
    """``TrialKind`` codes of a trial list: its ``trial_kind`` column where it has one, else from the labels."""
    labels = trials["label"].astype(int).to_numpy()
    if "trial_kind" not in trials:
        return labels.astype(np.int64)
    named = trials["trial_kind"].map(_KIND_CODES)
    return np.where(named.notna(), named.fillna(-1).astype(int).to_numpy(), labels).astype(np.int64)


def has_spoofs(trials: pd.DataFrame) -> bool:
    """The list holds spoof trials: its record is a spoof cell."""
    return "trial_kind" in trials and bool((trials["trial_kind"] == TrialKind.SPOOF.word).any())


def _text(value: Any) -> str:
    """A row cell as text, empty for None or NaN (a subgroup that is absent)."""
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)


_COMPANION_KEY = ("experiment", "model", "corpus", "subgroup", "enrol_condition")


def companions_of(rows: Sequence[Mapping[str, Any]]) -> Callable[[int], str | None]:
    """The record id of the companion of the spoof cell ``rows[position]``: the genuine cell ``e->e`` of its
    experiment, model, corpus and subgroup, ``e`` being its enrolment condition (None when there is not exactly
    one). The genuine cells are indexed by that key once, so each spoof cell's look-up does not scan every row."""
    keys = [tuple(_text(row.get(name)) for name in _COMPANION_KEY) for row in rows]
    genuine: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for position, (row, key) in enumerate(zip(rows, keys, strict=True)):
        if _text(row.get("test_condition")) == key[-1]:
            genuine[key].append(position)

    def companion(position: int) -> str | None:
        matches = [str(rows[other]["record_id"]) for other in genuine.get(keys[position], ()) if other != position]
        return matches[0] if len(matches) == 1 else None

    return companion


@dataclass(frozen=True)
class SpoofingTrials:
    """One record's trials as the spoofing-aware metrics need them (NaN where a system did not score a trial)."""

    trials: pd.DataFrame  # the trial list: enrol_utt, test_utt, label, trial_kind
    asv: NDArray[np.float64]
    cm: NDArray[np.float64] | None


def _targets(trials: pd.DataFrame) -> list[tuple[str, str]]:
    chosen = trials[trials["label"].astype(int) == 1]
    return sorted(zip(chosen["enrol_utt"].astype(str), chosen["test_utt"].astype(str), strict=True))


def spoofing_metrics(asv: NDArray[np.float64], cm: NDArray[np.float64], kinds: NDArray[np.int64]) -> dict[str, Any]:
    """Each of ``SPOOFING_COLUMNS`` of one evaluation set (None when undefined, with the reason in
    ``<metric>_not_computable``)."""
    spoof = kinds == TrialKind.SPOOF
    metrics: dict[str, Callable[[], float]] = {
        "sv_eer": lambda: sv_eer(asv, kinds),
        "spf_eer": lambda: spf_eer(asv, kinds),
        "sasv_eer": lambda: sasv_eer(asv, kinds),
        "a_dcf": lambda: a_dcf(asv, kinds),
        "cm_eer": lambda: eer(cm, ~spoof),
        "min_t_dcf": lambda: min_t_dcf(cm, asv, kinds),
        "t_eer": lambda: t_eer(cm, asv, kinds),
    }
    values: dict[str, Any] = {}
    for name, metric in metrics.items():
        try:
            values[name] = metric()
        except MetricInputError as error:
            values[name] = None
            values[f"{name}_not_computable"] = str(error)
    return values


@dataclass(frozen=True)
class SpoofingSet:
    """A spoof cell's evaluation set: its targets and spoofs with its companion's bona fide non-targets, each with a
    finite ASV and countermeasure score; the trials' speakers where the lists name them (the speaker bootstrap's)."""

    asv: NDArray[np.float64]
    cm: NDArray[np.float64]
    kinds: NDArray[np.int64]
    enrol_speaker: NDArray[Any] | None
    test_speaker: NDArray[Any] | None
    n_left_out: int


def spoofing_set(spoof: SpoofingTrials, companion: SpoofingTrials | None) -> SpoofingSet | str:
    """The evaluation set of a spoof cell (``spoof_cell_metrics``), or why it cannot be formed."""
    if companion is None:
        return "no genuine companion cell e->e for its bona fide non-targets"
    if spoof.cm is None or companion.cm is None:
        return "no countermeasure scores"
    if _targets(spoof.trials) != _targets(companion.trials):
        return "its targets are not its companion cell's, pair for pair"
    kinds = trial_kinds(spoof.trials)
    keep = kinds != TrialKind.NONTARGET
    companion_kinds = trial_kinds(companion.trials)
    bona_fide = companion_kinds == TrialKind.NONTARGET
    asv = np.concatenate([spoof.asv[keep], companion.asv[bona_fide]])
    cm = np.concatenate([spoof.cm[keep], companion.cm[bona_fide]])
    codes = np.concatenate([kinds[keep], companion_kinds[bona_fide]])
    usable = np.isfinite(asv) & np.isfinite(cm)

    def speakers(column: str) -> NDArray[Any] | None:
        if column not in spoof.trials or column not in companion.trials:
            return None
        cell, other = spoof.trials[column].astype(str).to_numpy(), companion.trials[column].astype(str).to_numpy()
        both = np.concatenate([cell[keep], other[bona_fide]])
        return both[usable]

    return SpoofingSet(
        asv[usable],
        cm[usable],
        codes[usable],
        speakers("enrol_speaker"),
        speakers("test_speaker"),
        int((~usable).sum()),
    )


def spoof_cell_metrics(spoof: SpoofingTrials, companion: SpoofingTrials | None) -> dict[str, Any]:
    """The spoofing-aware metrics of a spoof cell (its targets and spoofs, its companion's bona fide non-targets),
    each None with the reason in ``spoofing_not_computable`` when the set cannot be formed, and the trial counts.

    Example:
        Targets at 0.9 and 0.8 (CM 5, 4), spoofs at 0.85 and 0.3 (CM -1, -2), the companion's non-target at 0.1
        (CM 3): the CM stops the spoofs, so the tandem makes no error; the ASV alone confuses a spoof with a target:

        >>> trial = lambda rows: pd.DataFrame(rows, columns=["enrol_utt", "test_utt", "label", "trial_kind"])
        >>> cell = SpoofingTrials(trial([("a", "b", 1, "target"), ("c", "d", 1, "target"),
        ...     ("a", "s1", 0, "spoof"), ("c", "s2", 0, "spoof")]), np.array([0.9, 0.8, 0.85, 0.3]),
        ...     np.array([5.0, 4.0, -1.0, -2.0]))
        >>> genuine = SpoofingTrials(trial([("a", "b", 1, "target"), ("c", "d", 1, "target"),
        ...     ("a", "d", 0, "nontarget")]), np.array([0.9, 0.8, 0.1]), np.array([5.0, 4.0, 3.0]))
        >>> row = spoof_cell_metrics(cell, genuine)
        >>> row["sv_eer"], row["t_eer"], row["spf_eer"], row["spoofing_trials"]
        (0.0, 0.0, 0.25, 5)
    """
    evaluated = spoofing_set(spoof, companion)
    if isinstance(evaluated, str):
        return dict.fromkeys(SPOOFING_COLUMNS) | {"spoofing_not_computable": evaluated}
    counts = {"spoofing_trials": int(evaluated.kinds.size), "spoofing_trials_left_out": evaluated.n_left_out}
    return counts | spoofing_metrics(evaluated.asv, evaluated.cm, evaluated.kinds)


def spoofing_sets_of_rows(
    rows: Sequence[Mapping[str, Any]],
    trials_of: Callable[[str], pd.DataFrame],
    scores_of: Callable[[str], NDArray[np.float64]],
    cm_of: Callable[[str], NDArray[np.float64] | None],
) -> dict[str, SpoofingSet | str]:
    """The evaluation set (or why there is none) of every spoof cell among ``rows``, by record id."""

    def trials(record_id: str) -> SpoofingTrials:
        return SpoofingTrials(
            trials_of(record_id), np.asarray(scores_of(record_id), dtype=np.float64), cm_of(record_id)
        )

    companion_at = companions_of(rows)
    sets: dict[str, SpoofingSet | str] = {}
    for position, row in enumerate(rows):
        record_id = str(row["record_id"])
        if not has_spoofs(trials_of(record_id)):
            continue
        companion = companion_at(position)
        sets[record_id] = spoofing_set(trials(record_id), None if companion is None else trials(companion))
    return sets


def spoofing_of_rows(
    rows: Sequence[Mapping[str, Any]],
    trials_of: Callable[[str], pd.DataFrame],
    scores_of: Callable[[str], NDArray[np.float64]],
    cm_of: Callable[[str], NDArray[np.float64] | None],
) -> dict[str, dict[str, Any]]:
    """The spoofing-aware metrics of every spoof cell among ``rows`` (by record id); other rows get none."""
    metrics = {}
    for record_id, evaluated in spoofing_sets_of_rows(rows, trials_of, scores_of, cm_of).items():
        if isinstance(evaluated, str):
            metrics[record_id] = dict.fromkeys(SPOOFING_COLUMNS) | {"spoofing_not_computable": evaluated}
            continue
        counts = {"spoofing_trials": int(evaluated.kinds.size), "spoofing_trials_left_out": evaluated.n_left_out}
        metrics[record_id] = counts | spoofing_metrics(evaluated.asv, evaluated.cm, evaluated.kinds)
    return metrics
