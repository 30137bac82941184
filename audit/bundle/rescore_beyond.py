"""Re-derive the metrics beyond EER from the verified per-trial scores: each record's calibrated metrics under the
calibration its signed ``config.toml`` declares (``audit.metrics.record_calibration``), the spoofing-aware
metrics of each spoof cell from its ASV and countermeasure scores (``audit.metrics.record_spoofing``), and the
metrics of AS-normalised scores from each trial's cohort statistics (``audit.metrics.normalisation``; the
statistics themselves need the cohort's embeddings, which a bundle does not hold).

Where the signed results carry these columns, every value is compared with the one re-derived (``score-mismatch``
when they differ, or when one is empty and the other not); where they do not, the audit's values are what the
report shows, and the step says the run did not write them. What the metrics are re-derived from is held to what the
signed ``config.toml`` declares, since the author signs both and could leave out what would count against the run:
a record of a declared spoof condition holds spoofs from its declared folder for its non-targets, a record of a
``[countermeasure]`` experiment carries ``cm_score`` on every scored trial (only a failed chain, which fails the
trial, leaves it empty), and a declared AS-norm comes with its cohort statistics.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from audit.bundle.rescore import METRIC_TOLERANCE
from audit.bundle.verified import LoadedFiles, ScoreMismatchError, Step
from audit.metrics import as_norm_of_rows, calibration_records, declared_calibration, is_reference, spoofing_of_rows
from schemas import (
    CALIBRATED_COLUMNS,
    NORMALISED_COLUMNS,
    SPOOFING_COLUMNS,
    Analysis,
    CalibrationDeclaration,
    analysis_from_table,
    cell_number,
)

BEYOND_EER_COLUMNS = (*CALIBRATED_COLUMNS, *SPOOFING_COLUMNS, *NORMALISED_COLUMNS)


def _declared_analysis(files: LoadedFiles) -> Analysis | None:
    """The signed ``[analysis]``, or None where it has a problem (the statistics step's ``bundle-schema``
    finding; nothing is re-derived from it here)."""
    analysis, problems = analysis_from_table((files.config or {}).get("analysis", {}))
    return None if problems else analysis


def declared_calibration_of(files: LoadedFiles) -> tuple[CalibrationDeclaration | None, tuple[str, ...], bool]:
    """The calibration the signed ``[analysis]`` declares, its development speakers, and whether the table is
    usable."""
    analysis = _declared_analysis(files)
    if analysis is None:
        return None, (), False
    return analysis.calibration, analysis.dev_speakers, True


def _differences(row: dict[str, Any], derived: dict[str, Any], columns: tuple[str, ...]) -> list[str]:
    problems = []
    for column in columns:
        if column not in row:
            continue
        given, expected = cell_number(row[column]), derived.get(column)
        if given is None and expected is None:
            continue
        if given is None or expected is None or abs(given - expected) > METRIC_TOLERANCE:
            shown = "empty" if expected is None else f"{expected:.6f}"
            problems.append(f"{column} {row[column]} but re-derives to {shown}")
    return problems


def verify_beyond_eer_metrics(files: LoadedFiles) -> tuple[dict[str, dict[str, Any]], Step]:
    """Each record's calibrated and spoofing-aware metrics re-derived and compared with its signed row."""
    list_of = {str(row.get("record_id")): str(row.get("trial_list_id")) for row in files.signed_rows}
    rows = [
        row
        for row in files.signed_rows
        if str(row.get("record_id")) in files.scores and list_of[str(row.get("record_id"))] in files.trial_lists
    ]

    def trials_of(record_id: str) -> Any:
        return files.trial_lists[list_of[record_id]]

    def scores_of(record_id: str) -> np.ndarray:
        return files.scores[record_id].scores

    def cm_of(record_id: str) -> np.ndarray | None:
        return files.scores[record_id].cm_scores

    declaration, dev_speakers, usable = declared_calibration_of(files)
    derived: dict[str, dict[str, Any]] = {str(row["record_id"]): {} for row in rows}
    lines = []
    if declaration is not None:
        metrics, fits = declared_calibration(
            calibration_records(rows, trials_of, scores_of),
            dev_speakers,
            declaration.prior,
            platt=declaration.method == "platt",
        )
        for record_id, values in metrics.items():
            derived[record_id] |= values
        fitted = [fit for fit in fits.values() if fit.fit is not None]
        lines.append(
            f"Calibration declared ({declaration.method}, fitted on {declaration.fit_on}, prior {declaration.prior}): "
            f"{len(fitted)} of {len(fits)} calibration groups (experiment, model, corpus) have a map fitted on the "
            "development speakers' trials of their clean records; cllr, min_cllr and act_dcf re-derived on each "
            "record's bona fide evaluation trials."
        )
        lines += [
            f"No calibration for {'/'.join(fit.group)}: {fit.reason}."
            for fit in sorted(fits.values(), key=lambda fit: fit.group)
            if fit.fit is None
        ]
    elif usable:
        lines.append("No calibration declared ([analysis] calibration): no calibrated metric.")
    else:
        lines.append("The signed [analysis] table cannot be used (see the statistics): no calibrated metric.")
    spoofing = spoofing_of_rows(rows, trials_of, scores_of, cm_of)
    for record_id, values in spoofing.items():
        derived[record_id] |= values
    with_cm = sum(files.scores[str(row["record_id"])].cm_scores is not None for row in rows)
    lines.append(
        f"{len(spoofing)} spoof cell(s); {with_cm} record(s) carry countermeasure scores (cm_score)."
        + (" Spoofing-aware metrics re-derived from the ASV and countermeasure scores." if spoofing else "")
    )
    normalised, normalisation_lines, normalisation_failures = _as_norm(files, rows, trials_of)
    for record_id, values in normalised.items():
        derived[record_id] |= values
    lines += normalisation_lines
    signed_columns = set(files.results.columns) if files.results is not None else set()
    written = [column for column in BEYOND_EER_COLUMNS if column in signed_columns]
    missing = [
        column
        for column in BEYOND_EER_COLUMNS
        if column not in signed_columns and any(values.get(column) is not None for values in derived.values())
    ]
    if missing:
        lines.append(f"The run wrote no {', '.join(missing)}: the values shown are the audit's own.")
    failures = normalisation_failures + _declaration_failures(files, rows, trials_of)
    failures += [
        {"record_id": record_id, "problem": problem}
        for row in rows
        for record_id in [str(row["record_id"])]
        for problem in _differences(row, derived[record_id], tuple(written))
    ]
    signed = {str(row["record_id"]): row for row in rows}
    table = [
        {
            "record_id": record_id,
            **{key: signed[record_id].get(key) for key in ("experiment", "model", "condition", "subgroup")},
            "clean_reference": is_reference(signed[record_id]),
            **{column: values.get(column) for column in BEYOND_EER_COLUMNS},
        }
        for record_id, values in derived.items()
        if any(values.get(column) is not None for column in BEYOND_EER_COLUMNS)
    ]
    if failures:
        records = tuple(dict.fromkeys(failure["record_id"] for failure in failures))
        raise ScoreMismatchError(
            "beyond-eer",
            f"{len(records)} record(s) carry calibrated, spoofing-aware or AS-normalised metrics that differ from "
            f"those re-derived from their verified scores (tolerance {METRIC_TOLERANCE}), or trials, countermeasure "
            "scores or cohort statistics that break what the signed config.toml declares.",
            records=records,
            failures=failures,
            lines=lines,
            partial=derived,
        )
    if written:
        lines.append(f"Every signed {', '.join(written)} re-derives within {METRIC_TOLERANCE}.")
    return derived, Step(lines, table)


