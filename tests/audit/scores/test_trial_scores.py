"""`audit scores`: trial lists and score files in the common layouts, joined, scored against hand-computed values
and the ESPnet oracle files, and every hostile input as one line (exit 2) or a finding (exit 1)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from audit.metrics.point import eer
from audit.scores.scoring import ScoringConfig, audit_scores
from audit.statistics.draws import bias_corrected_interval, draw_cluster_weights
from tests.audit.statistics.test_det_bands import oracle_miss

DATA = Path(__file__).resolve().parents[2] / "data"
runner = CliRunner()

# Hand-computed case. Descending: 0.9 T, 0.8 T, 0.7 N, 0.3 T, 0.2 N, 0.1 N (3 targets, 3 non-targets).
# At 0.7: Pmiss = 1/3 = Pfa, so the legacy and interpolated EERs are 1/3. The ROC convex hull runs from
# (Pfa, Pmiss) = (0, 1/3) to (1/3, 0), crossing Pfa = Pmiss at 1/6: the ROCCH EER. AUC: 3 + 3 + 2 of the 9
# pairs rank the target higher, 8/9. minDCF at p_target 0.5, unit costs is min(Pmiss + Pfa) = 1/3.
TRIALS = [
    (1, "id00001/a/00001.wav", "id00001/b/00001.wav", 0.9),
    (1, "id00002/a/00001.wav", "id00002/b/00001.wav", 0.8),
    (0, "id00001/a/00001.wav", "id00003/a/00001.wav", 0.7),
    (1, "id00003/a/00001.wav", "id00003/b/00001.wav", 0.3),
    (0, "id00002/a/00001.wav", "id00004/a/00001.wav", 0.2),
    (0, "id00004/a/00001.wav", "id00001/b/00001.wav", 0.1),
]
EXPECTED = {"eer_legacy": 1 / 3, "eer_rocch": 1 / 6, "eer_interp": 1 / 3, "auc": 8 / 9, "min_dcf": 1 / 3}
KALDI_LABEL = {1: "target", 0: "nontarget"}


def score_line(layout: str, label: int, enrol: str, test: str, score: float) -> str:
    if layout == "kaldi":
        return f"{enrol} {test} {score}"
    if layout == "voxceleb":
        return f"{score} {enrol} {test}"
    if layout == "wespeaker":
        return f"{enrol} {test} {score:.5f} {KALDI_LABEL[label]}"
    return f"{enrol.removesuffix('.wav')} {test.removesuffix('.wav')} {label} {score:f}"  # speechbrain


def write_case(
    tmp_path: Path, layout: str = "kaldi", trials: list = TRIALS, kaldi_list: bool = False
) -> tuple[Path, Path]:
    trial_path, score_path = tmp_path / "trials.txt", tmp_path / "scores.txt"
    if kaldi_list:
        trial_path.write_text("".join(f"{e} {t} {KALDI_LABEL[lab]}\n" for lab, e, t, _ in trials))
    else:
        trial_path.write_text("".join(f"{lab} {e} {t}\n" for lab, e, t, _ in trials))
    score_path.write_text("\n".join(score_line(layout, *trial) for trial in trials) + "\n")
    return trial_path, score_path


def invoke(*args: str) -> tuple[int, str, str]:
    from audit.cli import app

    result = runner.invoke(app, ["scores", *args])
    return result.exit_code, result.stdout, result.stderr


def all_row(report: dict) -> dict:
    return next(row for row in report["aggregates"]["metrics_per_group"] if row["grouping"] == "all")


@pytest.mark.parametrize("layout", ["kaldi", "voxceleb", "wespeaker", "speechbrain"])
@pytest.mark.parametrize("given", [False, True])
def test_every_layout_gives_the_hand_computed_metrics(tmp_path: Path, layout: str, given: bool) -> None:
    trial_path, score_path = write_case(tmp_path, layout, kaldi_list=layout == "wespeaker")
    config = ScoringConfig(p_target=0.5, n_resamples=20)
    report = audit_scores(trial_path, score_path, score_format=layout if given else None, config=config)  # type: ignore[arg-type]
    row = all_row(report)
    for name, value in EXPECTED.items():
        assert row[name] == pytest.approx(value, abs=1e-12), name
    assert (row["n_target"], row["n_nontarget"], row["n_speakers"]) == (3, 3, 4)
    assert report["verdict"] == "pass", report["flags"]
    assert report["source"]["format"] == layout
    assert report["source"]["trials"]["format"] == ("kaldi" if layout == "wespeaker" else "voxceleb")


@pytest.mark.parametrize(("name", "expected_eer", "expected_dcf"), [("eer0", 0.0, 0.0), ("eer100", 1.0, 1.0)])
def test_the_espnet_oracle_files(tmp_path: Path, name: str, expected_eer: float, expected_dcf: float) -> None:
    """ESPnet's published eer/mindcf (p_target 0.05) for its own score files (tests/data/README.md)."""
    lines = (DATA / f"espnet_scores_{name}.txt").read_text().split("\n")
    trials = [line.split() for line in lines if line.strip()]
    trial_path, score_path = tmp_path / "trials", tmp_path / "scores"
    trial_path.write_text("".join(f"{key}_e {key}_t {KALDI_LABEL[int(label)]}\n" for key, _, label in trials))
    score_path.write_text("".join(f"{key}_e {key}_t {score}\n" for key, score, _ in trials))
    report = audit_scores(trial_path, score_path, config=ScoringConfig(p_target=0.05))
    row = all_row(report)
    assert (row["eer_legacy"], row["min_dcf"]) == (expected_eer, expected_dcf)
    assert report["flags"][0]["id"] == "speakers-unknown"  # no map, not VoxCeleb ids: no intervals, said so


