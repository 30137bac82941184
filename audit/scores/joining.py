"""Joining a reviewer's files in ``audit scores``: scores, countermeasure scores and development scores to the
trials by (enrol, test), every duplicated, unmatched, unscored or mislabelled pair a finding.

Keys are compared without a trailing audio extension (``.wav``, ``.flac``...): SpeechBrain's score files drop
it while the VoxCeleb lists keep it. Where a pair occurs twice, its first occurrence is used and the duplicates
are an error-severity finding, so no choice is silent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from audit.scores.files import NO_LABEL, CmScoreFile, ScoreFile
from audit.scores.trial_lists import TrialList
from audit.table.findings import Flag, Severity
from schemas.trials import TrialKind
from schemas.wording import count

AUDIO_EXTENSIONS = ("wav", "flac", "m4a", "opus", "mp3", "sph", "ogg")
AUDIO_EXTENSION = rf"\.(?i:{'|'.join(AUDIO_EXTENSIONS)})$"  # a plain string: pyarrow's RE2 runs it
MAX_LISTED_PAIRS = 20  # pairs listed under one finding; the count is always complete


def without_extension(utterance: str) -> str:
    """An utterance id without a trailing audio extension (SpeechBrain's score files drop it)."""
    head, dot, extension = utterance.rpartition(".")
    return head if dot and extension.lower() in AUDIO_EXTENSIONS else utterance


def join_keys(frame: pd.DataFrame) -> tuple[pd.Series, int]:
    """One join key per row (enrol and test without their audio extension, tab-joined), and how many ids dropping
    the extension changed. A plain-string pattern keeps pandas on pyarrow's vectorised regex (a compiled one would
    send every id through Python)."""
    enrol, test = frame["enrol_utt"].astype("string[pyarrow]"), frame["test_utt"].astype("string[pyarrow]")
    enrol_key = enrol.str.replace(AUDIO_EXTENSION, "", regex=True)
    test_key = test.str.replace(AUDIO_EXTENSION, "", regex=True)
    changed = int((enrol_key != enrol).sum() + (test_key != test).sum())
    return (enrol_key + "\t" + test_key).reset_index(drop=True), changed


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


def join(trial_list: TrialList, score_file: ScoreFile) -> Joined:
    """Scores joined to trials by (enrol, test); every pair that is duplicated, unmatched, unscored or whose two
    labels disagree becomes a finding, with the first ``MAX_LISTED_PAIRS`` pairs listed."""
    trials = trial_list.frame.assign(trial=np.arange(1, len(trial_list.frame) + 1))
    scores = score_file.frame
    trial_keys, trial_keys_changed = join_keys(trials)
    score_keys, score_keys_changed = join_keys(scores)
    trial_repeated, score_repeated = trial_keys.duplicated().to_numpy(), score_keys.duplicated().to_numpy()
    trial_dups, score_dups = trials[trial_repeated], scores[score_repeated]
    listed = np.flatnonzero(~trial_repeated)
    first_scores = np.flatnonzero(~score_repeated)
    score_index, trial_index = pd.Index(score_keys.iloc[first_scores]), pd.Index(trial_keys.iloc[listed])
    score_at = score_index.get_indexer(trial_index)  # hash lookups both ways (Series.isin loops in Python here)
    unscored = trials.iloc[listed[score_at < 0]]
    extra = scores.iloc[first_scores[trial_index.get_indexer(score_index) < 0]]
    matched = scores.iloc[first_scores[score_at[score_at >= 0]]]
    both = trials.iloc[listed[score_at >= 0]].assign(
        score=matched["score"].to_numpy(), line=matched["line"].to_numpy(), score_label=matched["label"].to_numpy()
    )
    not_finite = both[~np.isfinite(both["score"])]
    labelled = both[both["score_label"] != NO_LABEL]
    mislabelled = labelled[labelled["score_label"] != labelled["label"]]
    n = {"dup_t": len(trial_dups), "dup_s": len(score_dups), "unscored": len(unscored), "extra": len(extra)}
    findings = [
        ("duplicated-trials", Severity.ERROR, trial_dups, "trial",
         f"{count(n['dup_t'], 'trial')} of {trial_list.path} repeat an (enrol, test) pair listed earlier; only the "
         "first occurrence is scored."),
        ("duplicated-scores", Severity.ERROR, score_dups, "line",
         f"{count(n['dup_s'], 'line')} of {score_file.path} score an (enrol, test) pair scored on an earlier line; "
         "only the first score is used."),
        ("unscored-trials", Severity.ERROR, unscored, "trial",
         f"{count(n['unscored'], 'trial')} of the list have no score in {score_file.path}: the metrics below cover "
         "the scored trials only, not the list."),
        ("scores-without-trials", Severity.WARNING, extra, "line",
         f"{count(n['extra'], 'line')} of {score_file.path} score pairs the trial list does not hold; they are left "
         "out."),
        ("non-finite-scores", Severity.ERROR, not_finite, "line",
         f"{count(len(not_finite), 'trial')} scored NaN or infinite; they are left out of the metrics."),
        ("label-mismatch", Severity.ERROR, mislabelled, "line",
         f"{count(len(mislabelled), 'trial')} carry a label in {score_file.path} that contradicts the trial list; "
         "the trial list's label is used."),
    ]  # fmt: skip
    flags = [
        finding(i, severity, message, listed_pairs(rows, where))
        for i, severity, rows, where, message in findings
        if len(rows)
    ]
    used = both[np.isfinite(both["score"])].reset_index(drop=True)
    counts = {
        "trial_lines": len(trials),
        "score_lines": len(scores),
        "duplicated_trials": n["dup_t"],
        "duplicated_scores": n["dup_s"],
        "unscored_trials": n["unscored"],
        "scores_without_trials": n["extra"],
        "non_finite_scores": len(not_finite),
        "label_mismatches": len(mislabelled),
        "keys_without_audio_extension": trial_keys_changed + score_keys_changed,
        "trials_scored": len(used),
    }
    return Joined(used, flags, counts)


def attach_countermeasure(trials: pd.DataFrame, cm_file: CmScoreFile) -> tuple[pd.DataFrame, list[Flag]]:
    """``trials`` with ``cm_score``, ``kind`` (``TrialKind`` codes; -1 where the trial has no usable CM score or
    its CM key contradicts its label) and ``cm_spoof`` (keyed spoof in the CM file, whatever its score), joined by
    (enrol, test) as the ASV scores are; every duplicated, missing, non-finite or contradictory CM line is a
    finding."""
    cm = cm_file.frame
    trial_keys, _ = join_keys(trials)
    cm_keys, _ = join_keys(cm)
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
    """The development scores must not score a trial of the evaluated list: a calibration fitted on the trials it
    is judged on makes Cllr and actDCF look better than they are."""
    trial_keys, _ = join_keys(trial_list.frame)
    dev_keys, _ = join_keys(dev.frame)
    shared = dev.frame[dev_keys.isin(set(trial_keys)).to_numpy()]
    if not len(shared):
        return None
    return finding(
        "calibration-on-evaluation-trials",
        Severity.ERROR,
        f"{count(len(shared), 'line')} of the calibration file {dev.path} score trials of the evaluated list: a "
        "calibration is fitted on development trials only, so no calibrated metric is reported.",
        listed_pairs(shared, "line"),
    )
