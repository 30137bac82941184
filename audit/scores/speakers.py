"""Speakers of the trials in ``audit scores``: a declared map (Kaldi ``utt2spk``) or VoxCeleb ids, and the
trials whose labels contradict their speakers."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from audit.scores.joining import categorical, finding, listed_pairs, without_extension
from audit.scores.trial_lists import numbered_fields
from audit.table import read_text
from schemas import Flag, InputError, Severity, TrialKind, count

VOXCELEB_SPEAKER = re.compile(r"id\d{5}")


def read_map(path: Path, what: str, layout: str) -> dict[str, str]:
    """A two-column text map (Kaldi ``utt2spk`` style, ``layout`` names the columns); a key given two values is
    an InputError."""
    text = read_text(Path(path), what)
    mapping: dict[str, str] = {}
    for number, fields in numbered_fields(text):
        if len(fields) != 2:
            raise InputError(str(path), f"expected '{layout}', got {len(fields)} field(s)", row=number)
        key, value = fields
        if mapping.setdefault(key, value) != value:
            raise InputError(str(path), f"{key!r} is given two values, {mapping[key]!r} and {value!r}", row=number)
    return mapping


def _used(column: pd.Series) -> tuple[pd.Categorical, np.ndarray]:
    """A side's utterance ids and which of their categories the trials use (counted, not sorted)."""
    ids = categorical(column)
    return ids, np.bincount(ids.codes[ids.codes >= 0], minlength=len(ids.categories)) > 0


def _speakers(
    sides: dict[str, tuple[pd.Categorical, np.ndarray]], speaker: dict[str, str]
) -> dict[str, pd.Categorical]:
    """``enrol_speaker`` and ``test_speaker`` as categoricals over one set of speakers (so the two compare, and the
    bootstrap takes their codes), from the speaker of each utterance id used (``speaker``)."""
    speakers = pd.Index(sorted(set(speaker.values())), dtype=object)
    speaker_at = pd.Series(speakers.get_indexer(pd.Index(list(speaker.values()), dtype=object)), index=list(speaker))
    columns = {}
    for side, (ids, used) in sides.items():
        of_category = np.full(len(ids.categories), -1, dtype=np.int64)
        of_category[used] = speaker_at.reindex(ids.categories[used]).to_numpy()
        columns[f"{side}_speaker"] = pd.Categorical.from_codes(
            of_category[ids.codes], categories=speakers, validate=False
        )
    return columns


def speakers_of(
    trials: pd.DataFrame, speaker_map: Mapping[str, str] | None, map_path: Path | None
) -> tuple[pd.DataFrame, str] | tuple[None, str]:
    """``trials`` with ``enrol_speaker`` and ``test_speaker``, and where they came from; (None, why) when unknown.

    A declared map must cover every utterance of the scored trials (an InputError otherwise); without one, every
    utterance must be a VoxCeleb id ``idNNNNN/...``. Each distinct id is looked up once.
    """
    sides = {side: _used(trials[f"{side}_utt"]) for side in ("enrol", "test")}
    used = {str(name) for ids, mask in sides.values() for name in ids.categories[mask]}
    if speaker_map is not None:
        missing = sorted(u for u in used if u not in speaker_map and without_extension(u) not in speaker_map)
        if missing:
            raise InputError(
                str(map_path),
                f"{count(len(missing), 'utterance')} of the trials are not in the speaker map "
                f"(first: {', '.join(missing[:3])})",
            )
        speaker = {u: speaker_map.get(u) or speaker_map.get(without_extension(u), "") for u in used}
        how = f"speaker map {map_path}"
    else:
        # The first path component of a VoxCeleb id.
        speaker = {u: u.partition("/")[0] for u in used}
        if not all("/" in u and VOXCELEB_SPEAKER.fullmatch(speaker[u]) for u in used):
            return None, "no --speakers map was given and the utterance ids are not VoxCeleb ids (idNNNNN/...)"
        how = "VoxCeleb ids (idNNNNN/...)"
    return trials.assign(**_speakers(sides, speaker)), how


def flag_speaker_labels(trials: pd.DataFrame) -> Flag | None:
    """Target trials across two speakers, or non-target trials of one speaker: the labels or the speakers are
    wrong. A trial keyed spoof (``kind``, from ``--cm-scores``) is a non-target of one speaker by design."""
    same = trials["enrol_speaker"] == trials["test_speaker"]
    spoof = trials["kind"] == TrialKind.SPOOF if "kind" in trials else False
    contradict = trials[(same != (trials["label"] == 1)) & ~spoof]
    if not len(contradict):
        return None
    return finding(
        "labels-contradict-speakers",
        Severity.WARNING,
        f"{count(len(contradict), 'trial')} have a label that contradicts their speakers (a target across two "
        "speakers or a non-target within one).",
        listed_pairs(contradict, "trial"),
    )


def calibration_speakers_overlap(
    evaluated: pd.DataFrame, dev: pd.DataFrame, dev_path: Path, speaker_map: Mapping[str, str] | None
) -> Flag | None:
    """The development scores must come from speakers the evaluation does not hold (as a bundle's declared
    development speakers must): a calibration fitted on the evaluated speakers' voices flatters Cllr and actDCF.
    The development speakers are known where the evaluation's are, from the same map or VoxCeleb ids; a
    development utterance neither names is not counted."""

    def speaker(utt: str) -> str | None:
        if speaker_map is not None:
            return speaker_map.get(utt) or speaker_map.get(without_extension(utt))
        head = utt.partition("/")[0]
        return head if "/" in utt and VOXCELEB_SPEAKER.fullmatch(head) else None

    def side(column: str) -> np.ndarray:
        ids = categorical(dev[column])  # each distinct id looked up once
        return np.asarray([speaker(str(utt)) for utt in ids.categories] + [None], dtype=object)[ids.codes]

    evaluation = {str(name) for side in ("enrol_speaker", "test_speaker") for name in pd.unique(evaluated[side])}
    lines = dev.assign(enrol_speaker=side("enrol_utt"), test_speaker=side("test_utt"))
    inside = lines["enrol_speaker"].isin(evaluation) | lines["test_speaker"].isin(evaluation)
    if not inside.any():
        return None
    shared = sorted(evaluation & {*lines["enrol_speaker"].dropna(), *lines["test_speaker"].dropna()})
    return finding(
        "calibration-on-evaluation-speakers",
        Severity.ERROR,
        f"{count(int(inside.sum()), 'line')} of the calibration file {dev_path} score speakers of the evaluated "
        f"trials ({count(len(shared), 'speaker')}, first: {', '.join(shared[:3])}): a calibration is fitted on "
        "held-out development speakers only, so no calibrated metric is reported.",
        listed_pairs(lines[inside.to_numpy()], "line"),
    )
