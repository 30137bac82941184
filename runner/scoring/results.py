"""``results.csv``: one row per record, its metrics computed from its scored trials in one vectorised pass, its
beyond-EER columns and its provenance."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from audit.metrics import grouped_metrics
from runner.design import RunConfig, TrialList
from runner.plan import RecordPlan
from runner.scoring.beyond_eer import beyond_eer_columns
from schemas import SPEAKER_COUNT_COLUMNS, speaker_counts

__all__ = ["grouped_record_metrics", "results_row", "results_table"]


def results_row(plan: RecordPlan, metrics: dict[str, float], extra: dict[str, Any]) -> dict[str, Any]:
    design, cell = plan.experiment, plan.cell
    factorial = design.factor_a is not None
    return {
        "record_id": plan.record_id,
        "experiment": design.id,
        "model": plan.encoder.label,
        "model_family": plan.encoder.family,
        "corpus": extra["corpus"],
        "condition": cell.condition,
        "factor_a": design.factor_a.name if design.factor_a else None,
        "level_a": cell.level_a if factorial else None,
        "factor_b": design.factor_b.name if design.factor_b else None,
        "level_b": cell.level_b if design.factor_b else None,
        "enrol_condition": cell.enrol_condition,
        "test_condition": cell.test_condition,
        "subgroup": plan.subgroup,
        **({"complement_of": cell.complement_of} if cell.complement_of is not None else {}),
        "eer": metrics[f"eer_{extra['eer_method']}"],
        **metrics,
        **{key: value for key, value in extra.items() if key not in ("corpus",)},
    }


def results_table(
    config: RunConfig,
    plans: list[RecordPlan],
    frames: list[pd.DataFrame],
    trial_lists: dict[str, TrialList],
    checkpoints: dict[str, Any],
    scores_blake3: dict[str, str],
    run_id: str,
) -> tuple[pd.DataFrame, list[str]]:
    """results.csv: one row per record, its metrics computed from its scored trials and its provenance; and the
    notes of what could not be computed (``beyond_eer_columns``)."""
    metrics = grouped_record_metrics(frames, config)
    speakers = {list_id: speaker_counts(trials.frame) for list_id, trials in trial_lists.items()}
    rows = []
    for index, (plan, frame) in enumerate(zip(plans, frames, strict=True)):
        record_metrics = {key: values[index].item() for key, values in metrics.items()}
        extra = {
            "corpus": plan.experiment.corpus,
            "eer_method": config.eer_method,
            "n_unscored": int((frame["status"] != "scored").sum()),
            "p_target": config.p_target,
            "c_miss": config.c_miss,
            "c_fa": config.c_fa,
            "checkpoint_blake3": checkpoints[plan.encoder.label]["checkpoint_blake3"],
            "trial_list_id": plan.trials.trial_list_id,
            "scores_blake3": scores_blake3[plan.record_id],
            "run_id": run_id,
            "seed": config.seed,
            **speakers[plan.trials.trial_list_id],
        }
        rows.append(results_row(plan, record_metrics, extra))
    beyond, notes = beyond_eer_columns(config, plans, frames, rows)
    results = pd.DataFrame([row | beyond[row["record_id"]] for row in rows])
    for column in ("n_target", "n_nontarget", "n_unscored", "seed", *SPEAKER_COUNT_COLUMNS):
        results[column] = results[column].astype("int64")
    return results, notes


def grouped_record_metrics(frames: list[pd.DataFrame], config: RunConfig) -> dict[str, np.ndarray]:
    """All metrics of all records in one vectorised pass over the scored trials."""
    scores = np.concatenate([frame["score"].to_numpy() for frame in frames])
    labels = np.concatenate([frame["label"].to_numpy() for frame in frames])
    scored = np.concatenate([(frame["status"] == "scored").to_numpy() for frame in frames])
    index = np.repeat(np.arange(len(frames)), [len(frame) for frame in frames])
    return grouped_metrics(
        scores[scored],
        labels[scored],
        index[scored],
        len(frames),
        p_target=config.p_target,
        c_miss=config.c_miss,
        c_fa=config.c_fa,
    )
