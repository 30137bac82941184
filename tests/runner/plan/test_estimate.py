"""`interbias plan`: what a configuration will cost, checked against counts worked out by hand on a small
configuration (declared sizes), against the run's own trial lists (corpora read), and on configs/full.toml
without any corpus present."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from runner.cli import app
from runner.design.config import load_config
from runner.operators import chain_id
from runner.plan import CorpusSize, estimate_plan, load_corpus_sizes, plan_run
from schemas.errors import InputError

ROOT = Path(__file__).resolve().parents[3]

CONFIG = """
[run]
name = "plan"
seed = 5

[corpora.main]
adapter = "ravdess"
root = "{root}/main"

[corpora.fakes]
adapter = "spoof"
root = "{root}/fakes"

[encoders]
roster = "{roster}"
labels = ["resemblyzer", "mfcc-stats"]

[conditions]
"white-10dB" = [{{ name = "white", kwargs = {{ snr_db = 10 }} }}]
"pink-10dB" = [{{ name = "pink", kwargs = {{ snr_db = 10 }} }}]
"spoofed" = {{ spoofs = "fakes" }}

[[experiments]]
id = "D01"
corpus = "main"
title = "noise, test side"
use = "interaction"
target_trials = 10
nontarget_trials = 20
factor_a = {{ name = "noise", levels = ["white-10dB", "pink-10dB"] }}

[[experiments]]
id = "D02"
corpus = "main"
title = "gender gap, both sides"
use = "subgroup-gap"
subgroup = "gender"
degrade = "both"
target_trials = 5
nontarget_trials = 5
factor_a = {{ name = "noise", levels = ["white-10dB"] }}

[[experiments]]
id = "D03"
corpus = "main"
title = "spoofs"
use = "interaction"
target_trials = 4
nontarget_trials = 6
factor_a = {{ name = "spoof", levels = ["spoofed"] }}
"""

SIZES = """
[main]
utterances = 100
speakers = 10
mean_duration_s = 2.0
subgroups = { gender = 2 }
source = "a test"

