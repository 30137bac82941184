"""The results columns beyond EER that a run writes: the calibrated metrics of every record when the configuration
declares ``[analysis] calibration`` (``audit.metrics.record_calibration``), the spoofing-aware metrics of every
spoof cell when it declares a ``[countermeasure]`` (``audit.metrics.record_spoofing``), and the metrics of
AS-normalised scores when it declares ``[analysis] score_normalisation`` (``audit.metrics.normalisation``). The
audit re-derives them from the verified per-trial scores with the same functions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from audit.metrics import as_norm_of_rows, calibration_records, declared_calibration, spoofing_of_rows
from runner.cache import CachedEmbedding
from runner.design.config import RunConfig
from runner.plan import RecordPlan, Side
from schemas import CALIBRATED_COLUMNS, CM_SCORE_COLUMN, COHORT_COLUMNS, NORMALISED_COLUMNS, SPOOFING_COLUMNS

__all__ = [
    "beyond_eer_columns",
    "countermeasure_scores",
    "countermeasure_sides",
]


def beyond_eer_columns(
    config: RunConfig, plans: list[RecordPlan], frames: list[pd.DataFrame], rows: list[dict[str, Any]]
) -> tuple[dict[str, dict[str, float | None]], list[str]]:
    """Per record id, the calibrated and spoofing-aware columns its results row gets (none when not declared), and
    a line per calibration group that has no map, naming why and counting its records (the run summary's notes:
    an encoder that scores its development trials as constants is said, not a traceback)."""
    trials = {plan.record_id: plan.trials.frame for plan in plans}
    scored = {
        plan.record_id: np.where(frame["status"] == "scored", frame["score"].to_numpy(float), np.nan)
        for plan, frame in zip(plans, frames, strict=True)
    }
    cm = {
        plan.record_id: frame[CM_SCORE_COLUMN].to_numpy(float) if CM_SCORE_COLUMN in frame else None
        for plan, frame in zip(plans, frames, strict=True)
    }
    cohort = {
        plan.record_id: frame[list(COHORT_COLUMNS)].to_numpy(float) if COHORT_COLUMNS[0] in frame else None
        for plan, frame in zip(plans, frames, strict=True)
    }
    labels = {plan.record_id: frame["label"].to_numpy() for plan, frame in zip(plans, frames, strict=True)}
    columns: dict[str, dict[str, float | None]] = {row["record_id"]: {} for row in rows}
    notes = []
    declared = config.analysis.calibration
    if declared is not None:
        records = calibration_records(rows, trials.__getitem__, scored.__getitem__)
        metrics, fits = declared_calibration(
            records, config.analysis.dev_speakers, declared.prior, platt=declared.method == "platt"
        )
        for record_id, values in metrics.items():
            columns[record_id] |= {name: _number(values[name]) for name in CALIBRATED_COLUMNS}
        for group, fit in sorted(fits.items()):
            if fit.fit is None:
                n = sum(record.group == group for record in records)
                notes.append(f"calibration: no map for {'/'.join(group)} ({n} record(s) without cllr): {fit.reason}")
    if any(values is not None for values in cm.values()):
        spoofing = spoofing_of_rows(rows, trials.__getitem__, scored.__getitem__, cm.__getitem__)
        for record_id in columns:
            values = spoofing.get(record_id, {})
            columns[record_id] |= {name: _number(values.get(name)) for name in SPOOFING_COLUMNS}
    if config.analysis.score_normalisation is not None:
        normalised = as_norm_of_rows(rows, labels.__getitem__, scored.__getitem__, cohort.__getitem__)
        for record_id in columns:
            values = normalised.get(record_id, {})
            columns[record_id] |= {name: _number(values.get(name)) for name in NORMALISED_COLUMNS}
    return columns, notes


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def countermeasure_sides(plans: list[RecordPlan], experiments: tuple[str, ...]) -> set[Side]:
    """The test sides the countermeasure scores: those of the records of ``experiments`` (each side once)."""
    return {side for plan in plans if plan.experiment.id in experiments for side in plan.test_sides()}


def countermeasure_scores(
    test_sides: list[Side], embeddings: dict[tuple[Side, str], CachedEmbedding], label: str
) -> np.ndarray:
    """The countermeasure's score of each trial's test side (NaN where its chain failed: no score)."""
    scores = np.full(len(test_sides), np.nan)
    for index, side in enumerate(test_sides):
        vector = embeddings[(side, label)].vector
        if vector is not None:
            scores[index] = float(vector[0])
    return scores
