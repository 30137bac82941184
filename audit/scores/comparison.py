"""Paired encoder comparisons in ``audit scores`` (issue 41): several score files of one trial list, each an encoder,
or one file with a model column (``--by-model``: ``audit.scores.models``), each model an encoder.

Each file is joined to the list as the first one is (``joining.join``: its duplicated, unscored or mislabelled pairs
are findings too), and every pair of files gets the EER difference (``COMPARISON_EER``) with its interval from one
two-way speaker draw shared by every file, the two-sided bootstrap p-value and Holm over the pairs of each group
(all trials; each condition of ``--conditions``), and the minimum detectable difference by simulation on these
draws (``audit.statistics.rankings``). The terminal prints one line per pair.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from audit.scores.config import ScoringConfig
from audit.scores.files import ScoreFile, ScoreFormat, read_score_file
from audit.scores.joining import join
from audit.scores.lines import Vocabulary
from audit.scores.models import read_model_scores
from audit.scores.speakers import read_map, speakers_of
from audit.scores.trial_lists import TrialList
from audit.statistics import (
    RankingInput,
    SpeakerDraws,
    p_text,
    paired_rankings,
    ranking_speaker_ids,
    rankings_section,
)
from schemas import EerMethod, Flag, InputError, Severity, format_number, json_safe

COMPARISON_EER = EerMethod.ROCCH  # BOSARIS' convex-hull EER, the speaker-recognition evaluations' own


def encoder_names(paths: Sequence[Path]) -> list[str]:
    """Each score file's encoder name: its stem, or its path where two files share a stem.

    >>> encoder_names([Path("a/ecapa.txt"), Path("b/campp.txt")]), encoder_names([Path("a/s.txt"), Path("b/s.txt")])
    (['ecapa', 'campp'], ['a/s.txt', 'b/s.txt'])
    """
    stems = [path.stem for path in paths]
    return stems if len(set(stems)) == len(stems) else [str(path) for path in paths]


def model_column_file(score_files: Sequence[Path]) -> Path:
    """The one score file of ``--by-model`` (its models are the encoders); another count is an InputError."""
    if len(score_files) != 1:
        raise InputError("--by-model", f"expected one score file with a model column, got {len(score_files)}")
    return Path(score_files[0])


def encoder_scores(
    score_files: Sequence[Path], score_format: ScoreFormat | None, vocabulary: Vocabulary, by_model: bool
) -> Iterator[tuple[str, ScoreFile]]:
    """Each encoder's name and scores: the models of one file with a model column (``by_model``), else one file
    each (named by ``encoder_names``), read one at a time."""
    if by_model:
        yield from read_model_scores(model_column_file(score_files), score_format, vocabulary).items()
        return
    if len(score_files) < 2:
        raise InputError(str(score_files[0]), "a paired comparison needs two score files or more")
    for name, path in zip(encoder_names(score_files), score_files, strict=True):
        yield name, read_score_file(Path(path), score_format, vocabulary)


def paired_comparison(
    trial_list: TrialList,
    encoders: Mapping[str, ScoreFile],
    *,
    speakers: Path | None = None,
    conditions: Path | None = None,
    config: ScoringConfig | None = None,
) -> tuple[dict[str, Any] | None, dict[str, Any], list[str], list[Flag]]:
    """The rankings (None without speakers), their report section, the terminal's lines and each encoder's join
    findings, for the encoders' scores (``encoder_scores``, read in the trial list's vocabulary). An unreadable map
    raises InputError (exit 2)."""
    config = config or ScoringConfig()
    frame = trial_list.frame
    scores, flags = {}, []
    for name, score_file in encoders.items():
        joined = join(trial_list, score_file)
        flags += joined.flags
        column = np.full(len(frame), np.nan)
        column[joined.trials["trial"].to_numpy() - 1] = joined.trials["score"].to_numpy(float)
        scores[name] = column
    speaker_map = read_map(speakers, "a speaker map", "<utterance> <speaker>") if speakers else None
    with_speakers, speakers_from = speakers_of(frame, speaker_map, speakers)
    section: dict[str, Any] = {"id": "encoder-rankings", "title": "Paired encoder comparisons", "table": None}
    if with_speakers is None:
        why = f"No paired comparison: {speakers_from} (the two-way speaker bootstrap needs the trials' speakers)."
        return None, section | {"status": "skipped", "lines": [why]}, [why], flags
    labels = frame["label"].to_numpy(np.int64)
    enrol = np.asarray(with_speakers["enrol_speaker"].astype(str))
    test = np.asarray(with_speakers["test_speaker"].astype(str))
    settings = [RankingInput({"group": "all"}, scores, labels, enrol, test)]
    if conditions is not None:
        condition_map = read_map(conditions, "a condition map", "<utterance> <condition>")
        of_trial = frame["test_utt"].astype(str).map(condition_map)
        for condition in sorted(of_trial.dropna().unique()):
            member = (of_trial == condition).to_numpy()
            settings.append(
                RankingInput(
                    {"group": f"condition={condition}"},
                    {name: values[member] for name, values in scores.items()},
                    labels[member],
                    enrol[member],
                    test[member],
                )
            )
    draws = SpeakerDraws.of(ranking_speaker_ids(settings), config.n_resamples, config.seed)
    rankings = json_safe(paired_rankings(settings, draws, level=config.level, eer_method=COMPARISON_EER))
    return rankings, rankings_section(rankings, _interval_text), _terminal_lines(rankings), flags


def _interval_text(value: dict[str, Any] | None) -> str:
    if not value:
        return "-"
    return "{} [{}, {}]".format(*(format_number(value.get(key), 3) for key in ("estimate", "low", "high")))


def _terminal_lines(rankings: dict[str, Any]) -> list[str]:
    """One line per pair: the group, the difference with its interval, p and Holm's decision; the MDD per group."""
    lines = [
        f"paired EER differences ({rankings['eer_method']}, two-way speaker bootstrap on shared draws, "
        f"{rankings['level']:.0%} interval; Holm over each group's pairs at alpha {rankings['alpha']}):"
    ]
    for result in rankings["settings"]:
        for pair in result["pairs"]:
            verdict = (
                "separable"
                if pair["separable"]
                else f"not separable at {result['n_speakers']} speakers (MDD {format_number(result['mdd'], 3)})"
            )
            lines.append(
                f"  {result['key']['group']}: {' - '.join(pair['encoders'])} {_interval_text(pair['difference'])}, "
                f"p {p_text(pair['p_value'], rankings['n_resamples'])}: {verdict}"
            )
    return lines


def with_comparison(
    report: dict[str, Any],
    rankings: dict[str, Any] | None,
    section: dict[str, Any],
    lines: list[str],
    flags: list[Flag],
) -> dict[str, Any]:
    """The first file's report with the comparison added: the rankings, their section and terminal lines, and the
    other files' join findings (the verdict fails on an error among them)."""
    statistics = {**(report.get("statistics") or {}), **({"rankings": rankings} if rankings is not None else {})}
    return extended(report | {"statistics": statistics}, flags, section, lines)


def extended(report: dict[str, Any], flags: list[Flag], section: dict[str, Any], lines: list[str]) -> dict[str, Any]:
    """``report`` with more findings (those it does not hold yet), a section and terminal lines; its verdict fails
    on an error among the findings."""
    seen = {(flag["id"], flag["message"]) for flag in report["flags"]}
    added = [flag.as_dict() for flag in flags if (flag.id, flag.message) not in seen]
    failed = report["verdict"] == "fail" or any(flag.severity is Severity.ERROR for flag in flags)
    return json_safe(
        report
        | {
            "verdict": "fail" if failed else report["verdict"],
            "flags": report["flags"] + added,
            "headline": [*report.get("headline", []), *lines],
            "sections": [*report["sections"], section],
        }
    )