[spoof]
utterances = 20
speakers = 5
mean_duration_s = 3.0
source = "a test"
"""


@pytest.fixture
def config_path(tmp_path: Path) -> Path:
    path = tmp_path / "run.toml"
    path.write_text(CONFIG.format(root=tmp_path, roster=ROOT / "configs" / "encoders.toml"))
    (tmp_path / "corpus_sizes.toml").write_text(SIZES)
    return path


@pytest.mark.slow
def test_declared_counts_equal_the_hand_computed_ones(config_path: Path) -> None:
    config = load_config(config_path)
    estimate = estimate_plan(config, load_corpus_sizes(config_path.parent / "corpus_sizes.toml"))
    x1, x2, x3 = (estimate.experiments[name] for name in ("D01", "D02", "D03"))
    # D01: cells none/white/pink share one list of 30 trials; 3 cells x 2 labels = 6 records. Sides: clean enrol
    # (<= 30) and clean test (<= 30) under one chain, white test <= 30, pink test <= 30.
    assert (x1.utterances, x1.trial_lists, x1.trials, x1.records) == (100, 1, 30, 6)
    assert (x1.embeddings_per_label, x1.operator_realisations) == (60 + 30 + 30, 60)
    # D02: 2 gender subgroups x 1 list of 10 trials; 2 subgroups x 2 cells x 2 labels = 8 records; both sides
    # degraded: per subgroup clean 10 + 10, white 10 + 10.
    assert (x2.trial_lists, x2.trials, x2.records) == (2, 20, 8)
    assert (x2.embeddings_per_label, x2.operator_realisations) == (80, 40)
    # D03: the genuine list and the spoof list (same 4 targets, 6 spoofs instead of non-targets): 2 x 10 trials,
    # 2 cells x 2 labels. Clean sides in main: 10 + 10 (genuine list) + 10 enrol + 4 targets; in fakes: 6.
    assert (x3.utterances, x3.trial_lists, x3.trials, x3.records) == (120, 2, 20, 4)
    assert (x3.embeddings_per_label, x3.operator_realisations) == (34 + 6, 0)
    total = estimate.total
    # Over the run, sides are shared: clean main 60 + 40 + 34 = 134 capped by the pool of 100, white 30 + 40,
    # pink 30, clean fakes 6.
    assert (total.utterances, total.trial_lists, total.trials, total.records) == (120, 5, 70, 18)
    assert (total.embeddings_per_label, total.operator_realisations) == (100 + 70 + 30 + 6, 100)
    assert total.audio_seconds_per_label == pytest.approx((100 + 70 + 30) * 2.0 + 6 * 3.0)
    assert total.score_bytes == sum(t.score_bytes for t in estimate.experiments.values()) > 0
    labels = estimate.labels
    assert labels["resemblyzer"]["dim"] == 256 and labels["mfcc-stats"]["dim"] == 38
    assert labels["resemblyzer"]["cache_bytes"] > labels["mfcc-stats"]["cache_bytes"] > 206 * 38 * 4
    assert labels["resemblyzer"]["hours"] is None  # no throughput given: no figure invented


def test_the_per_speaker_cap_bounds_the_pool(config_path: Path) -> None:
    size = CorpusSize(utterances=100, speakers=10, mean_duration_s=2.0, subgroups={}, source="x")
    assert size.pool(None) == 100 and size.pool(4) == 40 and size.pool(50) == 100


def tables() -> dict[str, pd.DataFrame]:
    """A main corpus of 10 speakers x 10 utterances (5 F, 5 M) and 20 spoofs imitating 5 of them."""

    def table(prefix: str, speakers: list[str], per_speaker: int, seconds: float) -> pd.DataFrame:
        rows = [
            {
                "utt_id": f"{prefix}{speaker}-{i}",
                "speaker": speaker,
                "path": f"{speaker}/{i}.wav",
                "duration_s": seconds + 0.1 * i,
                "sample_rate": 16000,
                "blake3": f"{n:064x}",
                "gender": "F" if int(speaker[1:]) % 2 else "M",
            }
            for n, (speaker, i) in enumerate((s, i) for s in speakers for i in range(per_speaker))
        ]
        return pd.DataFrame(rows)

    speakers = [f"s{n}" for n in range(10)]
    return {"main": table("", speakers, 10, 2.0), "fakes": table("fake-", speakers[:5], 4, 3.0)}


def test_reading_the_corpora_gives_the_runs_own_counts_within_the_declared_bounds(config_path: Path) -> None:
    config = load_config(config_path)
    read = tables()
    exact = estimate_plan(config, tables=read)
    declared = estimate_plan(config, load_corpus_sizes(config_path.parent / "corpus_sizes.toml"))
    # The sides the run embeds, straight from its record plans (as the pipeline collects them).
    plans = plan_run(config, read)
    sides = {s for p in plans for s in p.enrol_sides() + p.test_sides()}
    clean = chain_id([])
    assert exact.total.embeddings_per_label == len(sides)
    assert exact.total.operator_realisations == sum(s.chain_id != clean for s in sides)
    durations = {(name, row.utt_id): row.duration_s for name, t in read.items() for row in t.itertuples()}
    assert exact.total.audio_seconds_per_label == pytest.approx(sum(durations[(s.corpus, s.utt_id)] for s in sides))
    assert exact.total.records == len(plans) == declared.total.records
    assert exact.total.trials == declared.total.trials and exact.total.trial_lists == declared.total.trial_lists
    for name in ("D01", "D02", "D03"):
        assert exact.experiments[name].embeddings_per_label <= declared.experiments[name].embeddings_per_label
    assert exact.total.embeddings_per_label <= declared.total.embeddings_per_label


def test_bad_sizes_are_one_line(tmp_path: Path, config_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[main]\nutterances = -3\nspeakers = 2\nmean_duration_s = 1.0\nsource = "x"\n')
    with pytest.raises(InputError, match=r"column 'main.utterances': expected a positive number, got -3"):
        load_corpus_sizes(bad)
    bad.write_text('[main]\nutterances = 3\nspeakers = 2\nmean_duration_s = 1.0\nsource = "x"\nhours = 2\n')
    with pytest.raises(InputError, match="unknown keys"):
        load_corpus_sizes(bad)
    bad.write_text(SIZES.replace("subgroups = { gender = 2 }", ""))
    with pytest.raises(InputError, match="no number of 'gender' subgroups"):
        estimate_plan(load_config(config_path), load_corpus_sizes(bad))
    with pytest.raises(InputError, match="no declared size for corpus 'fakes'"):
        estimate_plan(load_config(config_path), {})


def test_full_registry_plan_runs_without_the_corpora(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("INTERBIAS_CORPORA", raising=False)
    monkeypatch.delenv("INTERBIAS_CHECKPOINTS", raising=False)
    throughput = tmp_path / "speeds.json"
    rows = [{"label": "ecapa-tdnn", "batched_utt_per_s": 4.0, "audio_seconds": 60.0, "utterances": 24}]
    machine = {"device": "cpu", "dtype": "fp32", "machine": "test", "date": "2026-12-01"}
    throughput.write_text(json.dumps({**machine, "encoders": rows}))
    done = CliRunner().invoke(
        app, ["plan", str(ROOT / "configs" / "full.toml"), "--json", "--throughput", str(throughput)]
    )
    assert done.exit_code == 0, done.output
    plan = json.loads(done.stdout)
    assert plan["corpora"]["voxceleb1"]["utterances"] == 153516 and plan["corpora"]["voxceleb1"]["speakers"] == 1251
    assert plan["corpora"]["voxceleb1"]["pool"] == 1251 * 60  # utterances_per_speaker = 60
    assert sorted(plan["experiments"]) == sorted(load_config_ids())
    assert plan["total"]["records"] == sum(e["records"] for e in plan["experiments"].values())
    ecapa = plan["labels"]["ecapa-tdnn"]
    assert ecapa["audio_seconds_per_second"] == pytest.approx(10.0)  # 4 utt/s x 2.5 s
    assert ecapa["hours"] == pytest.approx(plan["total"]["audio_seconds_per_label"] / 10.0 / 3600)
    assert plan["labels"]["wavlm-large"]["hours"] is None
    totals = plan["label_totals"]
    assert totals["labels"] == 12 and totals["labels_without_throughput"] == [
        label for label in plan["labels"] if label != "ecapa-tdnn"
    ]
    assert totals["audio_label_hours"] == pytest.approx(12 * plan["total"]["audio_seconds_per_label"] / 3600)
    assert totals["cache_bytes"] == sum(row["cache_bytes"] for row in plan["labels"].values())
    # the reconciliation with the paper, by hand: E16 is 12 labels x 2 genders x (5,000 clean + 9 x 555 noisy)
    # trials, the paper's own figure; E05 scores VoxCeleb1-O (cleaned), 37,611 trials, in 10 conditions x 12 labels
    reconciliation = plan["reconciliation"]
    e16, e05 = reconciliation["experiments"]["E16"], reconciliation["experiments"]["E05"]
    assert (e16["records"], e16["evaluations"]) == (e16["paper_records"], e16["paper_evaluations"]) == (240, 239_880)
    assert (e05["evaluations"], e05["paper_evaluations"]) == (12 * 10 * 37_611, None)
    total = reconciliation["total"]
    assert (total["paper_records"], total["paper_evaluations"]) == (4068, 11_975_026)
    assert total["records"] == plan["total"]["records"] and total["evaluations"] == plan["total"]["evaluations"]
    assert total["evaluations"] == sum(e["evaluations"] for e in plan["experiments"].values())
    assert all(row["reason"] != "no reason declared" for row in reconciliation["experiments"].values())
    text = CliRunner().invoke(app, ["plan", str(ROOT / "configs" / "full.toml")])
    assert text.exit_code == 0 and "declared sizes" in text.stdout and "total" in text.stdout
    assert "all 12 labels: <=" in text.stdout and "reconciliation with the paper" in text.stdout
    bad = tmp_path / "counts.toml"
    bad.write_text('[total]\nrecords = 4068\nevaluations = -1\nsource = "s"\n')
    refused = CliRunner().invoke(app, ["plan", str(ROOT / "configs" / "full.toml"), "--paper", str(bad)])
    assert refused.exit_code == 2 and "total.evaluations" in refused.output and refused.output.count("\n") == 1


def load_config_ids() -> list[str]:
    import tomllib

    return [e["id"] for e in tomllib.loads((ROOT / "configs" / "full.toml").read_text())["experiments"]]


SLICE = """
[run]
name = "slice"
seed = 11

