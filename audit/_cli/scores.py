"""``audit scores``: a reviewer's own trial list and score file, joined and scored, as a report."""

from __future__ import annotations

from pathlib import Path

import typer

from audit._cli.plumbing import announce, one_line_errors
from audit._cli.summary import finish
from schemas.errors import InputError

__all__ = ["scores"]


SCORE_FORMAT_HELP = "score-file layout (detected from the first line when not given)"


@one_line_errors()
def scores(
    trials: Path = typer.Argument(
        ..., help="trial list: VoxCeleb '<1|0> <enrol> <test>' or Kaldi '<enrol> <test> target|nontarget'"
    ),
    score_file: Path = typer.Argument(
        ..., metavar="SCORES", help="score file: kaldi, voxceleb, wespeaker or speechbrain layout"
    ),
    score_format: str | None = typer.Option(
        None, "--format", help=SCORE_FORMAT_HELP + ": kaldi|voxceleb|wespeaker|speechbrain"
    ),
    speakers: Path | None = typer.Option(
        None, "--speakers", help="utt2spk map '<utterance> <speaker>' (default: VoxCeleb ids idNNNNN/...)"
    ),
    subgroups: Path | None = typer.Option(None, "--subgroups", help="'<speaker> <subgroup>' map (spk2gender style)"),
    conditions: Path | None = typer.Option(
        None, "--conditions", help="'<utterance> <condition>' map (of the test side)"
    ),
    cm_scores: Path | None = typer.Option(
        None, "--cm-scores", help="countermeasure scores '<enrol> <test> <cm score> <bonafide|spoof>' per trial"
    ),
    calibration: Path | None = typer.Option(
        None,
        "--calibration",
        help="labelled development score file (wespeaker or speechbrain layout) to fit a linear logistic calibration",
    ),
    p_target: float = typer.Option(0.01, "--p-target", help="minDCF target prior"),
    c_miss: float = typer.Option(1.0, "--c-miss", help="minDCF miss cost"),
    c_fa: float = typer.Option(1.0, "--c-fa", help="minDCF false-alarm cost"),
    resamples: int = typer.Option(1000, "--resamples", help="speaker-cluster bootstrap resamples"),
    seed: int = typer.Option(0, "--seed", help="bootstrap seed"),
    out: Path | None = typer.Option(None, "--out", help="folder for report.md, report.html, report.json, figures"),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON instead of a summary"),
) -> None:
    """Audit a trial list and its score file: join, EERs (three variants), minDCF, AUC, minCllr, speaker-bootstrap
    intervals; with --calibration, Cllr and actDCF of calibrated LLRs; with --cm-scores, SV-, SPF-, SASV-EER, a-DCF,
    min t-DCF and t-EER.

    Exit codes: 0 pass, 1 an error-severity finding (unscored, duplicated or mislabelled trials), 2 usage error or
    unreadable input (one line on stderr).
    """
    from audit.scores.files import SCORE_FORMATS

    if score_format is not None and score_format not in SCORE_FORMATS:
        raise InputError("--format", f"expected one of {', '.join(SCORE_FORMATS)}, got {score_format!r}")
    from audit.metrics.weighted_roc import prepare_kernels
    from audit.scores.scoring import ScoringConfig, audit_scores
    from reports import check_report_folder, write_report

    config = ScoringConfig(p_target=p_target, c_miss=c_miss, c_fa=c_fa, n_resamples=resamples, seed=seed)
    if out is not None:
        check_report_folder(out)
    prepare_kernels(announce)
    report = audit_scores(
        trials, score_file, score_format=score_format, speakers=speakers, subgroups=subgroups,
        conditions=conditions, cm_scores=cm_scores, calibration=calibration, config=config,
    )  # fmt: skip
    written = write_report(report, out) if out is not None else []
    finish(report, written, as_json)
