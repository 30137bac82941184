"""The plan of a run: its trial lists and one record per (experiment, condition, subgroup, encoder).

Planning does no audio work: it fixes the pairs, the records and their ids, so that the run id, the trial lists
and the record ids are known before the first embedding is computed (a resumed run plans the same way).
Each experiment draws from its own corpus's pool. Cells without metadata selections share one trial list per
subgroup; cells with selections share one list per distinct (enrolment selection, test selection). A spoof cell
keeps the targets of the genuine list of its selections and draws its spoof trials from the spoof corpus's pool.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import blake3
import pandas as pd

from audit.errors import InputError
from runner.config import Cell, ExperimentDesign, RunConfig, SpoofSource
from runner.encoders import EncoderSpec
from runner.operators import chain_id
from runner.trials import (
    Selection,
    SelectionError,
    SpoofTargetError,
    TrialBudgetError,
    TrialList,
    add_spoof_trials,
    sample_selected_trials,
)

_UNSAFE = re.compile(r"[^A-Za-z0-9._=-]+")


@dataclass(frozen=True)
class Side:
    """One embedding job: an utterance of a corpus under a chain (utterance ids may repeat across corpora)."""

    corpus: str
    chain_id: str
    utt_id: str


@dataclass(frozen=True)
class RecordPlan:
    """One scored record: an encoder on one condition of one trial list."""

    record_id: str
    experiment: ExperimentDesign
    cell: Cell
    encoder: EncoderSpec
    trials: TrialList
    subgroup: str | None

    def enrol_sides(self) -> list[Side]:
        """The enrolment side of every trial, in trial order (always the experiment's corpus)."""
        identifier = chain_id(list(self.cell.enrol_chain))
        return [Side(self.experiment.corpus, identifier, utt) for utt in self.trials.frame["enrol_utt"]]

    def test_sides(self) -> list[Side]:
        """The test side of every trial, in trial order, in the corpus that holds it (a spoof folder or not)."""
        frame, identifier = self.trials.frame, chain_id(list(self.cell.test_chain))
        corpora = frame["test_corpus"] if "test_corpus" in frame.columns else [self.experiment.corpus] * len(frame)
        return [Side(corpus, identifier, utt) for corpus, utt in zip(corpora, frame["test_utt"], strict=True)]


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


ListKey = tuple[Selection, Selection, SpoofSource | None]


def _trials_for(
    config: RunConfig,
    experiment: ExperimentDesign,
    pools: Mapping[str, pd.DataFrame],
    group: tuple[str, str] | None,
    key: ListKey,
    lists: dict[ListKey, TrialList],
) -> TrialList:
    """The trial list of one (subgroup, enrolment selection, test selection, spoof source) of a design, kept in
    ``lists``; a spoof list is built on the genuine list of the same selections."""
    if key in lists:
        return lists[key]
    enrol_select, test_select, spoof = key
    pool = pools[experiment.corpus]
    try:
        if spoof is None:
            trials = sample_selected_trials(
                pool,
                experiment_id=experiment.id,
                n_target=experiment.target_trials,
                n_nontarget=experiment.nontarget_trials,
                seed=config.seed,
                enrol_select=enrol_select,
                test_select=test_select,
                subgroup=group,
                subgroup_side=experiment.subgroup_side,
            )
        else:
            trials = add_spoof_trials(
                _trials_for(config, experiment, pools, group, (enrol_select, test_select, None), lists),
                pool,
                pools[spoof.corpus],
                experiment_id=experiment.id,
                corpus=experiment.corpus,
                spoof_corpus=spoof.corpus,
                n_spoof=experiment.nontarget_trials,
                seed=config.seed,
                enrol_select=enrol_select,
                spoof_select=spoof.select,
                subgroup=group,
            )
    except (TrialBudgetError, SelectionError, SpoofTargetError) as error:
        raise InputError(str(config.source), f"experiments {experiment.id}: {error}") from None
    lists[key] = trials
    return trials


def plan_run(config: RunConfig, pools: Mapping[str, pd.DataFrame]) -> list[RecordPlan]:
    """Every record of the run, in a stable order (experiment, subgroup, condition, encoder).

    ``pools`` holds each corpus's utterance pool by its name in the run (spoof folders included).
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
            lists: dict[ListKey, TrialList] = {}
            subgroup = f"{group[0]}={group[1]}" if group else None
            for cell in cells:
                trials = _trials_for(
                    config, experiment, pools, group, (cell.enrol_select, cell.test_select, cell.spoof), lists
                )
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
