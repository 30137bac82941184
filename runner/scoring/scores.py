"""Each record's trials scored: the cosine of its enrolment and test embeddings, in trial-list order, with the
status of every trial (a side that could not be embedded leaves its trial unscored, counted), and why a record's
scored trials cannot give metrics."""

from __future__ import annotations

import numpy as np
import pandas as pd

from runner.cache import CachedEmbedding
from runner.plan import RecordPlan, Side
from runner.scoring.beyond_eer import countermeasure_scores
from runner.scoring.cohort import Cohort, trial_cohort_statistics
from schemas import CM_SCORE_COLUMN, COHORT_COLUMNS

__all__ = ["score_record", "unscorable_reason"]


def score_record(
    plan: RecordPlan,
    embeddings: dict[tuple[Side, str], CachedEmbedding],
    countermeasure: str | None = None,
    cohort: tuple[Cohort, dict[tuple[str, str], np.ndarray]] | None = None,
) -> pd.DataFrame:
    """Cosine score of every trial of the record, in trial-list order, with its status; with ``countermeasure``
    (its label) the countermeasure's score of each trial's test side too, and with ``cohort`` (the run's and its
    embeddings by corpus and label) each trial's AS-norm cohort statistics."""
    trials, label = plan.trials.frame, plan.encoder.label
    scores = np.full(len(trials), np.nan)
    status = np.full(len(trials), "scored", dtype=object)
    for index, (enrol_side, test_side) in enumerate(zip(plan.enrol_sides(), plan.test_sides(), strict=True)):
        enrol = embeddings[(enrol_side, label)].vector
        test = embeddings[(test_side, label)].vector
        if enrol is None:
            status[index] = "enrol-failed"
        elif test is None:
            status[index] = "test-failed"
        else:
            scores[index] = float(np.dot(enrol, test) / (np.linalg.norm(enrol) * np.linalg.norm(test)))
    frame = pd.DataFrame(
        {
            "trial_index": trials["trial_index"].to_numpy(np.int64),
            "label": trials["label"].to_numpy(np.int8),
            "score": scores,
            "status": status.astype(str),
        }
    )
    if countermeasure is not None:
        frame[CM_SCORE_COLUMN] = countermeasure_scores(plan.test_sides(), embeddings, countermeasure)
    if cohort is not None:
        statistics = trial_cohort_statistics(plan, embeddings, cohort[1], cohort[0].top_n)
        if statistics is not None:
            frame[list(COHORT_COLUMNS)] = statistics
    return frame


def unscorable_reason(frame: pd.DataFrame) -> str | None:
    """Why a record's scored trials cannot give its metrics (both classes and two distinct finite scores are
    needed), or None when they can."""
    scored = frame[frame["status"] == "scored"]
    missing = [kind for kind, label in (("target", 1), ("non-target", 0)) if not (scored["label"] == label).any()]
    if missing:
        unscored = len(frame) - len(scored)
        return f"no scored {' or '.join(missing)} trials ({unscored} of {len(frame)} trials lost to operator failures)"
    if not np.isfinite(scored["score"].to_numpy()).all():
        return "non-finite scores (an encoder returned a zero or non-finite embedding)"
    if scored["score"].nunique() < 2:
        return "every scored trial has the same score"
    return None
