"""The plan of a run: its trial lists and one record per (experiment, condition, subgroup, encoder).

Planning does no audio work: it fixes the pairs, the records and their ids, so that the run id, the trial lists
and the record ids are known before the first embedding is computed (a resumed run plans the same way).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import blake3
import pandas as pd

from audit.errors import InputError
from runner.config import Cell, ExperimentDesign, RunConfig
from runner.encoders import EncoderSpec
from runner.trials import TrialBudgetError, TrialList, sample_trials

_UNSAFE = re.compile(r"[^A-Za-z0-9._=-]+")


@dataclass(frozen=True)
class RecordPlan:
    """One scored record: an encoder on one condition of one trial list."""

    record_id: str
    experiment: ExperimentDesign
    cell: Cell
    encoder: EncoderSpec
    trials: TrialList
    subgroup: str | None


def record_id_for(experiment_id: str, label: str, condition: str, subgroup: str | None) -> str:
    """A readable, file-name-safe id: ``D01.resemblyzer.pink-10dB_x_opus-12k.gender=F``."""
    condition_slug = condition.replace("->", "_to_").replace("+", "_x_")
    parts = [experiment_id, label, condition_slug, *([subgroup] if subgroup else [])]
    return ".".join(_UNSAFE.sub("-", part) for part in parts)


def subgroup_values(pool: pd.DataFrame, column: str, source: str) -> list[str]:
    if column not in pool.columns:
        raise InputError(source, f"subgroup column {column!r} is not in the utterance table")
    values = sorted(pool[column].dropna().astype(str).unique())
    if not values:
        raise InputError(source, f"subgroup column {column!r} has no values in the utterance pool")
    return values


def plan_run(config: RunConfig, pool: pd.DataFrame) -> list[RecordPlan]:
    """Every record of the run, in a stable order (experiment, subgroup, condition, encoder)."""
    plans = []
    for experiment in config.experiments:
        groups: list[tuple[str, str] | None] = [None]
        if experiment.subgroup is not None:
            column = experiment.subgroup
            groups = [(column, value) for value in subgroup_values(pool, column, str(config.source))]
        for group in groups:
            try:
                trials = sample_trials(
                    pool,
                    experiment_id=experiment.id,
                    n_target=experiment.target_trials,
                    n_nontarget=experiment.nontarget_trials,
                    seed=config.seed,
                    subgroup=group,
                    subgroup_side=experiment.subgroup_side,
                )
            except TrialBudgetError as error:
                raise InputError(str(config.source), f"experiments {experiment.id}: {error}") from None
            subgroup = f"{group[0]}={group[1]}" if group else None
            for cell in experiment.cells(config.conditions):
                for encoder in config.encoders:
                    record_id = record_id_for(experiment.id, encoder.label, cell.condition, subgroup)
                    plans.append(RecordPlan(record_id, experiment, cell, encoder, trials, subgroup))
    ids = [plan.record_id for plan in plans]
    if len(set(ids)) != len(ids):
        raise InputError(str(config.source), "two records map to the same record id (rename a condition)")
    return plans


def run_id_for(config: RunConfig, corpus_digest: str, checkpoint_digests: list[str], version: str) -> str:
    """Same configuration, corpus, checkpoints and toolkit version: same run id."""
    parts = [config.digest.blake3, corpus_digest, *checkpoint_digests, version]
    return blake3.blake3("\x1f".join(parts).encode()).hexdigest()[:16]
