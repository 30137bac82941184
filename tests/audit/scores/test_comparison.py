"""`audit scores` with several score files (issue 41): the paired EER difference of each pair of encoders, with its
interval from shared speaker draws, printed on the terminal; each file joined and checked as the first."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from audit.metrics import eer
from schemas import EerMethod
from tests.audit.statistics.ranking_simulation import PairedDesign

runner = CliRunner()


def voxceleb_files(folder: Path, eers: tuple[float, ...], *, seed: int = 0, speakers: int = 30) -> list[Path]:
    """A VoxCeleb-style list of simulated trials and one score file per encoder (``e0.txt``, ``e1.txt``, ...)."""
    setting = PairedDesign(n_speakers=speakers, eers=eers).dataset(np.random.default_rng(seed))
    enrol = [f"id1{int(s[1:]):04d}/v/e{i}.wav" for i, s in enumerate(setting.enrol_speaker)]
    test = [f"id1{int(s[1:]):04d}/v/t{i}.wav" for i, s in enumerate(setting.test_speaker)]
    (folder / "trials.txt").write_text(
        "".join(f"{k} {e} {t}\n" for k, e, t in zip(setting.labels, enrol, test, strict=True))
    )
    paths = []
    for name, scores in setting.scores.items():
        path = folder / f"{name}.txt"
        path.write_text("".join(f"{e} {t} {float(v)!r}\n" for e, t, v in zip(enrol, test, scores, strict=True)))
        paths.append(path)
    return paths


def invoke(*args: object) -> tuple[int, str, str]:
    from audit.cli import app

    result = runner.invoke(app, ["scores", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def test_two_score_files_print_their_paired_difference_with_its_interval(tmp_path: Path) -> None:
    files = voxceleb_files(tmp_path, (0.05, 0.12))
    code, out, _ = invoke(tmp_path / "trials.txt", *files, "--resamples", "300")
    assert code == 0
    (line,) = [line for line in out.splitlines() if line.startswith("  all: ")]
    assert line.startswith("  all: e0 - e1 -0.") and line.endswith(": separable")
    code, out, _ = invoke(tmp_path / "trials.txt", *files, "--resamples", "300", "--json")
    report = json.loads(out)
    (pair,) = report["statistics"]["rankings"]["settings"][0]["pairs"]
    labels = np.array([int(row.split()[0]) for row in (tmp_path / "trials.txt").read_text().splitlines()])
    own = [np.array([float(row.split()[2]) for row in path.read_text().splitlines()]) for path in files]
    expected = eer(own[0], labels, EerMethod.ROCCH) - eer(own[1], labels, EerMethod.ROCCH)
    assert pair["difference"]["estimate"] == pytest.approx(expected)
    assert pair["difference"]["low"] < expected < pair["difference"]["high"] < 0
    assert any(section["id"] == "encoder-rankings" for section in report["sections"])


def test_equal_encoders_are_not_separable_and_the_line_says_at_how_many_speakers(tmp_path: Path) -> None:
    files = voxceleb_files(tmp_path, (0.1, 0.1, 0.1), seed=3)
    code, out, _ = invoke(tmp_path / "trials.txt", *files, "--resamples", "300")
    lines = [line for line in out.splitlines() if line.startswith("  all: ")]
    assert code == 0 and len(lines) == 3
    assert all("not separable at 30 speakers (MDD 0." in line for line in lines)


def test_each_condition_is_a_group_of_its_own(tmp_path: Path) -> None:
    files = voxceleb_files(tmp_path, (0.05, 0.12))
    tests = [row.split()[2] for row in (tmp_path / "trials.txt").read_text().splitlines()]
    (tmp_path / "conditions.txt").write_text(
        "".join(f"{t} {'odd' if i % 2 else 'even'}\n" for i, t in enumerate(tests))
    )
    code, out, _ = invoke(
        tmp_path / "trials.txt", *files, "--conditions", tmp_path / "conditions.txt", "--resamples", "200"
    )
    groups = [line.split(":")[0].strip() for line in out.splitlines() if line.startswith("  ") and " - " in line]
    assert code == 0 and groups == ["all", "condition=even", "condition=odd"]


def test_a_second_file_that_misses_trials_fails_the_audit_with_its_finding(tmp_path: Path) -> None:
    files = voxceleb_files(tmp_path, (0.1, 0.1))
    files[1].write_text("".join(files[1].read_text().splitlines(keepends=True)[5:]))
    code, out, _ = invoke(tmp_path / "trials.txt", *files, "--resamples", "100")
    assert code == 1 and "unscored-trials: 5 trials of the list have no score in" in out and str(files[1]) in out


def test_without_speakers_the_comparison_says_why_it_is_absent(tmp_path: Path) -> None:
    (tmp_path / "trials.txt").write_text("1 a1 a2\n0 a1 b1\n1 b1 b2\n0 b2 a2\n")
    for name in ("x", "y"):
        (tmp_path / f"{name}.txt").write_text("a1 a2 0.9\na1 b1 0.1\nb1 b2 0.8\nb2 a2 0.3\n")
    code, out, _ = invoke(tmp_path / "trials.txt", tmp_path / "x.txt", tmp_path / "y.txt")
    assert code == 0 and "No paired comparison: no --speakers map was given" in out
