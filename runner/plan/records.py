"""The plan of a run: its trial lists and one record per (experiment, condition, subgroup, encoder).

Planning does no audio work: it fixes the pairs, the records and their ids, so that the run id, the trial lists
and the record ids are known before the first embedding is computed (a resumed run plans the same way).
Each experiment draws from its own corpus's pool. Cells without metadata selections share one trial list per
subgroup and budget; cells with selections share one list per distinct (enrolment selection, test selection,
budget). A spoof cell keeps the targets of the genuine list of its selections and draws its spoof trials from the
spoof corpus's pool. An experiment with an official list (``trial_list``) scores that list, as published, in every
cell (``listed_trials`` reads it from the corpus folder).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from provenance import bytes_digest, derived_id, joined
from runner.corpora import CorpusTable, load_corpus
from runner.design import (
    Cell,
    CorpusChoice,
    ExperimentDesign,
    RunConfig,
    Selection,
    SelectionError,
    SpoofSource,
    SpoofTargetError,
    TrialBudgetError,
    TrialList,
    add_spoof_trials,
    published_trial_list,
    sample_selected_trials,
)
from runner.encoders import EncoderSpec
from runner.operators import chain_id
from schemas import InputError

__all__ = [
    "ListKey",
    "RecordPlan",
    "Side",
    "corpus_digest",
    "listed_trials",
    "load_corpora",
    "plan_run",
    "record_id_for",
    "run_id_for",
    "subgroup_values",
    "used_corpora",
]

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


ListKey = tuple[Selection, Selection, SpoofSource | None, tuple[int, int]]


def _trials_for(
    config: RunConfig,
    experiment: ExperimentDesign,
    pools: Mapping[str, pd.DataFrame],
    group: tuple[str, str] | None,
    key: ListKey,
    lists: dict[ListKey, TrialList],
) -> TrialList:
    """The trial list of one (subgroup, enrolment selection, test selection, spoof source, budget) of a design,
    kept in ``lists``; a spoof list is built on the genuine list of the same selections."""
    if key in lists:
        return lists[key]
    enrol_select, test_select, spoof, (n_target, n_nontarget) = key
    pool = pools[experiment.corpus]
    try:
        if spoof is None:
            trials = sample_selected_trials(
                pool,
                experiment_id=experiment.id,
                n_target=n_target,
                n_nontarget=n_nontarget,
                seed=config.seed,
                enrol_select=enrol_select,
                test_select=test_select,
                subgroup=group,
                subgroup_side=experiment.subgroup_side,
            )
        else:
            trials = add_spoof_trials(
                _trials_for(config, experiment, pools, group, (enrol_select, test_select, None, key[3]), lists),
                pool,
                pools[spoof.corpus],
                experiment_id=experiment.id,
                corpus=experiment.corpus,
                spoof_corpus=spoof.corpus,
                n_spoof=n_nontarget,
                seed=config.seed,
                enrol_select=enrol_select,
                spoof_select=spoof.select,
                subgroup=group,
            )
    except (TrialBudgetError, SelectionError, SpoofTargetError) as error:
        raise InputError(str(config.source), f"experiments {experiment.id}: {error}") from None
    lists[key] = trials
    return trials


def listed_trials(config: RunConfig, tables: Mapping[str, pd.DataFrame]) -> dict[str, TrialList]:
    """The official list of every experiment that scores one, read from its corpus folder, with each side's
    speaker from the corpus's utterance table (the whole table: a list is not limited to the run's pool)."""
    from runner.corpora.voxceleb1 import OFFICIAL_LISTS, official_trials

    listed = {}
    for experiment in config.experiments:
        if experiment.trial_list is None:
            continue
        published = official_trials(config.corpora[experiment.corpus].root, experiment.trial_list)
        try:
            listed[experiment.id] = published_trial_list(published, tables[experiment.corpus])
        except SelectionError as error:
            title = OFFICIAL_LISTS[experiment.trial_list].title
            raise InputError(str(config.source), f"experiments {experiment.id}: {title} {error}") from None
    return listed


def plan_run(
    config: RunConfig, pools: Mapping[str, pd.DataFrame], listed: Mapping[str, TrialList] | None = None
) -> list[RecordPlan]:
    """Every record of the run, in a stable order (experiment, subgroup, condition, encoder).

    ``pools`` holds each corpus's utterance pool by its name in the run (spoof folders included); ``listed`` the
    official list of each experiment that scores one (``listed_trials``).
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
                if experiment.trial_list is not None:
                    trials = (listed or {})[experiment.id]
                else:
                    key = (cell.enrol_select, cell.test_select, cell.spoof, experiment.budget(cell.condition))
                    trials = _trials_for(config, experiment, pools, group, key, lists)
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
    return derived_id(joined(*parts))


def used_corpora(config: RunConfig) -> dict[str, CorpusChoice]:
    """The corpora some experiment reads (spoof folders included)."""
    return {name: choice for name, choice in config.corpora.items() if config.experiments_using(name)}


def load_corpora(config: RunConfig) -> dict[str, CorpusTable]:
    """Every corpus the experiments use; missing folders are one InputError naming each folder to provide."""
    missing = []
    for name, choice in used_corpora(config).items():
        if not choice.root.is_dir():
            needed = ", ".join(config.experiments_using(name))
            build = ", built by `interbias corpus build --out FOLDER`" if choice.adapter == "asterisk" else ""
            missing.append(f"{choice.root} (the {choice.adapter} corpus{build}, [corpora.{name}], for {needed})")
    if missing:
        raise InputError(str(config.source), f"corpus folder not found; provide {'; '.join(missing)}")
    return {
        name: load_corpus(choice.adapter, choice.root, choice.release, f"{config.source} (corpus {name}, release)")
        for name, choice in used_corpora(config).items()
    }


def corpus_digest(corpora: dict[str, CorpusTable]) -> str:
    """The BLAKE3 of the utterance table (one corpus), or of the named tables' digests (several)."""
    digests = {name: bytes_digest(table.utterances_csv()).blake3 for name, table in sorted(corpora.items())}
    if len(digests) == 1:
        return next(iter(digests.values()))
    return bytes_digest("\n".join(f"{name}={digest}" for name, digest in digests.items()).encode()).blake3
