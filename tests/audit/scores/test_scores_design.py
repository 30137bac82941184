"""`audit scores --durations` (issue 41): the trial-design rules over a reviewer's list, planted and clean."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

runner = CliRunner()


def files(folder: Path, *, noisy_seconds: float, same_recording: bool = False) -> list[Path]:
    """40 trials of 8 VoxCeleb speakers, a third targets; the test side of odd trials is in condition 'noisy' and
    its recordings (both sides) last ``noisy_seconds``, the others 3 s."""
    trials, scores, durations, conditions = [], [], [], []
    for i in range(40):
        enrol, target = i % 8, i % 3 == 0
        test = enrol if target else (enrol + 1 + i % 7) % 8
        e, t = f"id1000{enrol}/v/e{i}.wav", f"id1000{test}/v/t{i}.wav"
        if same_recording and i == 3:
            t = e
        trials.append(f"{int(target)} {e} {t}\n")
        scores.append(f"{e} {t} {0.5 + target - 0.01 * i}\n")
        seconds = noisy_seconds if i % 2 else 3.0
        durations += [f"{e} {seconds}\n", f"{t} {seconds}\n"]
        conditions.append(f"{t} {'noisy' if i % 2 else 'clean'}\n")
    paths = []
    for name, lines in (("trials", trials), ("scores", scores), ("durations", durations), ("conditions", conditions)):
        (folder / f"{name}.txt").write_text("".join(dict.fromkeys(lines)))
        paths.append(folder / f"{name}.txt")
    return paths


def invoke(trials: Path, scores: Path, durations: Path, conditions: Path) -> tuple[int, str]:
    from audit.cli import app

    args = ["scores", str(trials), str(scores), "--durations", str(durations), "--conditions", str(conditions)]
    result = runner.invoke(app, [*args, "--resamples", "50"])
    return result.exit_code, result.stdout


def test_a_clean_design_passes_and_says_no_rule_fires(tmp_path: Path) -> None:
    code, out = invoke(*files(tmp_path, noisy_seconds=3.0))
    assert code == 0 and "trial design: No rule fires." in out


def test_longer_clips_in_one_condition_warn_from_1_3_and_fail_from_1_6(tmp_path: Path) -> None:
    code, out = invoke(*files(tmp_path, noisy_seconds=4.2))  # 4.2 / 3 = 1.4
    assert code == 0 and "warning duration-confound" in out and "(noisy) over 3.000 (clean) = 1.400" in out
    code, out = invoke(*files(tmp_path, noisy_seconds=5.1))  # 1.7
    assert code == 1 and "error   duration-confound" in out


def test_one_recording_on_both_sides_fails(tmp_path: Path) -> None:
    code, out = invoke(*files(tmp_path, noisy_seconds=3.0, same_recording=True))
    assert code == 1 and "same-source-trials" in out and "1 of 40 trials with one recording on both sides" in out


def test_an_utterance_without_a_duration_is_one_line_and_exit_2(tmp_path: Path) -> None:
    trials, scores, durations, _ = files(tmp_path, noisy_seconds=3.0)
    durations.write_text("".join(durations.read_text().splitlines(keepends=True)[1:]))
    from audit.cli import app

    result = runner.invoke(app, ["scores", str(trials), str(scores), "--durations", str(durations)])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith(str(durations)) and "have no duration" in result.stderr
