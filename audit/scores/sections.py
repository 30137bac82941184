"""The report sections and the terminal headline of ``audit scores``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from audit.metrics import EER_METHODS
from audit.scores.calibration import DevCalibration
from audit.scores.config import ScoringConfig
from audit.scores.joining import Joined
from schemas import count, has_errors

HEADLINE_GROUPS = 12  # groups the terminal's table shows (report.json and the report have them all)


def _interval(row: dict[str, Any], name: str) -> str:
    """``0.100 [0.057, 0.136]``; ``0.100 [no interval]`` where the bootstrap ran and gave none (the report says
    why: ``interval_not_computable``, or every draw undefined); the value alone where no bootstrap was asked for
    (no speakers, said on the report's intervals line)."""
    value, low, high = row.get(name), row.get(f"{name}_low"), row.get(f"{name}_high")
    if not isinstance(value, float):
        return "n/a"
    if isinstance(low, float) and isinstance(high, float) and np.isfinite([low, high]).all():
        return f"{value:.3f} [{low:.3f}, {high:.3f}]"
    if "interval_not_computable" in row or f"{name}_undefined_draws" in row:
        return f"{value:.3f} [no interval]"
    return f"{value:.3f}"


def headline(
    rows: list[dict[str, Any]], calibration_rows: list[dict[str, Any]], spoofing_rows: list[dict[str, Any]]
) -> list[str]:
    """The terminal's summary: one line per group (EER in its three variants with their intervals, minDCF at the
    declared costs, AUC), then the all-trials group's calibration and spoofing-aware metrics."""
    columns = ("eer_legacy", "eer_rocch", "eer_interp")
    table = [("group", "trials", *columns, "min_dcf", "auc")]
    for row in rows[:HEADLINE_GROUPS]:
        if "not_computable" in row:
            table.append((row["group"], str(row.get("trials", "")), row["not_computable"], "", "", "", ""))
            continue
        table.append(
            (row["group"], str(row["trials"]), *(_interval(row, name) for name in columns),
             f"{row['min_dcf']:.4f}", f"{row['auc']:.4f}")
        )  # fmt: skip
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() for line in table]
    if len(rows) > HEADLINE_GROUPS:
        lines.append(f"... {len(rows) - HEADLINE_GROUPS} more groups in report.json")
    pieces = []
    for row, names in (
        (calibration_rows[0] if calibration_rows else {}, ("min_cllr", "cllr", "act_dcf")),
        (spoofing_rows[0] if spoofing_rows else {}, ("sv_eer", "spf_eer", "sasv_eer", "a_dcf", "min_t_dcf", "t_eer")),
    ):
        pieces += [f"{name} {row[name]:.4f}" for name in names if isinstance(row.get(name), float)]
    return (lines if rows else []) + ([f"all trials: {', '.join(pieces)}"] if pieces else [])


def source_block(path: Path, file_format: str, digest: Any, n_lines: int, header: int | None) -> dict[str, Any]:
    return {
        "path": str(path),
        "format": file_format,
        "sha256": digest.sha256,
        "blake3": digest.blake3,
        "n_lines": n_lines,
        "header_line": header,  # the number of a header line left out, if any
    }


def join_section(joined: Joined, speakers_from: str) -> dict[str, Any]:
    c = joined.counts
    return {
        "id": "score-join",
        "title": "Scores joined to trials",
        "status": "fail" if has_errors(joined.flags) else "pass",
        "lines": [
            f"{c['trial_lines']} trials listed, {c['score_lines']} score lines; {c['trials_scored']} trials scored "
            f"and used. Joined by (enrol, test); {c['keys_without_audio_extension']} utterance ids compared "
            "without a trailing audio extension.",
            f"Speakers: {speakers_from}.",
        ],
        "table": [{"count": name.replace("_", " "), "value": value} for name, value in c.items()],
    }


NO_SPEAKERS = "No intervals: the speakers of the trials are unknown (give --speakers utt2spk)."