def test_the_interval_is_the_bias_corrected_interval_of_two_way_resampled_eers(tmp_path: Path) -> None:
    """Oracle: each draw's EER recomputed by audit.metrics.point.eer on the trials repeated as often as both their
    speakers were drawn (a target: its one speaker), then the bias-corrected percentile interval of those EERs."""
    rng = np.random.default_rng(3)
    trials = []
    for n in range(60):
        enrol_speaker, other = n % 6, (n % 6 + 1 + n % 5) % 6
        label = n % 3 == 0
        test_speaker = enrol_speaker if label else other
        score = rng.normal(1.0 if label else 0.0)
        trials.append(
            (int(label), f"id0000{enrol_speaker}/e/{n:05d}.wav", f"id0000{test_speaker}/t/{n:05d}.wav", score)
        )
    trial_path, score_path = write_case(tmp_path, "kaldi", trials)
    report = audit_scores(trial_path, score_path, config=ScoringConfig(n_resamples=40, seed=7))
    row = all_row(report)
    labels = np.array([t[0] for t in trials])
    scores = np.array([t[3] for t in trials])
    enrol, test = np.array([t[1][:7] for t in trials]), np.array([t[2][:7] for t in trials])
    index = np.unique(np.r_[enrol, test])
    weights = draw_cluster_weights(index.size, 40, 7).astype(int)
    e, t = np.searchsorted(index, enrol), np.searchsorted(index, test)
    copies = [np.where(e == t, w[e], w[e] * w[t]) for w in weights]
    draws = np.array(
        [
            eer(np.repeat(scores, c), np.repeat(labels, c), "interp")
            if 0 < labels[c > 0].sum() < (c > 0).sum()
            else np.nan
            for c in copies
        ]
    )
    expected = bias_corrected_interval(draws, eer(scores, labels, "interp"), 0.95)
    assert (row["eer_interp_low"], row["eer_interp_high"]) == pytest.approx(
        (expected["low"], expected["high"]), abs=1e-12
    )
    assert row["bootstrap_clusters"] == "enrolment and test speakers (two-way)"
    methods = next(s for s in report["sections"] if s["id"] == "score-metrics")["lines"]
    assert any("bias-corrected" in line and "two-way" in line and "eer_rocch" in line for line in methods)