def _spoof_folders(config: dict[str, Any]) -> dict[str, str]:
    """The signed configuration's spoof conditions: condition name -> the spoof folder it tests against."""
    conditions = config.get("conditions")
    if not isinstance(conditions, dict):
        return {}
    return {
        str(name): table["spoofs"]
        for name, table in conditions.items()
        if isinstance(table, dict) and isinstance(table.get("spoofs"), str)
    }


def _declaration_failures(files: LoadedFiles, rows: list[dict[str, Any]], trials_of: Any) -> list[dict[str, str]]:
    """One failure per record whose trials or countermeasure scores break the signed configuration: a record of a
    declared spoof condition whose non-targets are not all spoofs from its folder (spoof trials relabelled, with the
    corpus table edited to match, would pass as a genuine cell), and a record of a ``[countermeasure]`` experiment
    without ``cm_score`` or with one empty on a scored trial (the spoofing-aware metrics leave such trials out)."""
    config = files.config or {}
    folders = _spoof_folders(config)
    problems: list[tuple[str, str]] = []
    for row in rows:
        condition = str(row.get("test_condition"))
        if condition not in folders:
            continue
        trials = trials_of(str(row["record_id"]))
        nontarget = trials["label"].astype(int).to_numpy() == 0
        spoofed = np.zeros_like(nontarget)
        if "trial_kind" in trials.columns and "test_corpus" in trials.columns:
            kinds, corpora = trials["trial_kind"].astype(str).to_numpy(), trials["test_corpus"].astype(str).to_numpy()
            spoofed = nontarget & (kinds == "spoof") & (corpora == folders[condition])
        if not nontarget.any() or (spoofed != nontarget).any():
            folder = folders[condition][:40]
            declared = f"its test condition {condition[:40]} is declared a spoof condition (spoofs = {folder})"
            problems.append((str(row["record_id"]), f"{declared}, but {int((nontarget & ~spoofed).sum())} of its "
                             f"{int(nontarget.sum())} non-target trials are no spoofs from that folder"))  # fmt: skip
    countermeasure = config.get("countermeasure")
    if isinstance(countermeasure, dict):
        listed = countermeasure.get("experiments")
        spoofing = {str(row.get("experiment")) for row in rows if str(row.get("test_condition")) in folders}
        experiments = {str(name) for name in listed} if isinstance(listed, list) else spoofing
        for row in rows:
            record_id, experiment = str(row["record_id"]), str(row.get("experiment"))
            if experiment not in experiments:
                continue
            cm = files.scores[record_id].cm_scores
            if cm is None:
                problems.append((record_id, f"experiment {experiment[:40]} is scored by the declared countermeasure, "
                                 "but its score file has no cm_score"))  # fmt: skip
                continue
            empty = files.scores[record_id].scored & ~np.isfinite(cm)
            if empty.any():
                trials = trials_of(record_id)
                kinds = trials["trial_kind"].astype(str).to_numpy() if "trial_kind" in trials.columns else None
                spoofs = 0 if kinds is None else int((empty & (kinds == "spoof")).sum())
                problems.append((record_id, f"cm_score is empty on {int(empty.sum())} scored trial(s) ({spoofs} "
                                 "spoofs), which the spoofing-aware metrics leave out; only a failed chain, which "
                                 "fails its trial, leaves it empty"))  # fmt: skip
    return [{"record_id": record_id, "problem": problem} for record_id, problem in problems]


