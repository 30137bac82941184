"""Re-derive every signed row from its verified per-trial scores: trial order first, then the metrics."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from audit.bundle.verified import LoadedFiles, ScoreMismatchError, Step, UnmatchedTrialsError
from audit.metrics import grouped_metrics
from schemas import SPEAKER_COUNT_COLUMNS, RecordScores, cell_number, row_costs, speaker_counts

# Declared tolerance for a re-scored metric against the table (absolute, on fractions).
METRIC_TOLERANCE = 1e-6
EER_KEYS = {"legacy": "eer_legacy", "rocch": "eer_rocch", "interp": "eer_interp"}


def verify_scores_follow_trial_lists(files: LoadedFiles) -> tuple[None, Step]:
    """Each signed row has verified scores with one row per trial of its verified trial list, same labels."""
    failures = []
    for row in files.signed_rows:
        record_id, list_id = str(row.get("record_id")), str(row.get("trial_list_id"))
        record, trials = files.scores.get(record_id), files.trial_lists.get(list_id)
        if record is None or trials is None:
            problem = "no verified scores file" if record is None else f"no verified trial list {list_id}"
        elif not np.array_equal(record.labels, trials["label"].to_numpy()):
            problem = "scores do not follow the trial list (length or labels)"
        else:
            continue
        failures.append({"record_id": record_id, "problem": problem})
    if failures:
        raise UnmatchedTrialsError(
            "scores-vs-trial-list",
            f"{len(failures)} record(s) have no verified scores following their trial list trial by trial.",
            records=tuple(f["record_id"] for f in failures),
            failures=failures,
        )
    return None, Step([f"All {len(files.scores)} scores files follow their trial lists trial by trial."])


def _compare(row: dict[str, Any], recomputed: dict[str, float], speakers: dict[str, int] | None) -> list[str]:
    """Differences between a row and the metrics recomputed for it, and between its speaker counts (where it gives
    them) and those of its signed trial list, as plain phrases."""
    problems = []
    for column in SPEAKER_COUNT_COLUMNS:
        given = row.get(column)
        if given is None or (isinstance(given, float) and math.isnan(given)) or speakers is None:
            continue
        if cell_number(given) != speakers[column]:
            problems.append(f"{column} {given} but its trial list has {speakers[column]}")
    method = str(row.get("eer_method"))
    eer = cell_number(row.get("eer"))
    if method not in EER_KEYS:
        problems.append(f"eer_method {method[:40]!r} does not name an EER variant (legacy, rocch, interp)")
    elif eer is None or abs(eer - recomputed[EER_KEYS[method]]) > METRIC_TOLERANCE:
        problems.append(f"eer {row.get('eer')} but {method} recomputes to {recomputed[EER_KEYS[method]]:.6f}")
    for name in EER_KEYS.values():
        value = cell_number(row.get(name))
        if row.get(name) is not None and (value is None or abs(value - recomputed[name]) > METRIC_TOLERANCE):
            problems.append(f"{name} {row.get(name)} but recomputes to {recomputed[name]:.6f}")
    for count in ("n_target", "n_nontarget"):
        if cell_number(row.get(count)) != recomputed[count]:
            problems.append(f"{count} {row.get(count)} but {int(recomputed[count])} trials were scored")
    for metric in ("min_dcf", "auc"):
        value = cell_number(row.get(metric))
        if value is not None and abs(value - recomputed[metric]) > METRIC_TOLERANCE:
            problems.append(f"{metric} {value} but recomputes to {recomputed[metric]:.6f}")
    return problems


def _unscored_problems(row: dict[str, Any], record: RecordScores, operators: Any) -> list[str]:
    """The row's ``n_unscored`` and the record's entry of operators.json against the statuses of its scores file,
    both ways: an unscored trial needs a counted failure, a counted failure needs its unscored trials."""
    unscored = int((~record.scored).sum())
    problems = []
    if row.get("n_unscored") is not None and cell_number(row.get("n_unscored")) != unscored:
        problems.append(f"n_unscored {row.get('n_unscored')} but {unscored} trial(s) of its scores file are unscored")
    records = operators.get("records") if isinstance(operators, dict) else None
    entry = records.get(str(row.get("record_id"))) if isinstance(records, dict) else None
    failed = entry.get("failed") if isinstance(entry, dict) else None
    if isinstance(failed, int) and not isinstance(failed, bool):
        if unscored and not failed:
            problems.append(f"{unscored} unscored trial(s) but operators.json counts no failed side for the record")
        if failed and not unscored:
            problems.append(f"operators.json counts {failed} failed side(s) but every trial of the record is scored")
    return problems


def _scorable(record: RecordScores) -> bool:
    """The metrics are defined: both classes scored (constant scores give the chance values)."""
    labels = record.labels[record.scored]
    return bool(labels.any() and (labels == 0).any())


# Past this many scored trials under one cost setting, half of them are re-scored in a forked process (paper scale:
# 12 M trials, 1.6 s in one); below it the fork costs about what it saves.
FORKED_TRIALS = 1 << 21


def verify_rescored_metrics(files: LoadedFiles) -> tuple[dict[str, dict[str, float]], Step]:
    """Re-score every signed row from its verified scores (one grouped pass per cost setting) and compare.
    Returns each re-scored record's metrics (the statistics take their point EERs from them)."""
    rows = [row for row in files.signed_rows if str(row.get("record_id")) in files.scores]
    failures = []
    by_costs: dict[tuple[float, float, float], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        record = files.scores[str(row["record_id"])]
        failures += [
            {"record_id": str(row["record_id"]), "problem": problem}
            for problem in _unscored_problems(row, record, files.operators)
        ]
        if _scorable(record):
            by_costs[row_costs(row)].append(row)
        else:
            failures.append(
                {"record_id": str(row["record_id"]), "problem": "cannot be scored: needs scored trials of both classes"}
            )
    table = []
    rescored: dict[str, dict[str, float]] = {}
    speakers = {list_id: speaker_counts(trials) for list_id, trials in files.trial_lists.items()}
    for (p_target, c_miss, c_fa), group in by_costs.items():
        scored = [files.scores[str(row["record_id"])] for row in group]
        trial_scores = np.concatenate([record.scores[record.scored] for record in scored])
        metrics = grouped_metrics(
            trial_scores,
            np.concatenate([record.labels[record.scored] for record in scored]),
            np.repeat(np.arange(len(scored)), [int(record.scored.sum()) for record in scored]),
            len(scored),
            p_target=p_target,
            c_miss=c_miss,
            c_fa=c_fa,
            forked=trial_scores.size >= FORKED_TRIALS,
        )
        for position, row in enumerate(group):
            recomputed = {key: float(np.asarray(values)[position]) for key, values in metrics.items()}
            rescored[str(row["record_id"])] = recomputed
            counts = speakers.get(str(row.get("trial_list_id")))
            failures += [{"record_id": str(row["record_id"]), "problem": p} for p in _compare(row, recomputed, counts)]
            table.append(
                {
                    "record_id": str(row["record_id"]),
                    "eer": row.get("eer"),
                    "eer_method": row.get("eer_method"),
                    **{key: recomputed[key] for key in (*EER_KEYS.values(), "min_dcf", "auc")},
                }
            )
    if failures:
        records = tuple(dict.fromkeys(f["record_id"] for f in failures))
        raise ScoreMismatchError(
            "rescore",
            f"{len(records)} of {len(rows)} re-scored record(s) differ from the signed table "
            f"(tolerance {METRIC_TOLERANCE}).",
            records=records,
            failures=failures,
            partial=rescored,
        )
    return rescored, Step(
        [
            f"All {len(rows)} records re-score to the signed EER (the row's eer_method, and each EER variant "
            f"given), counts, minDCF and AUC within {METRIC_TOLERANCE}; the speaker counts given equal their "
            "trial lists'; n_unscored and operators.json's failed sides agree with the trials' statuses."
        ],
        table,
    )
