"""`audit scores --calibration` on development files that flatter the calibration (issue 44, point 7): the
evaluated trials written with their sides the other way round, and new trials of the evaluated speakers, are each
an error finding and leave Cllr and actDCF out (they were exit 0 without a word); development speakers the
evaluation does not hold, named by VoxCeleb ids or by the speaker map, pass with their calibrated metrics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.scores.scoring import ScoringConfig, audit_scores
from tests.audit.scores.test_trial_scores import invoke, write_case
from tests.fuzzing import examples

CONFIG = ScoringConfig(n_resamples=20)


def _case(tmp_path: Path, n_speakers: int = 6, seed: int = 0) -> tuple[Path, Path, list[tuple[int, str, str, float]]]:
    """An evaluation list of VoxCeleb ids (speakers id00000..), its scores, and the rows written."""
    rng = np.random.default_rng(seed)
    rows = []
    for speaker in range(n_speakers):
        for k in range(3):
            other = (speaker + 1 + k % (n_speakers - 1)) % n_speakers
            rows.append((1, f"id{speaker:05d}/e/{k}.wav", f"id{speaker:05d}/t/{k}.wav", float(rng.normal(1, 1))))
            rows.append((0, f"id{speaker:05d}/e/{k}.wav", f"id{other:05d}/t/{k}.wav", float(rng.normal(-1, 1))))
    trials, scores = write_case(tmp_path, "kaldi", rows)
    return trials, scores, rows


def _dev(tmp_path: Path, speakers: range, seed: int = 1) -> Path:
    """A labelled development file (wespeaker layout) of new utterances of ``speakers``."""
    rng = np.random.default_rng(seed)
    lines = []
    for speaker in speakers:
        for k in range(4):
            other = speakers[(speakers.index(speaker) + 1 + k % 2) % len(speakers)]
            lines.append(f"id{speaker:05d}/d/{k}.wav id{speaker:05d}/c/{k}.wav {rng.normal(1, 1)} target")
            lines.append(f"id{speaker:05d}/d/{k}.wav id{other:05d}/c/{k}.wav {rng.normal(-1, 1)} nontarget")
    path = tmp_path / "dev.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def _calibrated(report: dict) -> dict:
    return next(row for row in report["aggregates"]["calibration_per_group"] if row["grouping"] == "all")


def test_development_speakers_the_evaluation_does_not_hold_pass(tmp_path: Path) -> None:
    trials, scores, _ = _case(tmp_path)
    report = audit_scores(trials, scores, calibration=_dev(tmp_path, range(90, 96)), config=CONFIG)
    assert report["flags"] == [] and report["verdict"] == "pass"
    assert _calibrated(report)["cllr"] is not None


def test_evaluated_trials_written_the_other_way_round_are_an_error(tmp_path: Path) -> None:
    trials, scores, rows = _case(tmp_path)
    dev = tmp_path / "reversed.txt"
    dev.write_text("".join(f"{t} {e} {s} {'target' if lab else 'nontarget'}\n" for lab, e, t, s in rows))
    code, _, stderr = invoke(str(trials), str(scores), "--calibration", str(dev), "--resamples", "20")
    assert code == 1, stderr
    report = audit_scores(trials, scores, calibration=dev, config=CONFIG)
    (flag,) = report["flags"]  # its speakers are evaluated too: said once
    assert flag["id"] == "calibration-on-evaluation-trials"
    assert f"{len(rows)} lines of the calibration file" in flag["message"]
    assert f"({len(rows)} with enrolment and test written the other way round)" in flag["message"]
    assert "cllr" not in _calibrated(report)


def test_new_trials_of_the_evaluated_speakers_are_an_error(tmp_path: Path) -> None:
    trials, scores, _ = _case(tmp_path)
    dev = _dev(tmp_path, range(4, 10))  # speakers 4 and 5 are evaluated
    report = audit_scores(trials, scores, calibration=dev, config=CONFIG)
    (flag,) = report["flags"]
    assert flag["id"] == "calibration-on-evaluation-speakers" and report["verdict"] == "fail"
    naming = [line for line in dev.read_text().splitlines() if "id00004/" in line or "id00005/" in line]
    assert flag["message"].startswith(
        f"{len(naming)} lines of the calibration file {dev} score speakers of the evaluated trials"
    )
    assert "(2 speakers, first: id00004, id00005)" in flag["message"]
    assert "cllr" not in _calibrated(report)


def test_the_speaker_map_names_the_development_speakers_too(tmp_path: Path) -> None:
    trials, scores, rows = _case(tmp_path)
    utterances = {utt for _, e, t, _ in rows for utt in (e, t)}
    dev = tmp_path / "dev.txt"
    dev.write_text("d1 d2 2.0 target\nd3 d4 -1.0 nontarget\nd5 d6 0.5 target\nd1 d4 -2.0 nontarget\n"
                   "d7 d8 -1.5 target\nd9 d10 1.8 nontarget\n")  # fmt: skip
    speaker_map = {utt: f"spk{utt[2:7]}" for utt in utterances} | {"d1": "spk00002", "d2": "spk00002"}
    speakers = tmp_path / "utt2spk"
    speakers.write_text("".join(f"{utt} {speaker}\n" for utt, speaker in sorted(speaker_map.items())))
    report = audit_scores(trials, scores, calibration=dev, speakers=speakers, config=CONFIG)
    (flag,) = report["flags"]
    assert flag["id"] == "calibration-on-evaluation-speakers"
    assert "2 lines of the calibration file" in flag["message"] and "first: spk00002" in flag["message"]


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    n_speakers=st.integers(3, 8),
    shared=st.integers(0, 3),
    reversed_lines=st.integers(0, 4),
    seed=st.integers(0, 2**16),
)
def test_property_a_calibration_is_refused_exactly_when_it_touches_the_evaluation(
    tmp_path_factory: pytest.TempPathFactory, n_speakers: int, shared: int, reversed_lines: int, seed: int
) -> None:
    """Development files of any size drawn from held-out speakers, some of the evaluated ones, and some evaluated
    trials reversed: refused exactly when one of the two holds (the trials named first), never a traceback."""
    folder = tmp_path_factory.mktemp("case")
    trials, scores, rows = _case(folder, n_speakers, seed)
    first = n_speakers - min(shared, n_speakers)
    dev = _dev(folder, range(first, first + 6), seed + 1)
    with dev.open("a") as handle:
        for lab, e, t, s in rows[:reversed_lines]:
            handle.write(f"{t} {e} {s} {'target' if lab else 'nontarget'}\n")
    report = audit_scores(trials, scores, calibration=dev, config=CONFIG)
    ids = {flag["id"] for flag in report["flags"]}
    assert ("calibration-on-evaluation-trials" in ids) == (reversed_lines > 0)
    assert ("calibration-on-evaluation-speakers" in ids) == (shared > 0 and reversed_lines == 0)  # said once
    assert ("cllr" in _calibrated(report)) == (not ids & {"calibration-on-evaluation-trials",
                                                          "calibration-on-evaluation-speakers"})  # fmt: skip