def _as_norm(
    files: LoadedFiles, rows: list[dict[str, Any]], trials_of: Any
) -> tuple[dict[str, dict[str, Any]], list[str], list[dict[str, str]]]:
    """The AS-normalised metrics of every record whose score file carries cohort statistics, the step's lines, and
    one failure per record that breaks the declaration: statistics without a declared normalisation, or a trial
    list that holds a cohort speaker (the cohort must be impostors the evaluation never sees)."""
    analysis = _declared_analysis(files)
    declared = analysis.score_normalisation if analysis is not None else None
    with_cohort = [row for row in rows if files.scores[str(row["record_id"])].cohort is not None]
    if declared is None and not with_cohort:
        return {}, [], []
    failures = []
    if declared is None:
        failures += [
            {"record_id": str(row["record_id"]), "problem": "carries cohort statistics, but no score_normalisation "
             "is declared"}
            for row in with_cohort
        ]  # fmt: skip
    else:
        # Every corpus with cohort speakers gives each of its records their statistics, and one corpus at least has
        # them (the runner refuses a cohort no corpus holds): a record without them where its corpus's others, or
        # where no record, has them was left out of what the normalised metrics are re-derived from.
        normalised_corpora = {str(row.get("corpus")) for row in with_cohort}
        where = "no record's has" if not with_cohort else "other records of its corpus have"
        missing = f"score_normalisation (AS-norm) is declared, but its score file has no cohort statistics ({where})"
        failures += [
            {"record_id": str(row["record_id"]), "problem": missing}
            for row in rows
            if files.scores[str(row["record_id"])].cohort is None
            and (not with_cohort or str(row.get("corpus")) in normalised_corpora)
        ]  # fmt: skip
        cohort = set(declared.cohort)
        for row in rows:
            trials = trials_of(str(row["record_id"]))
            inside = sorted(cohort & {*trials["enrol_speaker"].astype(str), *trials["test_speaker"].astype(str)})
            if inside:
                failures.append(
                    {"record_id": str(row["record_id"]), "problem": f"its trials hold cohort speaker {inside[0][:40]}"}
                )
    normalised = as_norm_of_rows(
        with_cohort,
        lambda record_id: files.scores[record_id].labels,
        lambda record_id: files.scores[record_id].scores,
        lambda record_id: files.scores[record_id].cohort,
    )
    empty = sorted(record_id for record_id, values in normalised.items() if values["eer_as_norm"] is None)
    lines = [
        (
            f"AS-norm declared (top {declared.top_n} of the clean utterances of {len(declared.cohort)} cohort "
            "speakers): "
            if declared is not None
            else "No score_normalisation declared: "
        )
        + f"{len(with_cohort)} of {len(rows)} records carry cohort statistics; eer_as_norm and min_dcf_as_norm "
        "re-derived from them (the statistics themselves need the cohort's embeddings, which a bundle does not "
        "hold: not re-derived)."
    ]
    if empty:
        lines.append(
            f"{len(empty)} record(s) have no AS-normalised metric (a scored trial without a usable normalised "
            f"score, or one class only): {', '.join(empty[:5])}."
        )
    return (
        {record_id: {name: values[name] for name in NORMALISED_COLUMNS} for record_id, values in normalised.items()},
        lines,
        failures,
    )