def test_det_bands_come_from_the_intervals_draws_only_when_asked(tmp_path: Path) -> None:
    """Oracle: at each false-alarm rate of the band, the weighted miss of every draw of the interval's own two-way
    weights (``oracle_miss`` of the bundle's band tests), then its percentile interval; without ``det_bands`` the
    curves carry no band and the rest of the report is the same."""
    rng = np.random.default_rng(11)
    trials = []
    for n in range(240):
        enrol_speaker = n % 8
        label = n % 3 == 0
        test_speaker = enrol_speaker if label else (enrol_speaker + 1 + n % 7) % 8
        trials.append(
            (int(label), f"id0000{enrol_speaker}/e/{n:05d}.wav", f"id0000{test_speaker}/t/{n:05d}.wav",
             rng.normal(1.5 if label else 0.0))
        )  # fmt: skip
    trial_path, score_path = write_case(tmp_path, "kaldi", trials)
    config = ScoringConfig(n_resamples=60, seed=5)
    banded = audit_scores(trial_path, score_path, config=config, det_bands=True)
    plain = audit_scores(trial_path, score_path, config=config)
    band = next(c for c in banded["curves"] if c["grouping"] == "all")["band"]
    assert all("band" not in c for c in plain["curves"])
    assert {**banded, "curves": None} == {**plain, "curves": None}
    labels = np.array([t[0] for t in trials], bool)
    scores = np.array([t[3] for t in trials])
    enrol, test = np.array([t[1][:7] for t in trials]), np.array([t[2][:7] for t in trials])
    index = np.unique(np.r_[enrol, test])
    e, t = np.searchsorted(index, enrol), np.searchsorted(index, test)
    rates = np.array(band["p_fa"])
    assert rates.min() * (~labels).sum() >= 1.0 and rates.size > 20
    ones = np.ones(scores.size)
    assert band["p_miss"] == pytest.approx([oracle_miss(scores, labels, ones, p) for p in rates], abs=2e-5)
    drawn = []
    for w in draw_cluster_weights(index.size, 60, 5):
        weights = np.where(e == t, w[e], w[e] * w[t])
        if weights[labels].sum() > 0 and weights[~labels].sum() > 0:
            drawn.append([oracle_miss(scores, labels, weights, p) for p in rates])
    low, high = np.quantile(np.array(drawn), [0.025, 0.975], axis=0)
    assert band["low"] == pytest.approx(low.tolist(), abs=2e-5)
    assert band["high"] == pytest.approx(high.tolist(), abs=2e-5)
    assert band["n_undefined"] == 60 - len(drawn) and band["level"] == 0.95


def test_join_findings_count_every_pair(tmp_path: Path) -> None:
    trial_path, score_path = write_case(tmp_path, "wespeaker", kaldi_list=True)
    lines = score_path.read_text().splitlines()
    lines[0] = lines[0].replace("target", "nontarget")  # label contradicts the list
    lines[4] = lines[4].replace("0.20000", "nan")  # not finite
    del lines[5]  # trial 6 unscored
    lines += [lines[1], "id00009/a/00001.wav id00001/b/00001.wav 0.5 nontarget"]  # duplicate, not in the list
    score_path.write_text("\n".join(lines) + "\n")
    trial_path.write_text(trial_path.read_text() + trial_path.read_text().splitlines()[2] + "\n")
    code, stdout, _ = invoke(str(trial_path), str(score_path), "--json", "--resamples", "10")
    assert code == 1
    report = json.loads(stdout)
    flags = {flag["id"]: flag for flag in report["flags"]}
    assert set(flags) == {
        "duplicated-trials", "duplicated-scores", "unscored-trials", "scores-without-trials",
        "non-finite-scores", "label-mismatch",
    }  # fmt: skip
    assert flags["duplicated-trials"]["details"]["pairs"][0]["trial"] == 7
    assert flags["duplicated-scores"]["details"]["pairs"][0]["line"] == 6
    assert flags["unscored-trials"]["details"]["pairs"][0]["test"] == "id00001/b/00001.wav"
    assert flags["scores-without-trials"]["details"]["pairs"][0]["enrol"] == "id00009/a/00001.wav"
    assert flags["non-finite-scores"]["details"]["pairs"][0]["line"] == 5
    counts = {row["count"]: row["value"] for row in report["sections"][0]["table"]}
    assert counts["trials scored"] == 4
    assert all_row(report)["trials"] == 4


