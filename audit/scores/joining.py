"""Joining a reviewer's files in ``audit scores``: scores, countermeasure scores and development scores to the
trials by (enrol, test), every duplicated, unmatched, unscored or mislabelled pair a finding.

Keys are compared without a trailing audio extension (``.wav``, ``.flac``...): SpeechBrain's score files drop
it while the VoxCeleb lists keep it; the report says how many keys that changed. Keys are integers worked out once
per distinct utterance id (the readers give categorical ids) and joined by hashing, so memory follows the trials.
Where a pair occurs twice, its first occurrence is used and the duplicates are an error-severity finding, so no
choice is silent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from audit.scores.files import NO_LABEL, CmScoreFile, ScoreFile
from audit.scores.trial_lists import TrialList
from schemas import Flag, Severity, TrialKind, count

AUDIO_EXTENSIONS = ("wav", "flac", "m4a", "opus", "mp3", "sph", "ogg")
AUDIO_EXTENSION = rf"\.(?i:{'|'.join(AUDIO_EXTENSIONS)})$"  # a plain string: pyarrow's RE2 runs it
MAX_LISTED_PAIRS = 20  # pairs listed under one finding; the count is always complete


def without_extension(utterance: str) -> str:
    """An utterance id without a trailing audio extension (SpeechBrain's score files drop it)."""
    head, dot, extension = utterance.rpartition(".")
    return head if dot and extension.lower() in AUDIO_EXTENSIONS else utterance


def categorical(column: pd.Series) -> pd.Categorical:
    return column.array if isinstance(column.dtype, pd.CategoricalDtype) else pd.Categorical(column)


def join_keys(*frames: pd.DataFrame) -> tuple[list[pd.Series], int]:
    """One integer join key per row of each frame, comparable across them: (enrol, test) without a trailing audio
    extension; and how many ids dropping the extension changed. Worked out once per distinct id (the readers give
    categorical ids), never per trial."""
    columns = [[categorical(frame[side]) for side in ("enrol_utt", "test_utt")] for frame in frames]
    names = max((c.categories for pair in columns for c in pair), key=len)
    if not all(names[: len(c.categories)].equals(c.categories) for pair in columns for c in pair):
        names = pd.Index(pd.concat([pd.Series(c.categories) for pair in columns for c in pair]).unique())
    bare = pd.Series(names.astype("string[pyarrow]")).str.replace(AUDIO_EXTENSION, "", regex=True)
    stripped = pd.factorize(bare)[0].astype(np.int64)
    changed = (bare.to_numpy(dtype=object) != names.to_numpy(dtype=object)).astype(np.int64)
    keys, n_changed = [], 0
    for enrol, test in columns:
        # per distinct id first (its position in names, then its stripped code), then one take per trial; the
        # readers' ids are categories over one growing vocabulary, each a prefix of the longest: no look-up
        enrol_at, test_at = (
            np.arange(len(c.categories))
            if names[: len(c.categories)].equals(c.categories)
            else names.get_indexer(c.categories)
            for c in (enrol, test)
        )
        n_changed += int(np.bincount(enrol.codes, minlength=enrol_at.size) @ changed[enrol_at])
        n_changed += int(np.bincount(test.codes, minlength=test_at.size) @ changed[test_at])
        key = stripped[enrol_at][enrol.codes] << 31
        key += stripped[test_at][test.codes]
        keys.append(pd.Series(key))
    return keys, n_changed


def listed_pairs(frame: pd.DataFrame, where: str) -> list[dict[str, Any]]:
    return [
        {"enrol": row.enrol_utt, "test": row.test_utt, where: int(getattr(row, where))}
        for row in frame.head(MAX_LISTED_PAIRS).itertuples()
    ]


def finding(flag_id: str, severity: Severity, message: str, pairs: list[dict[str, Any]] | None = None) -> Flag:
    return Flag(flag_id, severity, message, details={"pairs": pairs} if pairs else {})


@dataclass(frozen=True)
class Joined:
    """The trials that have a finite score, with their label, speakers and score; and the join's findings."""

    trials: pd.DataFrame
    flags: list[Flag]
    counts: dict[str, int]


def _repeated(keys: np.ndarray) -> np.ndarray:
    """Whether each key repeats one earlier in the array (the first occurrence is kept): a sort finds the keys that
    occur twice (few, as a rule), a binary search among them the lines that hold one, hashing those lines."""
    ordered = np.sort(keys)
    twice = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
    repeated = np.zeros(keys.size, dtype=bool)
    if twice.size:
        at = np.minimum(np.searchsorted(twice, keys), twice.size - 1)
        candidates = np.flatnonzero(twice[at] == keys)
        repeated[candidates] = pd.Series(keys[candidates]).duplicated().to_numpy()
    return repeated


def _positions_in(unique_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The position in ``unique_keys`` (no key twice) of each of ``keys``, or -1 where it is absent: the identity
    when the two are the same keys in the same order (a score file in its list's order), one sort of each when they
    are the same keys, else a hash table of ``unique_keys``."""
    if np.array_equal(unique_keys, keys):
        return np.arange(keys.size)
    if unique_keys.size == keys.size:
        unique_order, order = np.argsort(unique_keys), np.argsort(keys)
        if np.array_equal(unique_keys[unique_order], keys[order]):
            positions = np.empty(keys.size, dtype=np.int64)
            positions[order] = unique_order
            return positions
    return pd.Index(unique_keys, copy=False).get_indexer(keys)


def join(trial_list: TrialList, score_file: ScoreFile) -> Joined:
    """Scores joined to trials by (enrol, test); every pair that is duplicated, unmatched, unscored or whose two
    labels disagree becomes a finding, with the first ``MAX_LISTED_PAIRS`` pairs listed."""
    trials = trial_list.frame.assign(trial=np.arange(1, len(trial_list.frame) + 1, dtype=np.int32))
    scores = score_file.frame
    (trial_series, score_series), keys_changed = join_keys(trials, scores)
    trial_keys, score_keys = trial_series.to_numpy(), score_series.to_numpy()
    del trial_series, score_series
    trial_repeated, score_repeated = _repeated(trial_keys), _repeated(score_keys)
    trial_dups, score_dups = trials[trial_repeated], scores[score_repeated]
    listed = np.flatnonzero(~trial_repeated)
    first_scores = np.flatnonzero(~score_repeated)
    # Keys without their repeats (the arrays themselves when nothing repeats: no copy of millions of keys).
    listed_keys = trial_keys[listed] if trial_repeated.any() else trial_keys
    first_keys = score_keys[first_scores] if score_repeated.any() else score_keys
    del trial_keys, score_keys
    score_at = _positions_in(first_keys, listed_keys)  # -1: no score for the trial
    unscored = trials.iloc[listed[score_at < 0]]
    extra = scores.iloc[first_scores[_positions_in(listed_keys, first_keys) < 0]]
    del listed_keys, first_keys
    matched = first_scores[score_at[score_at >= 0]]
    both = trials.iloc[listed[score_at >= 0]].reset_index(drop=True)
    del score_at, listed, first_scores
    for column, source in (("score", "score"), ("line", "line"), ("score_label", "label")):
        both[column] = scores[source].to_numpy()[matched]
    finite = np.isfinite(both["score"].to_numpy())
    not_finite = both[~finite]
    score_label, label = both["score_label"].to_numpy(), both["label"].to_numpy()
    mislabelled = both[(score_label != NO_LABEL) & (score_label != label)]
    n = {"dup_t": len(trial_dups), "dup_s": len(score_dups), "unscored": len(unscored), "extra": len(extra)}
    findings = [
        ("duplicated-trials", Severity.ERROR, trial_dups, "trial",
         f"{count(n['dup_t'], 'trial')} of {trial_list.path} repeat an (enrol, test) pair listed earlier; only the "
         "first occurrence is scored."),
        ("duplicated-scores", Severity.ERROR, score_dups, "line",
         f"{count(n['dup_s'], 'line')} of {score_file.name} score an (enrol, test) pair scored on an earlier line; "
         "only the first score is used."),
        ("unscored-trials", Severity.ERROR, unscored, "trial",
         f"{count(n['unscored'], 'trial')} of the list have no score in {score_file.name}: the metrics below cover "
         "the scored trials only, not the list."),
        ("scores-without-trials", Severity.WARNING, extra, "line",
         f"{count(n['extra'], 'line')} of {score_file.name} score pairs the trial list does not hold; they are left "
         "out."),
        ("non-finite-scores", Severity.ERROR, not_finite, "line",
         f"{count(len(not_finite), 'trial')} scored NaN or infinite; they are left out of the metrics."),
        ("label-mismatch", Severity.ERROR, mislabelled, "line",
         f"{count(len(mislabelled), 'trial')} carry a label in {score_file.name} that contradicts the trial list; "
         "the trial list's label is used."),
    ]  # fmt: skip
    flags = [
        finding(i, severity, message, listed_pairs(rows, where))
        for i, severity, rows, where, message in findings
        if len(rows)
    ]
    used = both if finite.all() else both[finite].reset_index(drop=True)  # no copy of millions of rows for nothing
    counts = {
        "trial_lines": len(trials),
        "score_lines": len(scores),
        "duplicated_trials": n["dup_t"],
        "duplicated_scores": n["dup_s"],
        "unscored_trials": n["unscored"],
        "scores_without_trials": n["extra"],
        "non_finite_scores": len(not_finite),
        "label_mismatches": len(mislabelled),
        "keys_without_audio_extension": keys_changed,
        "trials_scored": len(used),
    }
    return Joined(used, flags, counts)


def attach_countermeasure(trials: pd.DataFrame, cm_file: CmScoreFile) -> tuple[pd.DataFrame, list[Flag]]:
    """``trials`` with ``cm_score``, ``kind`` (``TrialKind`` codes; -1 where the trial has no usable CM score or
    its CM key contradicts its label) and ``cm_spoof`` (keyed spoof in the CM file, whatever its score), joined by
    (enrol, test) as the ASV scores are; every duplicated, missing, non-finite or contradictory CM line is a
    finding."""
    cm = cm_file.frame
    (trial_keys, cm_keys), _ = join_keys(trials, cm)
    repeated = cm_keys.duplicated().to_numpy()
    first = np.flatnonzero(~repeated)
    cm_index = pd.Index(cm_keys.iloc[first])
    at = cm_index.get_indexer(pd.Index(trial_keys))
    rows = first[np.maximum(at, 0)]
    cm_score = np.where(at >= 0, cm["cm_score"].to_numpy()[rows], np.nan)
    spoof = (at >= 0) & cm["spoof"].to_numpy()[rows]
    label = trials["label"].to_numpy()
    contradicts = spoof & (label == 1)
    kind = np.where(spoof, int(TrialKind.SPOOF), np.where(label == 1, int(TrialKind.TARGET), int(TrialKind.NONTARGET)))
    unusable = (at < 0) | ~np.isfinite(cm_score) | contradicts
    joined = trials.assign(
        cm_score=cm_score, kind=np.where(unusable, -1, kind), cm_line=np.where(at >= 0, rows, -1), cm_spoof=spoof
    )
    extra = cm.iloc[first[pd.Index(trial_keys).get_indexer(cm_index) < 0]]
    missing, not_finite = joined[at < 0], joined[(at >= 0) & ~np.isfinite(cm_score)]
    wrong = joined[contradicts]
    path = cm_file.path
    findings = [
        ("cm-duplicated-scores", Severity.ERROR, cm[repeated], "line",
         f"{count(int(repeated.sum()), 'line')} of {path} score an (enrol, test) pair scored on an earlier line; only "
         "the first is used."),
        ("cm-unscored-trials", Severity.ERROR, missing, "trial",
         f"{count(len(missing), 'scored trial')} have no countermeasure score in {path}: the spoofing-aware metrics "
         "leave them out."),
        ("cm-scores-without-trials", Severity.WARNING, extra, "line",
         f"{count(len(extra), 'line')} of {path} score pairs the scored trials do not hold; they are left out."),
        ("cm-non-finite-scores", Severity.ERROR, not_finite, "trial",
         f"{count(len(not_finite), 'trial')} have a NaN or infinite countermeasure score; they are left out."),
        ("spoof-labelled-target", Severity.ERROR, wrong, "trial",
         f"{count(len(wrong), 'trial')} are keyed spoof in {path} but are target trials in the list (a spoof trial "
         "is a non-target of the speaker it imitates); they are left out of the spoofing-aware metrics."),
    ]  # fmt: skip
    return joined, [
        finding(i, sev, message, listed_pairs(rows_, where)) for i, sev, rows_, where, message in findings if len(rows_)
    ]


def calibration_overlap(trial_list: TrialList, dev: ScoreFile) -> Flag | None:
    """The development scores must not score a trial of the evaluated list, in either order of its two sides: a
    calibration fitted on the trials it is judged on makes Cllr and actDCF look better than they are."""
    reversed_dev = dev.frame.rename(columns={"enrol_utt": "test_utt", "test_utt": "enrol_utt"})
    (trial_keys, dev_keys, reversed_keys), _ = join_keys(trial_list.frame, dev.frame, reversed_dev)
    listed = set(trial_keys)
    as_written, reversed_pair = dev_keys.isin(listed).to_numpy(), reversed_keys.isin(listed).to_numpy()
    shared = dev.frame[as_written | reversed_pair]
    if not len(shared):
        return None
    n_reversed = int((reversed_pair & ~as_written).sum())
    written = f" ({n_reversed} with enrolment and test written the other way round)" if n_reversed else ""
    return finding(
        "calibration-on-evaluation-trials",
        Severity.ERROR,
        f"{count(len(shared), 'line')} of the calibration file {dev.path} score trials of the evaluated list"
        f"{written}: a calibration is fitted on development trials only, so no calibrated metric is reported.",
        listed_pairs(shared, "line"),
    )