def _intervals_line(rows: list[dict[str, Any]], config: ScoringConfig) -> str:
    """What the intervals are, said from the rows that carry them: the variants with an interval, the clusters
    resampled, the groups without one."""
    with_interval = [row for row in rows if any(f"eer_{m}_low" in row for m in EER_METHODS)]
    if not with_interval:
        return "No intervals: no group's bootstrap could be computed (see interval_not_computable per group)."
    variants = [m for m in EER_METHODS if any(row.get(f"eer_{m}_low") is not None for row in with_interval)]
    clusters = sorted({str(row["bootstrap_clusters"]) for row in with_interval})
    undefined = sum(int(row.get(f"eer_{m}_undefined_draws") or 0) for row in with_interval for m in variants)
    without = len(rows) - len(with_interval)
    return (
        f"Intervals: {config.level:.0%} bias-corrected percentile intervals (DESIGN section 4) of a speaker bootstrap "
        f"({config.n_resamples} resamples of {' / '.join(clusters)}, seed {config.seed}) for "
        f"{', '.join(f'eer_{m}' for m in variants)} in {len(with_interval)} of {len(rows)} groups"
        + (f" ({without} without: see interval_not_computable)" if without else "")
        + (f"; {undefined} draws with one class left undefined and counted" if undefined else "")
        + "."
    )


def metrics_section(
    rows: list[dict[str, Any]], config: ScoringConfig, with_speakers: bool, unmapped: dict[str, int]
) -> dict[str, Any]:
    lines = [
        "EER in three variants (fractions): eer_legacy (the paper's roc_curve routine), eer_rocch (BOSARIS ROC "
        "convex hull), eer_interp (VoxSRC's linear crossing). "
        f"min_dcf: normalised minimum DCF at p_target {config.p_target}, c_miss {config.c_miss}, c_fa "
        f"{config.c_fa}. auc: ties count half.",
    ]
    lines.append(_intervals_line(rows, config) if with_speakers else NO_SPEAKERS)
    lines.append(f"{len(rows)} groups: the table is under Aggregates (metrics_per_group in report.json).")
    lines += [
        f"{count(n, 'scored trial')} {'has' if n == 1 else 'have'} no {column} in its map and "
        f"{'is' if n == 1 else 'are'} in no {column} group."
        for column, n in unmapped.items()
        if n
    ]
    return {
        "id": "score-metrics",
        "title": "How the metrics were computed",
        "status": "info",
        "lines": lines,
        "table": None,
    }


def beyond_eer_section(dev: DevCalibration | None, with_cm: bool, config: ScoringConfig) -> dict[str, Any]:
    lines = [
        "min_cllr (bits): Cllr of the best monotone recalibration of the raw scores (PAV over tie groups), the "
        "discrimination part of Cllr; it needs no calibration. Calibration metrics cover the bona fide trials "
        "(targets against bona fide non-targets): a trial keyed spoof in the countermeasure file is left out "
        "(spoof_trials_left_out) and belongs to the spoofing-aware metrics."
    ]
    if dev is None:
        lines.append(
            "No calibration declared (--calibration dev.txt): raw scores are not LLRs, so no Cllr or actDCF, and "
            "min_cllr is given without an interval."
        )
    elif dev.fit is None:
        lines.append(f"Calibration on {dev.dev.path} not used: {dev.not_fitted}.")
    else:
        lines.append(
            f"Calibration: llr = {dev.fit.scale:.6g} * score + {dev.fit.offset:.6g}, linear logistic regression at "
            f"prior {dev.fit.prior} on {dev.n_used} trials of {dev.dev.path} (sha256 {dev.dev.digest.sha256[:12]}; "
            f"{dev.n_non_finite} non-finite left out). cllr (bits) and act_dcf (at the Bayes threshold for "
            f"p_target {config.p_target}, c_miss {config.c_miss}, c_fa {config.c_fa}) are of these LLRs; "
            "cllr_minus_min_cllr and act_dcf_minus_min_dcf are what miscalibration costs."
        )
    if with_cm:
        lines.append(
            "Spoofing-aware metrics (spoofing_per_group): sv_eer, spf_eer, sasv_eer (rocch) and a_dcf (Shim et al. "
            "2024 costs: priors 0.9/0.05/0.05, Cmiss 1, Cfa_asv 10, Cfa_cm 20) of the ASV score; cm_eer of the "
            "countermeasure (bona fide against spoofs); min_t_dcf (ASVspoof 2019 constants, ASV at its EER "
            "threshold) and t_eer (concurrent tandem EER) of the two. Intervals: the same enrolment-speaker "
            f"bootstrap ({config.n_resamples} resamples, seed {config.seed})."
        )
    return {"id": "score-beyond-eer", "title": "Calibration and spoofing-aware metrics", "status": "info",
            "lines": lines, "table": None}  # fmt: skip