def test_speaker_map_subgroups_and_conditions(tmp_path: Path) -> None:
    plain = [(lab, e.replace("/", "_"), t.replace("/", "_"), s) for lab, e, t, s in TRIALS]
    trial_path, score_path = write_case(tmp_path, "kaldi", plain)
    utts = {u for _, e, t, _ in plain for u in (e, t)}
    (tmp_path / "utt2spk").write_text("".join(f"{u} {u[:7]}\n" for u in sorted(utts)))
    (tmp_path / "spk2gender").write_text("id00001 f\nid00002 m\nid00003 f\nid00004 m\n")
    (tmp_path / "utt2cond").write_text("".join(f"{u} {'noisy' if '_b_' in u else 'clean'}\n" for u in sorted(utts)))
    report = audit_scores(
        trial_path, score_path, speakers=tmp_path / "utt2spk", subgroups=tmp_path / "spk2gender",
        conditions=tmp_path / "utt2cond", config=ScoringConfig(n_resamples=10),
    )  # fmt: skip
    rows = {(row["grouping"], row["group"]): row for row in report["aggregates"]["metrics_per_group"]}
    # Female enrolments (id00001, id00003): 0.9 T, 0.7 N, 0.3 T. The legacy routine's first closest point is
    # the threshold 0.9 (Pmiss 1/2, Pfa 0): EER 1/4. The interpolated crossing lies on the step to 0.7: 1/2.
    assert rows[("subgroup", "f")]["eer_legacy"] == pytest.approx(0.25)
    assert rows[("subgroup", "f")]["eer_interp"] == pytest.approx(0.5)
    assert rows[("subgroup", "f")]["trials"] == 3
    # Noisy tests (the b takes): 0.9, 0.8, 0.3 targets and 0.1 non-target -> separable, EER 0.
    assert rows[("condition", "noisy")]["eer_interp"] == 0.0
    assert rows[("condition", "clean")]["not_computable"].endswith("targets and non-targets are both needed")
    # A speaker missing from the subgroup map is counted, not dropped silently.
    (tmp_path / "spk2gender").write_text("id00001 f\nid00002 m\nid00003 f\n")
    report = audit_scores(
        trial_path, score_path, speakers=tmp_path / "utt2spk", subgroups=tmp_path / "spk2gender",
        config=ScoringConfig(n_resamples=10),
    )  # fmt: skip
    assert "1 scored trial has no subgroup in its map and is in no subgroup group." in report["sections"][1]["lines"]


def one_line(stderr: str, starts: str, problem: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(starts) and problem in lines[0], lines[0]


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda text: text[: text.rindex(" ")], "row 6: expected '<enrol> <test> <score>' (kaldi), got 2 field(s)"),
        (lambda text: text.replace("0.8", "0.8 extra"), "row 2: expected '<enrol> <test> <score>' (kaldi), got 4"),
        (lambda text: text.replace("0.7", "high"), "row 3, column 'score': expected a number, got 'high'"),
        # what Python's float() takes but no toolkit writes: digit separators, other scripts' digits, hex
        (lambda text: text.replace("0.7", "1_0"), "row 3, column 'score': expected a number, got '1_0'"),
        (lambda text: text.replace("0.7", "\u0661\u0662"), "row 3, column 'score': expected a number, got '١٢'"),
        (lambda text: text.replace("0.7", "0x1p3"), "row 3, column 'score': expected a number, got '0x1p3'"),
        (lambda text: "\x00\x01" + text, "binary file"),
        (lambda text: "", "empty file"),
        (lambda text: "a b c d e\n" + text, "matches none of the score-file layouts"),
    ],
)
def test_hostile_score_files_are_one_line(tmp_path: Path, edit: object, problem: str) -> None:
    trial_path, score_path = write_case(tmp_path, "kaldi")
    score_path.write_text(edit(score_path.read_text()))  # type: ignore[operator]
    code, stdout, stderr = invoke(str(trial_path), str(score_path))
    assert code == 2 and not stdout
    one_line(stderr, str(score_path), problem)


