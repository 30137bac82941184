"""``audit scores``: a reviewer's own trial list and score file, joined and scored, as a report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from audit._cli.summary import finish
from schemas import InputError, announce, one_line_errors

__all__ = ["scores"]


SCORE_FORMAT_HELP = "score-file layout (detected from the first line when not given)"


@one_line_errors()
def scores(
    trials: Annotated[
        Path,
        typer.Argument(help="trial list: VoxCeleb '<1|0> <enrol> <test>' or Kaldi '<enrol> <test> target|nontarget'"),
    ],
    score_files: Annotated[
        list[Path],
        typer.Argument(
            metavar="SCORES...",
            help="score file: kaldi, voxceleb, wespeaker or speechbrain layout; two or more (one per encoder, named by "
            "its file name), or one with --by-model, add paired encoder comparisons",
        ),
    ],
    score_format: Annotated[
        str | None, typer.Option("--format", help=SCORE_FORMAT_HELP + ": kaldi|voxceleb|wespeaker|speechbrain")
    ] = None,
    by_model: Annotated[
        bool,
        typer.Option(
            "--by-model",
            help="the one score file's first field names the model that scored the line ('<model> <enrol> <test> "
            "<score>', or '<model>' before any layout): every pair of models is compared as several files are; each "
            "model must score the same trials once. Declared, not detected: 'a b 1 0.5' is a speechbrain line and a "
            "kaldi line after a model name alike",
        ),
    ] = False,
    speakers: Annotated[
        Path | None,
        typer.Option("--speakers", help="utt2spk map '<utterance> <speaker>' (default: VoxCeleb ids idNNNNN/...)"),
    ] = None,
    subgroups: Annotated[
        Path | None, typer.Option("--subgroups", help="'<speaker> <subgroup>' map (spk2gender style)")
    ] = None,
    conditions: Annotated[
        Path | None, typer.Option("--conditions", help="'<utterance> <condition>' map (of the test side)")
    ] = None,
    durations: Annotated[
        Path | None,
        typer.Option(
            "--durations",
            help="'<utterance> <seconds>' map: audit the trial design (clip duration and target ratio by condition, "
            "one recording on both sides of a trial)",
        ),
    ] = None,
    cm_scores: Annotated[
        Path | None,
        typer.Option(
            "--cm-scores", help="countermeasure scores '<enrol> <test> <cm score> <bonafide|spoof>' per trial"
        ),
    ] = None,
    calibration: Annotated[
        Path | None,
        typer.Option(
            "--calibration",
            help="labelled development score file (wespeaker or speechbrain layout) to fit a linear logistic "
            "calibration",
        ),
    ] = None,
    p_target: Annotated[float, typer.Option("--p-target", help="minDCF target prior")] = 0.01,
    c_miss: Annotated[float, typer.Option("--c-miss", help="minDCF miss cost")] = 1.0,
    c_fa: Annotated[float, typer.Option("--c-fa", help="minDCF false-alarm cost")] = 1.0,
    resamples: Annotated[int, typer.Option("--resamples", help="speaker-cluster bootstrap resamples")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="bootstrap seed")] = 0,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="folder for report.md, report.html, report.json, figures (DET curves with pointwise "
            "speaker-bootstrap bands from the intervals' draws)",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON instead of a summary")] = False,
) -> None:
    """Audit a trial list and its score file: join, EERs (three variants), minDCF, AUC, minCllr, speaker-bootstrap
    intervals; with --calibration, Cllr and actDCF of calibrated LLRs; with --cm-scores, SV-, SPF-, SASV-EER, a-DCF,
    min t-DCF and t-EER. With several score files (one per encoder), the metrics are those of the first and every
    pair of files gets its paired EER difference on shared speaker draws, Holm within each group and the minimum
    detectable difference; with --by-model, one file's models are the encoders (named by the model column, the
    metrics those of its first model). With --durations, the trial design is audited (issue 41's rules at their
    default thresholds).

    Exit codes: 0 pass, 1 an error-severity finding (unscored, duplicated or mislabelled trials), 2 usage error or
    unreadable input (one line on stderr).
    """
    from audit.scores import SCORE_FORMATS

    if score_format is not None and score_format not in SCORE_FORMATS:
        raise InputError("--format", f"expected one of {', '.join(SCORE_FORMATS)}, got {score_format!r}")
    from audit.scores import ScoringConfig, audit_scores
    from reports import check_report_folder, write_report

    if by_model:
        from audit.scores import model_column_file

        model_column_file(score_files)
    config = ScoringConfig(p_target=p_target, c_miss=c_miss, c_fa=c_fa, n_resamples=resamples, seed=seed)
    if out is not None:
        check_report_folder(out)  # first, as every command checks --out before its inputs
    _check_inputs_exist(
        [(trials, "a trial list"), *((path, "a score file") for path in score_files), (speakers, "a speaker map"),
         (subgroups, "a subgroup map"), (conditions, "a condition map"), (durations, "a duration map"),
         (cm_scores, "a countermeasure score file"), (calibration, "a development score file")]
    )  # fmt: skip
    report = audit_scores(
        trials, score_files, score_format=score_format, speakers=speakers, subgroups=subgroups,
        conditions=conditions, cm_scores=cm_scores, calibration=calibration, config=config, by_model=by_model,
        det_bands=out is not None, announce=announce,
    )  # fmt: skip
    if durations is not None:
        from audit.scores import with_design_audit

        report = with_design_audit(report, trials, durations, conditions)
    written = write_report(report, out) if out is not None else []
    finish(report, written, as_json)


def _check_inputs_exist(inputs: list[tuple[Path | None, str]]) -> None:
    """Every input given is a regular file (links followed), checked before any is read: the score files after the
    first and the duration map are read only once the bootstrap's compiled loops are loaded (on a machine's first
    run, half a minute of compiling), so a mistyped name must not wait for them."""
    from provenance import checked_path

    for path, what in inputs:
        if path is not None:
            checked_path(path, "file", what)
