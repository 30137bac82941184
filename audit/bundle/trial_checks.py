"""Trial checks of a verified bundle: the trial lists shared by contrast terms and encoders, and the utterances and
speakers every trial names, against the bundle's corpus tables (index lookups: a bundle holds millions of trials)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd

from audit.bundle.verified import LoadedFiles, Step, TrialUtterancesError, UnmatchedTrialsError
from audit.table import derive_contrasts, trial_matching
from schemas import cell_text, with_all_columns


def _column(frame: pd.DataFrame, name: str) -> list[str | None]:
    return [cell_text(value) for value in frame[name]] if name in frame.columns else [None] * len(frame)


def verify_shared_trial_lists(files: LoadedFiles) -> tuple[None, Step]:
    """The four terms of every contrast, and all encoders of one condition, share one trial list."""
    if files.results is None:
        raise UnmatchedTrialsError("shared-trial-list", "No verified results.csv: trial sharing cannot be checked.")
    frame = with_all_columns(files.results)
    failures = []
    by_record = dict(zip(_column(frame, "record_id"), _column(frame, "trial_list_id"), strict=True))
    contrasts = derive_contrasts(frame).contrasts
    population = 0
    for contrast in contrasts:
        lists = {by_record.get(record) for record in contrast.records}
        matching = trial_matching(tuple(by_record.get(record) for record in contrast.records))
        population += matching.startswith("population")
        if matching in ("unmatched", "unverifiable"):
            failures.append(
                {
                    "group": f"{contrast.experiment} {contrast.model} {contrast.factor_a}={contrast.level_a} "
                    f"x {contrast.factor_b}={contrast.level_b}",
                    "records": list(contrast.records),
                    "trial_lists": sorted(map(str, lists)),
                }
            )
    keys = ("experiment", "corpus", "subgroup", "condition")
    groups: dict[tuple[str | None, ...], dict[str | None, list[str]]] = defaultdict(lambda: defaultdict(list))
    for values in zip(*(_column(frame, c) for c in (*keys, "trial_list_id", "record_id")), strict=True):
        groups[values[:4]][values[4]].append(str(values[5]))
    for key, lists_found in groups.items():
        if len(lists_found) > 1 or None in lists_found:
            failures.append(
                {
                    "group": " ".join(str(k) for k in key if k is not None),
                    "records": sorted(r for rs in lists_found.values() for r in rs),
                    "trial_lists": sorted(map(str, lists_found)),
                }
            )
    if failures:
        records = tuple(dict.fromkeys(r for f in failures for r in f["records"]))
        raise UnmatchedTrialsError(
            "shared-trial-list",
            f"{len(failures)} contrast(s) or experiment condition(s) mix trial lists: their terms or "
            "encoders were "
            "not scored on the same pairs.",
            records=records,
            failures=failures,
        )
    return None, Step(
        [
            f"{len(contrasts) - population} contrasts and {len(groups)} experiment conditions each use one "
            "trial list for all terms and encoders"
            + (
                f"; {population} contrasts have a population factor, each level's pair of terms on one list"
                if population
                else ""
            )
            + "."
        ]
    )


def _table_for(tables: dict[str, pd.DataFrame], corpus: str) -> pd.DataFrame | None:
    """A corpus's table: ``corpus/<name>/`` or, for a run of one corpus, ``corpus/``."""
    return tables.get(corpus, tables.get(""))


def _side_problems(
    side: str, utterances: np.ndarray, speakers: np.ndarray, corpus: str, table: pd.DataFrame | None
) -> list[str]:
    if table is None:
        return [f"{side} utterances of corpus {corpus!r}: no verified corpus table in the bundle"]
    positions = table.index.get_indexer(pd.Index(utterances))
    unknown = positions < 0
    if unknown.any():
        return [f"{int(unknown.sum())} {side} utterance(s) not in corpus {corpus!r}, e.g. {utterances[unknown][0]!r}"]
    wrong = table["speaker"].to_numpy()[positions] != speakers
    return [f"{int(wrong.sum())} {side} speaker(s) differ from corpus {corpus!r}"] if wrong.any() else []


def _trial_problems(trials: pd.DataFrame, corpus: str, tables: dict[str, pd.DataFrame]) -> list[str]:
    """What is wrong with one trial list's utterances and speakers against the corpus tables (empty: nothing)."""
    problems = _side_problems(
        "enrol", trials["enrol_utt"].to_numpy(), trials["enrol_speaker"].to_numpy(), corpus, _table_for(tables, corpus)
    )
    test_corpora = trials["test_corpus"].to_numpy() if "test_corpus" in trials.columns else np.full(len(trials), corpus)
    for name in sorted(set(test_corpora)):
        rows = test_corpora == name
        table = _table_for(tables, str(name))
        utterances = trials["test_utt"].to_numpy()[rows]
        found = _side_problems("test", utterances, trials["test_speaker"].to_numpy()[rows], str(name), table)
        problems += found
        if found or table is None or "trial_kind" not in trials.columns:
            continue
        spoof = trials["trial_kind"].to_numpy()[rows] == "spoof"
        systems = table["spoof_system"].to_numpy()[table.index.get_indexer(pd.Index(utterances[spoof]))]
        if pd.isna(systems).any():
            problems.append(f"spoof trials test files of corpus {name!r} that name no spoof system")
    return problems


def verify_trial_utterances(files: LoadedFiles) -> tuple[None, Step]:
    """Every trial names utterances of the bundle's corpus tables, with their speakers; spoof trials name files of a
    spoof folder. Reports which lists hold spoof trials, since their records' non-targets are spoofs."""
    results = files.results
    if results is None:
        raise TrialUtterancesError("trial-utterances", "No verified results.csv: trials cannot be checked.")
    corpus_of = {
        str(list_id): str(corpus)
        for list_id, corpus in zip(_column(results, "trial_list_id"), _column(results, "corpus"), strict=True)
        if list_id is not None and corpus is not None
    }
    failures = [
        {"trial_list": list_id, "problem": problem}
        for list_id in sorted(corpus_of)
        if list_id in files.trial_lists
        for problem in _trial_problems(files.trial_lists[list_id], corpus_of[list_id], files.corpus_tables)
    ]
    if failures:
        raise TrialUtterancesError(
            "trial-utterances",
            f"{len({f['trial_list'] for f in failures})} trial list(s) name utterances or speakers that the bundle's "
            "corpus tables do not hold.",
            failures=failures,
        )
    lists = {list_id: files.trial_lists[list_id] for list_id in corpus_of if list_id in files.trial_lists}
    spoofed = [
        {
            "trial_list": list_id,
            "spoof_trials": int((trials["trial_kind"] == "spoof").sum()),
            "spoof_folders": ", ".join(sorted(set(trials.loc[trials["trial_kind"] == "spoof", "test_corpus"]))),
        }
        for list_id, trials in sorted(lists.items())
        if "trial_kind" in trials.columns
    ]
    n_trials = sum(map(len, lists.values()))
    lines = [f"All {n_trials} trials of {len(lists)} trial lists name the bundle's utterances with their speakers."]
    if spoofed:
        spoof_ids = {row["trial_list"] for row in spoofed}
        records = sum(1 for list_id in _column(results, "trial_list_id") if list_id in spoof_ids)
        lines.append(
            f"{len(spoofed)} trial list(s), used by {records} record(s), hold spoof trials: their non-target trials "
            "test the enrolment speaker against files imitating that speaker, so n_nontarget counts spoof trials "
            "and the EER is genuine targets against spoofs."
        )
    return None, Step(lines, spoofed)
