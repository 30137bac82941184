"""The plan of a run: its trial lists and one record per (experiment, condition, subgroup, encoder).

Planning does no audio work: it fixes the pairs, the records and their ids, so that the run id, the trial lists
and the record ids are known before the first embedding is computed (a resumed run plans the same way).
Each experiment draws from its own corpus's pool. Cells without metadata selections share one trial list per
subgroup; cells with selections share one list per distinct (enrolment selection, test selection).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import blake3
import pandas as pd

from audit.errors import InputError
from runner.config import Cell, ExperimentDesign, RunConfig
from runner.encoders import EncoderSpec
from runner.trials import (
    Selection,
    SelectionError,
    TrialBudgetError,
    TrialList,
    sample_selected_trials,
)

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


def _trials_for(
    config: RunConfig,
    experiment: ExperimentDesign,
    pool: pd.DataFrame,
    group: tuple[str, str] | None,
    selections: tuple[Selection, Selection],
) -> TrialList:
    """The trial list of one (subgroup, enrolment selection, test selection) of a design."""
    try:
        return sample_selected_trials(
            pool,
            experiment_id=experiment.id,
            n_target=experiment.target_trials,
            n_nontarget=experiment.nontarget_trials,
            seed=config.seed,
            enrol_select=selections[0],
            test_select=selections[1],
            subgroup=group,
            subgroup_side=experiment.subgroup_side,
        )
    except (TrialBudgetError, SelectionError) as error:
        raise InputError(str(config.source), f"experiments {experiment.id}: {error}") from None


def plan_run(config: RunConfig, pools: Mapping[str, pd.DataFrame]) -> list[RecordPlan]:
    """Every record of the run, in a stable order (experiment, subgroup, condition, encoder).

    ``pools`` holds each corpus's utterance pool by its name in the run.
    """
    plans = []
    for experiment in config.experiments:
        pool = pools[experiment.corpus]
        groups: list[tuple[str, str] | None] = [None]
        if experiment.subgroup is not None:
            column = experiment.subgroup
            groups = [(column, value) for value in subgroup_values(pool, column, str(config.source))]
        cells = config.experiment_cells(experiment)
        for group in groups:
            lists: dict[tuple[Selection, Selection], TrialList] = {}
            subgroup = f"{group[0]}={group[1]}" if group else None
            for cell in cells:
                selections = (cell.enrol_select, cell.test_select)
                if selections not in lists:
                    lists[selections] = _trials_for(config, experiment, pool, group, selections)
                trials = lists[selections]
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
