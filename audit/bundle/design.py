"""The trial-design audit of a bundle's signed trial lists (issue 41): confounds a fair comparison must not carry.

Four rules, each a registered flag that names where it fired, what it measured and the threshold declared in the
signed ``[analysis]`` (``schemas.analysis``; defaults in brackets):

- ``duration-confound``: within one experiment, corpus and subgroup, the median clip duration of one condition's
  trials (both sides, from the durations of the bundle's signed corpus tables) over another's: a warning from
  ``duration_ratio_warn`` (1.3), an error from ``duration_ratio_error`` (1.6). A condition whose trials are longer
  is easier for a reason that is not the condition.
- ``impostor-pool-differs``: the terms of one contrast scored against different impostors (the test speakers of
  their non-target trials): the share of impostor speakers all four terms have in common, over those any has, below
  ``impostor_overlap_min`` (1.0: any difference). Only terms on different trial lists can differ.
- ``same-source-trials``: a trial with one recording on both sides (an error), or a target trial whose two recordings
  share a session in the corpus table's ``session`` column (a warning); any one fires.
- ``target-ratio-spread``: within one experiment, corpus and subgroup, one condition's target:non-target ratio over
  another's from ``target_ratio_spread`` (1.5): budgets that drift change what each EER rests on.

A rule with nothing to measure (no duration, one condition, terms on one list) is silent and says so in the section.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from audit.bundle.verified import LoadedFiles
from audit.table import Contrast
from schemas import Analysis, Flag, Severity, cell_text, count, format_number, row_dicts

SECTION_ID = "trial-design"
SECTION_TITLE = "Trial-design audit"
GROUP_KEY = ("experiment", "corpus", "subgroup")


def design_audit(
    results: pd.DataFrame,
    contrasts: Sequence[Contrast],
    files: LoadedFiles,
    trial_list_of: Mapping[str, str],
    analysis: Analysis,
) -> tuple[list[Flag], dict[str, Any]]:
    """The four rules over the rows' signed trial lists: their flags and the report section with every measurement."""
    rows = [row for row in row_dicts(results) if trial_list_of.get(str(row.get("record_id"))) in files.trial_lists]
    users: dict[str, list[str]] = defaultdict(list)
    records: dict[tuple[str, ...], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        users[trial_list_of[str(row["record_id"])]].append(str(row["record_id"]))
        records[_group(row)][cell_text(row.get("condition")) or ""].append(str(row["record_id"]))
    conditions = _conditions(rows, trial_list_of)
    rules = [
        _duration_rule(conditions, files.trial_lists, _durations(files.corpus_tables), analysis, records),
        _ratio_rule(conditions, files.trial_lists, analysis, records),
        _impostor_rule(contrasts, files.trial_lists, trial_list_of, analysis),
        _same_source_rule(users, files.trial_lists, _sessions(files.corpus_tables)),
    ]
    where = "on the signed trial lists and corpus tables"
    return _outcome(rules, where, "one experiment, corpus and subgroup", analysis)


def scores_design_audit(
    trials: pd.DataFrame, durations: Mapping[str, float], analysis: Analysis
) -> tuple[list[Flag], dict[str, Any]]:
    """The rules that apply to one trial list of ``audit scores`` with utterance durations: clip duration and
    target:non-target ratio across its conditions (``condition``, when the trials have one), one recording on both
    sides of a trial (no sessions are given, no contrasts compared)."""
    column = trials["condition"] if "condition" in trials else pd.Series("all trials", index=trials.index)
    lists = {str(condition): group for condition, group in trials.groupby(column.fillna("no condition").astype(str))}
    conditions: dict[tuple[str, ...], dict[str, set[str]]] = {("trial list",): {c: {c} for c in lists}}
    rules = [
        _duration_rule(conditions, lists, durations, analysis, {}),
        _ratio_rule(conditions, lists, analysis, {}),
        _same_source_rule({"all trials": ["trial list"]}, {"all trials": trials}, {}),
    ]
    return _outcome(rules, "on the trial list and the --durations map", "the trial list", analysis)


def _outcome(
    rules: Sequence[tuple[Flag | None, list[dict[str, Any]]]], where: str, across: str, analysis: Analysis
) -> tuple[list[Flag], dict[str, Any]]:
    """The rules' flags and the section that lists every measurement against its threshold."""
    flags = [flag for flag, _ in rules if flag is not None]
    measured = [row for _, table in rules for row in table]
    errors = any(flag.severity is Severity.ERROR for flag in flags)
    lines = [
        f"Confounds a fair comparison must not carry, measured {where}, against the thresholds of [analysis]: median "
        f"clip duration of one condition over another's in {across} (warning from {analysis.duration_ratio_warn}, "
        f"error from {analysis.duration_ratio_error}); target:non-target ratio spread (from "
        f"{analysis.target_ratio_spread}); the share of impostor speakers the terms of a contrast share (below "
        f"{analysis.impostor_overlap_min}); one recording, or one session, on both sides of a trial (any).",
        f"{count(len(flags), 'rule fires', 'rules fire')}: {', '.join(flag.id for flag in flags)}."
        if flags
        else "No rule fires.",
    ]
    status = "failed" if errors else "warning" if flags else "pass"
    return flags, {"id": SECTION_ID, "title": SECTION_TITLE, "status": status, "lines": lines, "table": measured}


def _conditions(
    rows: Sequence[Mapping[str, Any]], trial_list_of: Mapping[str, str]
) -> dict[tuple[str, ...], dict[str, set[str]]]:
    """(experiment, corpus, subgroup) -> condition -> the trial lists its records scored."""
    groups: dict[tuple[str, ...], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for row in rows:
        groups[_group(row)][cell_text(row.get("condition")) or ""].add(trial_list_of[str(row["record_id"])])
    return groups


def _group(row: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(cell_text(row.get(name)) or "" for name in GROUP_KEY)


def _durations(tables: Mapping[str, pd.DataFrame]) -> dict[str, float]:
    """Each utterance's duration in seconds, over every signed corpus table."""
    found: dict[str, float] = {}
    for table in tables.values():
        if "duration_s" in table:
            seconds = pd.to_numeric(table["duration_s"], errors="coerce")
            found.update(zip(table.index.astype(str), seconds, strict=True))
    return found


def _sessions(tables: Mapping[str, pd.DataFrame]) -> dict[str, str]:
    """Each utterance's recording session, where a corpus table gives one."""
    found: dict[str, str] = {}
    for table in tables.values():
        if "session" in table:
            named = table.dropna(subset=["session"])
            found.update(zip(named.index.astype(str), named["session"].astype(str), strict=True))
    return found


def _with(lists: Mapping[str, pd.DataFrame], list_ids: Iterable[str | None], *columns: str) -> list[pd.DataFrame]:
    """The named lists that have these columns (a rule measures none of the others)."""
    return [lists[i] for i in _ids_with(lists, list_ids, *columns)]


def _ids_with(lists: Mapping[str, pd.DataFrame], list_ids: Iterable[str | None], *columns: str) -> list[str]:
    """The ids, in order, of the named lists that have these columns."""
    return [i for i in sorted(i for i in set(list_ids) if i is not None) if set(columns) <= set(lists[i])]


def _name(group: tuple[str, ...]) -> str:
    return "/".join(part for part in group if part)


def _spread_rule(
    flag_id: str,
    what: str,
    values: Mapping[tuple[str, ...], Mapping[str, float]],
    warn: float,
    error: float | None,
    records: Mapping[tuple[str, ...], Mapping[str, Sequence[str]]],
) -> tuple[Flag | None, list[dict[str, Any]]]:
    """Per group, the largest value over the smallest across its conditions; a flag where it reaches ``warn``,
    naming the records of those two conditions (``records``: group -> condition -> record ids)."""
    table, fired, named, graver = [], [], [], False
    for group, by_condition in sorted(values.items()):
        if len(by_condition) < 2:
            continue
        ordered = sorted(by_condition, key=lambda condition: (by_condition[condition], condition))
        low, high = ordered[0], ordered[-1]
        ratio = by_condition[high] / by_condition[low] if by_condition[low] > 0 else float("inf")
        reached = ratio >= warn
        graver |= error is not None and ratio >= error
        row = {
            "rule": flag_id,
            "where": _name(group),
            "measured": f"{what} {format_number(by_condition[high], 3)} ({high}) over "
            f"{format_number(by_condition[low], 3)} ({low}) = {format_number(ratio, 3)}",
            "threshold": format_number(warn, 3)
            + ("" if error is None else f" warning, {format_number(error, 3)} error"),
            "fires": "yes" if reached else "no",
        }
        table.append(row)
        if reached:
            fired.append(f"{row['where']}: {row['measured']}")
            named += [*records.get(group, {}).get(high, ()), *records.get(group, {}).get(low, ())]
    if not fired:
        return None, table
    severity = Severity.ERROR if graver else Severity.WARNING
    message = f"{count(len(fired), 'group')} over the declared threshold {warn}: " + "; ".join(fired[:5])
    failures = [{"problem": text} for text in fired]
    details = {"failures": failures, "threshold": warn, "error_threshold": error}
    return Flag(flag_id, severity, message, tuple(dict.fromkeys(named)), details), table


def _duration_rule(
    conditions: Mapping[tuple[str, ...], Mapping[str, set[str]]],
    lists: Mapping[str, pd.DataFrame],
    durations: Mapping[str, float],
    analysis: Analysis,
    records: Mapping[tuple[str, ...], Mapping[str, Sequence[str]]],
) -> tuple[Flag | None, list[dict[str, Any]]]:
    medians: dict[tuple[str, ...], dict[str, float]] = defaultdict(dict)
    known = pd.Index(list(durations), dtype=object)
    known_seconds = np.append(np.array(list(durations.values()), dtype=float), np.nan)  # an unknown one: NaN
    sides = ("enrol_utt", "test_utt")

    def of_side(trials: pd.DataFrame, side: str) -> NDArray[np.float64]:
        utterances = pd.Index(trials[side].astype(str).to_numpy(dtype=object), dtype=object)  # as ``known``: no cast
        return known_seconds[known.get_indexer(utterances)]

    of_list: dict[str, NDArray[np.float64]] = {}  # a list's durations, both sides: many conditions share a list
    for group, by_condition in conditions.items():
        for condition, list_ids in by_condition.items():
            chosen = _ids_with(lists, list_ids, *sides)
            for list_id in chosen:
                if list_id not in of_list:
                    of_list[list_id] = np.concatenate([of_side(lists[list_id], side) for side in sides])
            seconds = np.concatenate([of_list[list_id] for list_id in chosen] or [np.empty(0)])
            if seconds.size and np.isfinite(seconds).any():
                medians[group][condition] = float(np.nanmedian(seconds))
    warn, error = analysis.duration_ratio_warn, analysis.duration_ratio_error
    return _spread_rule("duration-confound", "median duration (s)", medians, warn, error, records)


def _ratio_rule(
    conditions: Mapping[tuple[str, ...], Mapping[str, set[str]]],
    lists: Mapping[str, pd.DataFrame],
    analysis: Analysis,
    records: Mapping[tuple[str, ...], Mapping[str, Sequence[str]]],
) -> tuple[Flag | None, list[dict[str, Any]]]:
    ratios: dict[tuple[str, ...], dict[str, float]] = defaultdict(dict)
    counts: dict[str, tuple[int, int]] = {}  # a list's targets and trials: many conditions share a list
    for group, by_condition in conditions.items():
        for condition, list_ids in by_condition.items():
            labelled = _ids_with(lists, list_ids, "label")
            if not labelled:
                continue
            for list_id in labelled:
                if list_id not in counts:
                    labels = lists[list_id]["label"].astype(int).to_numpy()
                    counts[list_id] = int(labels.sum()), int(labels.size)
            targets = sum(counts[list_id][0] for list_id in labelled)
            nontargets = sum(counts[list_id][1] for list_id in labelled) - targets
            ratios[group][condition] = targets / nontargets if nontargets else float("inf")
    return _spread_rule("target-ratio-spread", "target:non-target", ratios, analysis.target_ratio_spread, None, records)


def _impostor_rule(
    contrasts: Sequence[Contrast],
    lists: Mapping[str, pd.DataFrame],
    trial_list_of: Mapping[str, str],
    analysis: Analysis,
) -> tuple[Flag | None, list[dict[str, Any]]]:
    """Per contrast whose terms scored different lists: the impostor speakers all terms share over those any has."""
    table, fired, records = [], [], []
    pools: dict[str, set[str]] = {}
    for contrast in contrasts:
        named = [trial_list_of.get(record) for record in contrast.records]
        list_ids = [list_id for list_id in named if list_id is not None]
        if len(list_ids) < len(named) or len(set(list_ids)) < 2:
            continue
        if len(_with(lists, list_ids, "label", "test_speaker")) < len(set(list_ids)):
            continue
        for list_id in list_ids:
            if list_id not in pools:
                trials = lists[list_id]
                pools[list_id] = set(trials.loc[trials["label"].astype(int) == 0, "test_speaker"].astype(str))
        terms = [pools[list_id] for list_id in list_ids]
        union = set().union(*terms)
        overlap = len(set.intersection(*terms)) / len(union) if union else 1.0
        where = f"{contrast.experiment}/{contrast.model}/{contrast.corpus}/{contrast.level_a}+{contrast.level_b}"
        reached = overlap < analysis.impostor_overlap_min
        table.append(
            {
                "rule": "impostor-pool-differs",
                "where": where,
                "measured": f"{len(set.intersection(*terms))} of {len(union)} impostor speakers in every term "
                f"(overlap {format_number(overlap, 3)})",
                "threshold": f"below {format_number(analysis.impostor_overlap_min, 3)}",
                "fires": "yes" if reached else "no",
            }
        )
        if reached:
            fired.append(f"{where}: overlap {format_number(overlap, 3)}")
            records += list(contrast.records)
    if not fired:
        return None, table
    message = (
        f"{count(len(fired), 'contrast')} whose terms were scored against different impostors (overlap below "
        f"{analysis.impostor_overlap_min}): " + "; ".join(fired[:5])
    )
    details = {"failures": [{"problem": text} for text in fired], "threshold": analysis.impostor_overlap_min}
    return Flag("impostor-pool-differs", Severity.WARNING, message, tuple(dict.fromkeys(records)), details), table


def _same_source_rule(
    users: Mapping[str, Sequence[str]], lists: Mapping[str, pd.DataFrame], sessions: Mapping[str, str]
) -> tuple[Flag | None, list[dict[str, Any]]]:
    """Per trial list (``users``: list id -> the records that scored it): trials with one recording on both sides,
    target trials with one session on both sides."""
    table: list[dict[str, Any]] = []
    fired: list[str] = []
    records: list[str] = []
    graver = False
    for list_id, record_ids in sorted(users.items()):
        trials = lists[list_id]
        if not {"enrol_utt", "test_utt", "label"} <= set(trials):
            continue
        enrol, test = trials["enrol_utt"].astype(str).to_numpy(), trials["test_utt"].astype(str).to_numpy()
        same_recording = int(np.sum(enrol == test))
        same_session = 0
        if sessions:
            enrol_session = np.array([sessions.get(utt) for utt in enrol], dtype=object)
            test_session = np.array([sessions.get(utt) for utt in test], dtype=object)
            shared = (enrol_session == test_session) & (enrol_session != None) & (enrol != test)  # noqa: E711
            same_session = int(np.sum(shared & (trials["label"].astype(int).to_numpy() == 1)))
        reached = same_recording + same_session > 0
        graver |= same_recording > 0
        measured = f"{same_recording} of {len(trials)} trials with one recording on both sides; " + (
            f"{same_session} target trials with one session on both sides" if sessions else "no sessions given"
        )
        table.append({"rule": "same-source-trials", "where": f"trial list {list_id}", "measured": measured,
                      "threshold": "any", "fires": "yes" if reached else "no"})  # fmt: skip
        if reached:
            fired.append(f"trial list {list_id} ({count(len(record_ids), 'record')}): {measured}")
            records += record_ids
    if not fired:
        return None, table
    message = f"{count(len(fired), 'trial list')} with a recording or session on both sides: " + "; ".join(fired[:3])
    severity = Severity.ERROR if graver else Severity.WARNING
    details = {"failures": [{"problem": text} for text in fired]}
    return Flag("same-source-trials", severity, message, tuple(dict.fromkeys(records)), details), table