def test_a_fifo_or_a_folder_is_refused_without_blocking(tmp_path: Path) -> None:
    trial_path, _ = write_case(tmp_path)
    fifo = tmp_path / "scores.fifo"
    os.mkfifo(fifo)
    code, _, stderr = invoke(str(trial_path), str(fifo))
    assert code == 2
    one_line(stderr, str(fifo), "not a regular file")
    code, _, stderr = invoke(str(tmp_path), str(fifo))
    one_line(stderr, str(tmp_path), "is a directory")


def test_hostile_trial_list_and_format_option(tmp_path: Path) -> None:
    trial_path, score_path = write_case(tmp_path)
    trial_path.write_text("1 a b\nx a c\n")
    code, _, stderr = invoke(str(trial_path), str(score_path))
    assert code == 2
    one_line(stderr, str(trial_path), "row 2, column 'label': expected '<1|0> <enrol> <test>', got label 'x'")
    code, _, stderr = invoke(str(trial_path), str(score_path), "--format", "csv")
    assert code == 2
    one_line(stderr, "--format", "expected one of kaldi, voxceleb, wespeaker, speechbrain")
    (tmp_path / "map").write_text("u1 s1\nu1 s2\n")
    write_case(tmp_path)
    code, _, stderr = invoke(str(trial_path), str(score_path), "--speakers", str(tmp_path / "map"))
    one_line(stderr, str(tmp_path / "map"), "row 2: 'u1' is given two values")


@pytest.mark.parametrize(
    ("option", "value", "problem"),
    [
        ("--resamples", "1000000000", "expected an integer from 1 to 100,000, got 1000000000"),
        ("--resamples", "0", "expected an integer from 1 to 100,000, got 0"),
        ("--seed", "-1", "expected an integer from 0 to 9,223,372,036,854,775,807, got -1"),
        ("--p-target", "1.5", "expected a finite number > 0 and < 1, got 1.5"),
        ("--p-target", "nan", "expected a finite number > 0 and < 1, got nan"),
        ("--c-fa", "inf", "expected a finite number > 0, got inf"),
        ("--c-miss", "-1", "expected a finite number > 0, got -1.0"),
    ],
)
def test_out_of_bounds_options_are_one_line_before_any_work(
    tmp_path: Path, option: str, value: str, problem: str
) -> None:
    """Oracle: the bounds of the bundle audit's [analysis] (a billion resamples was a 44.7 GiB allocation)."""
    trial_path, score_path = write_case(tmp_path)
    code, stdout, stderr = invoke(str(trial_path), str(score_path), option, value)
    assert code == 2 and not stdout
    one_line(stderr, option, problem)


@pytest.mark.slow
def test_the_report_is_written(tmp_path: Path) -> None:
    trial_path, score_path = write_case(tmp_path, "voxceleb")
    code, stdout, _ = invoke(str(trial_path), str(score_path), "--out", str(tmp_path / "out"), "--resamples", "10")
    assert code == 0, stdout
    assert stdout.startswith(f"PASS: {score_path}")
    page = (tmp_path / "out" / "report.html").read_text()
    assert "Metrics per group" in page and "Scores joined to trials" in page
    assert (tmp_path / "out" / "figures" / "det_curves.png").is_file()
    assert (tmp_path / "out" / "figures" / "score_distributions.png").is_file()
    assert "EER (interp) 0.3333" in page  # the DET figure's text alternative
    assert "shaded: the pointwise 95% band of the miss rate" in page  # --out draws the bands
    assert json.loads((tmp_path / "out" / "report.json").read_text())["source"]["trials"]["format"] == "voxceleb"


