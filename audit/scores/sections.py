"""The report sections and the terminal headline of ``audit scores``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from audit.scores.calibration import DevCalibration
from audit.scores.config import ScoringConfig
from audit.scores.joining import Joined
from audit.table.findings import has_errors
from schemas.wording import count


def headline(
    rows: list[dict[str, Any]], calibration_rows: list[dict[str, Any]], spoofing_rows: list[dict[str, Any]]
) -> list[str]:
    """The all-trials group's metrics, one line, for the terminal."""
    pieces = []
    for row, names in (
        (rows[0] if rows else {}, ("eer_rocch", "min_dcf", "auc")),
        (calibration_rows[0] if calibration_rows else {}, ("min_cllr", "cllr", "act_dcf")),
        (spoofing_rows[0] if spoofing_rows else {}, ("sv_eer", "spf_eer", "sasv_eer", "a_dcf", "min_t_dcf", "t_eer")),
    ):
        pieces += [f"{name} {row[name]:.4f}" for name in names if isinstance(row.get(name), float)]
    return [f"all trials: {', '.join(pieces)}"] if pieces else []


def source_block(path: Path, file_format: str, digest: Any, n_lines: int) -> dict[str, Any]:
    return {
        "path": str(path),
        "format": file_format,
        "sha256": digest.sha256,
        "blake3": digest.blake3,
        "n_lines": n_lines,
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


def metrics_section(
    rows: list[dict[str, Any]], config: ScoringConfig, with_speakers: bool, unmapped: dict[str, int]
) -> dict[str, Any]:
    lines = [
        "EER in three variants (fractions): eer_legacy (the paper's roc_curve routine), eer_rocch (BOSARIS ROC "
        "convex hull), eer_interp (VoxSRC's linear crossing). "
        f"min_dcf: normalised minimum DCF at p_target {config.p_target}, c_miss {config.c_miss}, c_fa "
        f"{config.c_fa}. auc: ties count half.",
    ]
    if with_speakers:
        lines.append(
            f"Intervals: {config.level:.0%} percentile intervals of a speaker-cluster bootstrap "
            f"({config.n_resamples} resamples of enrolment speakers, seed {config.seed}) for eer_interp and "
            "eer_legacy (eer_rocch has none: its hull needs a PAV pass per resample)."
        )
    else:
        lines.append("No intervals: the speakers of the trials are unknown (give --speakers utt2spk).")
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
        lines.append("No calibration declared (--calibration dev.txt): raw scores are not LLRs, so no Cllr or actDCF.")
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
