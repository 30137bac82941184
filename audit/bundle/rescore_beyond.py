"""Re-derive the metrics beyond EER from the verified per-trial scores: each record's calibrated metrics under the
calibration its signed ``config.toml`` declares (``audit.metrics.record_calibration``), and the spoofing-aware
metrics of each spoof cell from its ASV and countermeasure scores (``audit.metrics.record_spoofing``).

Where the signed results carry these columns, every value is compared with the one re-derived (``score-mismatch``
when they differ, or when one is empty and the other not); where they do not, the audit's values are what the
report shows, and the step says the run did not write them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from audit.bundle.rescore import METRIC_TOLERANCE
from audit.bundle.verified import LoadedFiles, ScoreMismatchError, Step
from audit.metrics.record_calibration import calibration_records, declared_calibration
from audit.metrics.record_spoofing import spoofing_of_rows
from audit.table.analysis import CalibrationDeclaration, analysis_from_table
from schemas.results import CALIBRATED_COLUMNS, SPOOFING_COLUMNS, cell_number

BEYOND_EER_COLUMNS = (*CALIBRATED_COLUMNS, *SPOOFING_COLUMNS)


def declared_calibration_of(files: LoadedFiles) -> tuple[CalibrationDeclaration | None, tuple[str, ...], bool]:
    """The calibration the signed ``[analysis]`` declares, its development speakers, and whether the table is
    usable (a problem is the statistics step's ``bundle-schema`` finding; nothing is re-derived from it here)."""
    analysis, problems = analysis_from_table((files.config or {}).get("analysis", {}))
    if problems:
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
    signed_columns = set(files.results.columns) if files.results is not None else set()
    written = [column for column in BEYOND_EER_COLUMNS if column in signed_columns]
    missing = [
        column
        for column in BEYOND_EER_COLUMNS
        if column not in signed_columns and any(values.get(column) is not None for values in derived.values())
    ]
    if missing:
        lines.append(f"The run wrote no {', '.join(missing)}: the values shown are the audit's own.")
    failures = [
        {"record_id": record_id, "problem": problem}
        for row in rows
        for record_id in [str(row["record_id"])]
        for problem in _differences(row, derived[record_id], tuple(written))
    ]
    table = [
        {"record_id": record_id, **{column: values.get(column) for column in BEYOND_EER_COLUMNS}}
        for record_id, values in derived.items()
        if any(values.get(column) is not None for column in BEYOND_EER_COLUMNS)
    ]
    if failures:
        records = tuple(dict.fromkeys(failure["record_id"] for failure in failures))
        raise ScoreMismatchError(
            "beyond-eer",
            f"{len(records)} record(s) carry calibrated or spoofing-aware metrics that differ from those re-derived "
            f"from their verified scores (tolerance {METRIC_TOLERANCE}).",
            records=records,
            failures=failures,
            lines=lines,
            partial=derived,
        )
    if written:
        lines.append(f"Every signed {', '.join(written)} re-derives within {METRIC_TOLERANCE}.")
    return derived, Step(lines, table)