@pytest.mark.parametrize("magnitude", [1e300, 1e-300])
def test_scores_of_extreme_magnitude_are_drawn_not_an_internal_error(tmp_path: Path, magnitude: float) -> None:
    """Finite scores of 1e300 (or 1e-300) are valid input: the figures write their ticks with an exponent, not as
    labels of 300 digits wider than the figure (an internal error before), and the same metrics as the hand case."""
    trials = [(label, enrol, test, magnitude * (score - 0.5)) for label, enrol, test, score in TRIALS]
    trial_path, score_path = write_case(tmp_path, "voxceleb", trials)
    code, stdout, stderr = invoke(str(trial_path), str(score_path), "--out", str(tmp_path / "out"), "--resamples", "10")
    assert code == 0 and "internal error" not in stderr, stdout + stderr
    svg = (tmp_path / "out" / "figures" / "score_distributions.svg").read_text()
    assert re.search(r">\u2212?[0-9.]+e[+-]\d+</text>", svg), "no tick written with an exponent"
    assert (tmp_path / "out" / "figures" / "score_distributions.png").is_file()


def _without_sources(report: dict) -> dict:
    return {key: value for key, value in report.items() if key not in ("source", "tool")}


@pytest.mark.parametrize("layout", ["kaldi", "voxceleb", "wespeaker", "speechbrain"])
def test_gzipped_files_and_header_lines_give_the_plain_files_report(tmp_path: Path, layout: str) -> None:
    """Lists and score files arrive gzipped (VoxSRC's) or with a header line (a spreadsheet's): read alike."""
    import gzip

    from audit.scores.scoring import audit_scores

    trial_path, score_path = write_case(tmp_path, layout)
    plain = audit_scores(trial_path, score_path)
    packed = tmp_path / "packed"
    packed.mkdir()
    (packed / "trials.txt.gz").write_bytes(gzip.compress(trial_path.read_bytes()))
    header = {"kaldi": "enrol test score", "voxceleb": "score enrol test", "wespeaker": "enrol test score label",
              "speechbrain": "enrol test label score"}[layout]  # fmt: skip
    (packed / "scores.txt.gz").write_bytes(gzip.compress(f"{header}\n".encode() + score_path.read_bytes()))
    report = audit_scores(packed / "trials.txt.gz", packed / "scores.txt.gz")
    assert report["source"]["header_line"] == 1 and report["source"]["trials"]["header_line"] is None
    assert report["source"]["format"] == layout
    assert json.dumps(_without_sources(report), sort_keys=True, default=str) == json.dumps(
        _without_sources(plain), sort_keys=True, default=str
    )


def test_a_header_is_only_a_first_line_of_the_data_lines_width_and_a_damaged_gzip_is_one_line(tmp_path: Path) -> None:
    trial_path, score_path = write_case(tmp_path, "kaldi")
    score_path.write_text(score_path.read_text().replace("\n", "\nenrol test score\n", 1))  # a header on line 2
    code, _, stderr = invoke(str(trial_path), str(score_path))
    assert code == 2
    one_line(stderr, str(score_path), "row 2, column 'score': expected a number, got 'score'")
    damaged = tmp_path / "scores.txt.gz"
    import gzip

    damaged.write_bytes(gzip.compress(score_path.read_bytes())[:-12])
    code, _, stderr = invoke(str(trial_path), str(damaged))
    assert code == 2
    one_line(stderr, str(damaged), "not a readable gzip file")