[corpus]
name = "asterisk"
root = "{root}"

[encoders]
roster = "{roster}"
labels = ["resemblyzer", "mfcc-stats"]

[conditions]
"white-0dB" = [{{ name = "white", kwargs = {{ snr_db = 0 }} }}]

[[experiments]]
id = "D01"
title = "noise"
use = "interaction"
target_trials = 20
nontarget_trials = 20
factor_a = {{ name = "noise", levels = ["white-0dB"] }}
"""


@pytest.mark.slow
@pytest.mark.skipif(
    not Path("/usr/share/asterisk/sounds/en_US_f_Allison").is_dir(),
    reason="Debian's asterisk prompt packages are not installed (noxfile.py installs them as root)",
)
def test_plan_with_corpora_reads_them_and_counts_the_runs_sides(tmp_path: Path) -> None:
    from runner.corpora.asterisk import build_default_corpus

    root = tmp_path / "asterisk"
    table = build_default_corpus(root, max_per_speaker=6, progress=False).frame
    path = tmp_path / "run.toml"
    path.write_text(SLICE.format(root=root, roster=ROOT / "configs" / "encoders.toml"))
    done = CliRunner().invoke(app, ["plan", str(path), "--corpora", "--json"])
    assert done.exit_code == 0, done.output
    plan = json.loads(done.stdout)
    assert plan["mode"] == "corpora read" and plan["corpora"]["asterisk"]["utterances"] == len(table)
    plans = plan_run(load_config(path), {"asterisk": table})
    sides = {s for p in plans for s in p.enrol_sides() + p.test_sides()}
    assert (plan["total"]["records"], plan["total"]["trials"]) == (len(plans), 40)
    assert plan["total"]["embeddings_per_label"] == len(sides)
    assert plan["total"]["operator_realisations"] == sum(s.chain_id != chain_id([]) for s in sides)


def _bundle_with_timings(folder: Path, encoders: object) -> Path:
    folder.mkdir(parents=True)
    timings = {"run_id": "0123456789abcdef", "device": "cpu", "executor": "local", "encoders": encoders}
    (folder / "timings.json").write_text(json.dumps(timings))
    return folder


def test_plan_takes_the_throughput_a_bundle_measured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("INTERBIAS_CORPORA", raising=False)
    monkeypatch.delenv("INTERBIAS_CHECKPOINTS", raising=False)
    bundle = _bundle_with_timings(
        tmp_path / "bundle",
        {
            "ecapa-tdnn": {"sides": 40, "audio_s": 120.0, "wall_s": 40.0, "cpu_s": 70.0},  # 3 audio s per s
            "campplus": {"sides": 0, "audio_s": 0.0, "wall_s": 0.0, "cpu_s": 0.0},  # all cached: no figure
        },
    )
    done = CliRunner().invoke(
        app, ["plan", str(ROOT / "configs" / "full.toml"), "--json", "--throughput-from", str(bundle)]
    )
    assert done.exit_code == 0, done.output
    plan = json.loads(done.stdout)
    ecapa = plan["labels"]["ecapa-tdnn"]
    assert ecapa["audio_seconds_per_second"] == pytest.approx(3.0)
    assert ecapa["hours"] == pytest.approx(plan["total"]["audio_seconds_per_label"] / 3.0 / 3600)
    assert ecapa["throughput_source"] == "bundle/timings.json: run 0123456789abcdef, device cpu, local"
    assert plan["labels"]["campplus"]["hours"] is None and plan["labels"]["wavlm-large"]["hours"] is None


@pytest.mark.parametrize(
    ("encoders", "problem"),
    [
        ([], "expected an object 'encoders'"),
        ({"ecapa-tdnn": {"audio_s": -1, "wall_s": 2}}, "encoders.ecapa-tdnn.audio_s: expected a number >= 0"),
        ({"ecapa-tdnn": {"audio_s": 1, "wall_s": True}}, "encoders.ecapa-tdnn.wall_s: expected a number >= 0"),
        ({"ecapa-tdnn": "fast"}, "encoders.ecapa-tdnn.audio_s: expected a number >= 0"),
    ],
)
def test_a_bad_or_absent_timings_file_is_one_line(tmp_path: Path, encoders: object, problem: str) -> None:
    full = str(ROOT / "configs" / "full.toml")
    bundle = _bundle_with_timings(tmp_path / "bundle", encoders)
    done = CliRunner().invoke(app, ["plan", full, "--throughput-from", str(bundle)])
    assert done.exit_code == 2 and problem in done.stderr and "Traceback" not in done.output
    (bundle / "timings.json").unlink()
    absent = CliRunner().invoke(app, ["plan", full, "--throughput-from", str(bundle)])
    assert absent.exit_code == 2 and "timings.json: missing" in absent.stderr
    both = CliRunner().invoke(app, ["plan", full, "--throughput-from", str(bundle), "--throughput", full])
    assert both.exit_code == 2 and "not both" in both.stderr
