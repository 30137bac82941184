"""`audit scores`: a reviewer's own trial list and score file, joined and scored, as the same report.

read the trial list and the score file -> join scores to trials by (enrol, test), reporting every duplicated,
unmatched, unscored or mislabelled pair (``joining``) -> speakers from a declared map or VoxCeleb ids
(``speakers``) -> per group (all trials, then each subgroup and condition declared) the three EER variants, minDCF
at the declared costs and AUC, the calibration and spoofing-aware metrics, with speaker bootstrap intervals
(``groups``) -> the report dict that ``reports.write_report`` renders (``sections``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from audit.metrics import prepare_kernels
from audit.result import TOOL_NAME, tool_version
from audit.scores.calibration import DevCalibration, fit_dev_calibration
from audit.scores.comparison import encoder_scores, paired_comparison, with_comparison
from audit.scores.config import ScoringConfig
from audit.scores.files import ScoreFormat, read_cm_score_file, read_score_file
from audit.scores.groups import (
    bayes_error_curves,
    calibration_metrics,
    flag_poor_calibration,
    group_curves,
    group_metrics,
    spoofing_metrics,
)
from audit.scores.joining import attach_countermeasure, calibration_overlap, finding, join
from audit.scores.lines import Vocabulary
from audit.scores.sections import beyond_eer_section, headline, join_section, metrics_section, source_block
from audit.scores.speakers import calibration_speakers_overlap, flag_speaker_labels, read_map, speakers_of
from audit.scores.trial_lists import TrialFormat, read_trial_list
from schemas import InputError, Severity, has_errors, json_safe

__all__ = ["ScoringConfig", "audit_scores", "join", "speakers_of"]


def audit_scores(
    trials: Path,
    scores: Path | Sequence[Path],
    *,
    score_format: ScoreFormat | None = None,
    trial_format: TrialFormat | None = None,
    speakers: Path | None = None,
    subgroups: Path | None = None,
    conditions: Path | None = None,
    cm_scores: Path | None = None,
    calibration: Path | None = None,
    config: ScoringConfig | None = None,
    by_model: bool = False,
    det_bands: bool = False,
    announce: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The report of one trial list and its score file. Unreadable input raises InputError (exit 2).

    Args:
        trials: a VoxCeleb (``<1|0> <enrol> <test>``) or Kaldi (``<enrol> <test> target|nontarget``) trial list.
        scores: a Kaldi, VoxCeleb, WeSpeaker or SpeechBrain score file; or several, one per encoder: the report is
            of the first, with every pair's paired EER difference (``audit.scores.comparison``).
        score_format: the score file's layout (detected from its first line when None).
        trial_format: the trial list's layout (detected when None).
        speakers: an utt2spk map (default: the speaker of VoxCeleb ids ``idNNNNN/...``).
        subgroups: speaker -> subgroup (``spk2gender`` style; a trial takes its enrolment speaker's).
        conditions: utterance -> condition (a trial takes its test utterance's).
        cm_scores: a countermeasure score file ``<enrol> <test> <cm score> <bonafide|spoof>`` (spoofing-aware
            metrics per group).
        calibration: a labelled development score file (wespeaker or speechbrain layout) to fit a linear logistic
            calibration on (Cllr and actDCF per group); it must score none of the listed trials.
        config: the minDCF operating point, resamples and seed.
        by_model: ``scores`` is one file with a model column (``audit.scores.models``): the report is of its first
            model, with the models' paired comparison, and its source counts the lines of every model.
        det_bands: each group's DET curve with its pointwise speaker-bootstrap band (``band``) from the draws of
            its intervals, for the figures (``--out``): one more compiled pass over the trials per group.
        announce: told when the bootstrap's compiled loops are compiled (the first run on a machine: half a
            minute), which happens only once every input has been read, so a bad file costs no compilation.

    Returns:
        The report dict (``verdict``, ``flags``, ``aggregates`` with the metrics per group, ``sections``).

    Example:
        >>> import pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> pairs = [("1", "a", "b"), ("0", "a", "c"), ("1", "c", "d"), ("0", "c", "b")]
        >>> _ = (folder / "trials.txt").write_text("".join(f"{k} {e} {t}\\n" for k, e, t in pairs))
        >>> lines = [f"{e} {t} {s}\\n" for (_, e, t), s in zip(pairs, (0.8, 0.4, 0.35, 0.1))]
        >>> _ = (folder / "scores.txt").write_text("".join(lines))
        >>> report = audit_scores(folder / "trials.txt", folder / "scores.txt")
        >>> overall = report["aggregates"]["metrics_per_group"][0]
        >>> overall["eer_rocch"], overall["eer_legacy"], overall["auc"]
        (0.25, 0.5, 0.75)
    """
    config = config or ScoringConfig()
    vocabulary = Vocabulary()  # one code space for the utterance ids of every file joined
    trial_list = read_trial_list(Path(trials), trial_format, vocabulary)
    paths = [Path(scores)] if isinstance(scores, str | Path) else [Path(path) for path in scores]
    # every file read once, before any compilation; several encoders are compared after the first one's report
    encoders = dict(encoder_scores(paths, score_format, vocabulary, by_model)) if by_model or len(paths) > 1 else {}
    score_file = next(iter(encoders.values())) if encoders else read_score_file(paths[0], score_format, vocabulary)
    n_lines = sum(len(model.frame) for model in encoders.values()) if by_model else len(score_file.frame)
    cm_file = read_cm_score_file(Path(cm_scores), vocabulary) if cm_scores is not None else None
    dev = fit_dev_calibration(read_score_file(Path(calibration), None, vocabulary)) if calibration is not None else None
    speaker_map = read_map(speakers, "a speaker map", "<utterance> <speaker>") if speakers else None
    joined = join(trial_list, score_file)
    flags = list(joined.flags)
    scored = joined.trials
    if cm_file is not None:
        scored, cm_flags = attach_countermeasure(scored, cm_file)
        flags += cm_flags
    used, speakers_from = speakers_of(scored, speaker_map, speakers)
    if used is None:
        flags.append(finding("speakers-unknown", Severity.WARNING, f"No speaker-cluster intervals: {speakers_from}."))
        used = scored
    else:
        flags += [flag for flag in [flag_speaker_labels(used)] if flag is not None]
    if subgroups is not None:
        if "enrol_speaker" not in used:
            raise InputError(str(subgroups), "subgroups map speakers, but the trials' speakers are unknown")
        used = used.assign(
            subgroup=used["enrol_speaker"].map(read_map(subgroups, "a subgroup map", "<speaker> <subgroup>"))
        )
    if conditions is not None:
        condition_map = read_map(conditions, "a condition map", "<utterance> <condition>")
        used = used.assign(condition=used["test_utt"].map(condition_map))
    with_speakers = "enrol_speaker" in used
    if announce is not None and len(used):
        prepare_kernels(announce)
    unmapped = {column: int(used[column].isna().sum()) for column in ("subgroup", "condition") if column in used}
    bands: dict[tuple[str, str], dict[str, Any]] | None = {} if det_bands else None
    rows = group_metrics(used, config, with_speakers, bands) if len(used) else []
    if not rows or "not_computable" in rows[0]:
        why = rows[0]["not_computable"] if rows else "no trial has a finite score"
        flags.append(finding("metrics-not-computable", Severity.ERROR, f"The metrics of all trials: {why}."))
    aggregates: dict[str, Any] = {"metrics_per_group": rows}
    if dev is not None:
        overlap = calibration_overlap(trial_list, dev.dev)
        same_speakers = (  # a file that scores evaluated trials scores their speakers too: said once
            calibration_speakers_overlap(used, dev.dev.frame, dev.dev.path, speaker_map)
            if with_speakers and overlap is None
            else None
        )
        flags += [flag for flag in (overlap, same_speakers) if flag is not None]
        if dev.fit is None:
            flags.append(finding("calibration-not-fitted", Severity.ERROR, f"No calibration: {dev.not_fitted}."))
        if overlap is not None or same_speakers is not None:
            held = "listed trials" if overlap is not None else "speakers of the evaluated trials"
            dev = DevCalibration(dev.dev, dev.n_used, dev.n_non_finite, None, f"the development file scores {held}")
    aggregates["calibration_per_group"] = calibration_metrics(used, config, dev) if len(used) else []
    flags += [flag for flag in (flag_poor_calibration(aggregates["calibration_per_group"]),) if flag is not None]
    if cm_file is not None:
        aggregates["spoofing_per_group"] = spoofing_metrics(used, config) if len(used) else []
    report = {
        "tool": {"name": TOOL_NAME, "version": tool_version()},
        "source": source_block(score_file.path, score_file.format, score_file.digest, n_lines, score_file.header)
        | ({"model": score_file.model} if by_model else {})
        | {
            "n_rows": joined.counts["trials_scored"],
            "trials": source_block(
                trial_list.path, trial_list.format, trial_list.digest, len(trial_list.frame), trial_list.header
            ),
        },
        "verdict": "fail" if has_errors(flags) else "pass",
        "config": config.as_dict()
        | {"calibration": dev.as_dict() if dev is not None else None}
        | {
            "countermeasure": source_block(cm_file.path, "cm", cm_file.digest, len(cm_file.frame), cm_file.header)
            if cm_file
            else None
        },
        "flags": [flag.as_dict() for flag in flags],
        "headline": headline(rows, aggregates["calibration_per_group"], aggregates.get("spoofing_per_group", [])),
        "aggregates": aggregates,
        "curves": group_curves(used, rows, bands) + (bayes_error_curves(used, dev) if len(used) else []),
        "claims": [],
        "sections": [
            join_section(joined, speakers_from),
            metrics_section(rows, config, with_speakers, unmapped),
            beyond_eer_section(dev, cm_file is not None, config),
        ],
    }
    if not encoders:
        return json_safe(report)
    compared = paired_comparison(trial_list, encoders, speakers=speakers, conditions=conditions, config=config)
    return with_comparison(json_safe(report), *compared)