def test_the_terminal_shows_each_groups_eers_with_their_intervals(tmp_path: Path) -> None:
    """A compact table per group, from the report's own rows (not recomputed): what a reviewer reads first."""
    trial_path, score_path = write_case(tmp_path, "kaldi")
    code, stdout, _ = invoke(str(trial_path), str(score_path))
    _, report_json, _ = invoke(str(trial_path), str(score_path), "--json")
    row = all_row(json.loads(report_json))
    header, first = stdout.splitlines()[1:3]
    assert code == 0 and header.split() == [
        "group",
        "trials",
        "eer_legacy",
        "eer_rocch",
        "eer_interp",
        "min_dcf",
        "auc",
    ]
    assert first.startswith(f"all trials  {row['trials']}")
    for name in ("eer_legacy", "eer_rocch", "eer_interp"):
        low, high = row.get(f"{name}_low"), row.get(f"{name}_high")
        shown = f"{row[name]:.3f} [{low:.3f}, {high:.3f}]" if low is not None else f"{row[name]:.3f}"
        assert shown in first, (name, first)
    assert first.endswith(f"{row['min_dcf']:.4f}   {row['auc']:.4f}") or first.split()[-2:] == [
        f"{row['min_dcf']:.4f}",
        f"{row['auc']:.4f}",
    ]


def test_a_withheld_interval_is_said_on_its_metrics_line(tmp_path: Path) -> None:
    """A speaker map that puts every utterance under one speaker leaves the bootstrap one cluster to draw: the
    report says why there is no interval, and the terminal's line of that group says there is none."""
    trial_path, score_path = write_case(tmp_path, "kaldi")
    speakers = tmp_path / "utt2spk"
    utterances = sorted({utt for _, enrol, test, _ in TRIALS for utt in (enrol, test)})
    speakers.write_text("".join(f"{utt} one\n" for utt in utterances))
    _, stdout, _ = invoke(str(trial_path), str(score_path), "--speakers", str(speakers))
    _, report_json, _ = invoke(str(trial_path), str(score_path), "--speakers", str(speakers), "--json")
    row = all_row(json.loads(report_json))
    assert "at least 2 speaker clusters" in row["interval_not_computable"]
    first = stdout.splitlines()[2]
    for name in ("eer_legacy", "eer_rocch", "eer_interp"):
        assert f"{row[name]:.3f} [no interval]" in first, (name, first)


@pytest.mark.parametrize("broken", ["missing", "bad line", "second score file missing", "duration map missing"])
def test_inputs_are_read_before_any_kernel_is_compiled(tmp_path: Path, broken: str) -> None:
    """A first run on a machine compiles the bootstrap's loops for half a minute: a missing file or a bad line
    deep in the score file is named before numba is even imported, and so is a missing file that is read only
    after the first score file's metrics (a second score file, the duration map), in one line with exit 2."""
    import subprocess
    import sys

    trial_path, score_path = write_case(tmp_path, "kaldi")
    extra: list[str] = []
    if broken == "missing":
        score_path = tmp_path / "absent.txt"
    elif broken == "bad line":
        score_path.write_text(score_path.read_text().replace("0.1", "high"))
    elif broken == "second score file missing":
        extra = [str(tmp_path / "absent.txt")]
    else:
        extra = ["--durations", str(tmp_path / "absent.txt")]
    probe = (
        "import sys\nfrom typer.testing import CliRunner\nfrom audit.cli import app\n"
        f"result = CliRunner().invoke(app, ['scores', {str(trial_path)!r}, {str(score_path)!r}, *{extra!r}])\n"
        "print(result.exit_code, 'numba' in sys.modules)\nprint(result.stderr.strip())"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    if broken != "bad line":
        what = "a duration map" if broken == "duration map missing" else "a score file"
        assert done.stdout.splitlines()[1] == f"{tmp_path / 'absent.txt'}: no such file (expected {what})"
    assert done.stdout.split()[:2] == ["2", "False"], done.stdout + done.stderr
