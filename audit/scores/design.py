"""The trial-design audit of ``audit scores`` given utterance durations (issue 41): ``audit.bundle.scores_design_audit``
over the reviewer's trial list, its conditions (``--conditions``) and a ``--durations`` map, at the default
thresholds of ``[analysis]`` (a reviewer's run declares none)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from audit.bundle import scores_design_audit
from audit.scores.comparison import extended
from audit.scores.lines import Vocabulary
from audit.scores.speakers import read_map
from audit.scores.trial_lists import read_trial_list
from schemas import Analysis, InputError


def with_design_audit(
    report: dict[str, Any], trials: Path, durations: Path, conditions: Path | None = None
) -> dict[str, Any]:
    """``report`` with the design audit's section and findings; a duration that is not a positive number, or an
    utterance of the list that the map lacks, is an InputError (exit 2)."""
    frame = read_trial_list(Path(trials), None, Vocabulary()).frame
    seconds = _seconds(read_map(durations, "a duration map", "<utterance> <seconds>"), durations)
    missing = sorted({str(u) for side in ("enrol_utt", "test_utt") for u in frame[side]} - set(seconds))
    if missing:
        raise InputError(
            str(durations),
            f"{len(missing)} utterance(s) of the trials have no duration (first: {', '.join(missing[:3])})",
        )
    trials_frame = pd.DataFrame(
        {side: frame[side].astype(str) for side in ("enrol_utt", "test_utt")} | {"label": frame["label"].astype(int)}
    )
    if conditions is not None:
        condition_map = read_map(conditions, "a condition map", "<utterance> <condition>")
        trials_frame["condition"] = trials_frame["test_utt"].map(condition_map)
    flags, section = scores_design_audit(trials_frame, seconds, Analysis())
    lines = [f"trial design: {section['lines'][-1]}"]
    return extended(report, flags, section, lines)


def _seconds(mapping: dict[str, str], path: Path) -> dict[str, float]:
    """Each utterance's duration as a positive number of seconds."""
    seconds = {}
    for utterance, text in mapping.items():
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not value > 0 or value == float("inf"):
            raise InputError(str(path), f"the duration of {utterance!r} is {text!r}, expected a positive number")
        seconds[utterance] = value
    return seconds
