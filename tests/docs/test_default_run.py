"""What the default run shows (README and the run tutorial) is the latest output of docs/hooks/default_run.py: the
pages' generated blocks are what it renders from the committed summary, the figure is the one the summary names,
and its reading of a bundle is right on a small real run made here (the default itself takes 20 minutes)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

from tests.docs.blocks import ROOT, load_hook


def generator() -> ModuleType:
    """docs/hooks/default_run.py, loaded from its file."""
    return load_hook("default_run")


def test_the_pages_hold_what_the_script_renders_from_the_committed_summary() -> None:
    stale = generator().stale()
    assert not stale, f"stale: {stale}; run python docs/hooks/default_run.py (--from out/default) and commit"


def test_every_eer_of_the_summary_is_printed_in_its_row_and_column() -> None:
    """Read back from the README's table by hand-written parsing: each encoder column of each row holds the
    summary's values of that row's cells, in order, at three decimals."""
    module = generator()
    summary = json.loads((ROOT / "docs" / "assets" / "default-run.json").read_text(encoding="utf-8"))
    encoders = summary["used"]["encoders"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = {
        line.split(" | ")[0].removeprefix("| "): [cell.strip(" |") for cell in line.split(" | ")[1:]]
        for line in readme.splitlines()
        if line.startswith("| ") and line.count(" | ") == len(encoders)
    }
    assert table["condition (test side)"] == encoders
    for label, pattern in module.ROWS:
        tokens = re.findall(r"[A-Z]\d+\|\S+?(?=[,;]?(?: |$))", pattern)
        for column, model in enumerate(encoders):
            printed = [float(value) for value in re.findall(r"\d\.\d{3}", table[label][column])]
            assert printed == [round(summary["eer"][token][model], 3) for token in tokens], (label, model)
    assert f"run `{summary['run_id']}`" in readme


def test_a_hand_edit_or_a_stale_summary_is_caught() -> None:
    """A planted drift: one number of the README changed by hand, or a summary value changed, and the page no
    longer equals what the script renders."""
    module = generator()
    summary = module.load_summary()
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    assert module.rendered(text, summary, readme) == text
    value = summary["eer"]["D01|clean"]["ecapa-tdnn"]
    row = next(line for line in text.splitlines() if line.startswith("| clean (D01 list) |"))
    edited = text.replace(row, row.replace(f"{value:.3f}", f"{value + 0.001:.3f}", 1))
    assert edited != text and module.rendered(edited, summary, readme) == text
    summary["work"]["embeddings"] += 1
    assert module.rendered(text, summary, readme) != text
    with pytest.raises(module.BundleReadError, match="expected one block"):
        module.rendered(text.replace(module.END, ""), summary, readme)


def test_a_folder_that_is_not_a_bundle_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert generator().main(["--from", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"{tmp_path / 'results.csv'}: not found " + (
        "(is this the folder nox -s reproduce wrote?)\n"
    )


SMALL_RUN = """
[run]
name = "small-default"
seed = 5
eer_method = "rocch"
batch_size = 16

[corpus]
name = "asterisk"
root = "{corpus}"
music = "/usr/share/asterisk/moh"

[encoders]
roster = "{roster}"
labels = ["mfcc-stats"]

[analysis]
equivalence_margin = 0.05
n_resamples = 200

[conditions]
"white-0dB" = [{{ name = "white", kwargs = {{ snr_db = 0 }} }}]
"opus-8k" = [{{ name = "codec", kwargs = {{ codec = "opus", bitrate = 8000, sample_rate = 16000 }} }}]

[[experiments]]
id = "D01"
title = "noise x codec"
use = "interaction"
target_trials = 60
nontarget_trials = 60
factor_a = {{ name = "noise", levels = ["white-0dB"] }}
factor_b = {{ name = "codec", levels = ["opus-8k"] }}

[[experiments]]
id = "D03"
title = "clean enrolment vs degraded test"
use = "mismatch"
target_trials = 40
nontarget_trials = 40
enrol_conditions = ["clean"]
test_conditions = ["clean", "white-0dB"]
"""
SMALL_ROWS = (
    ("clean (D01 list)", "D01|clean"),
    ("white 0 dB, Opus; both", "D01|white-0dB, D01|opus-8k; D01|white-0dB+opus-8k"),
    ("clean, white 0 dB (D03)", "D03|clean->clean, D03|clean->white-0dB"),
)


@pytest.mark.runner  # a real run: the codecs (PyAV) and the MFCC encoder of the runner extra
@pytest.mark.slow  # a small corpus, a run of 6 records and its audit: about 30 s on a loaded machine
@pytest.mark.skipif(
    not Path("/usr/share/asterisk/sounds/en_US_f_Allison").is_dir(),
    reason="Debian's asterisk prompt packages are not installed (noxfile.py installs them as root)",
)
def test_the_summary_of_a_small_real_run_is_what_the_run_made(tmp_path: Path) -> None:
    """The oracles: the run's own account of itself (``RunSummary``: records, lists, trials, embeddings computed on
    a fresh cache), the corpus table the build returned, results.csv read row by row, the report's figure."""
    import pandas as pd

    from audit import AuditRequest, verify
    from provenance import generate_keypair
    from reports import finish_report
    from runner.corpora.asterisk import build_default_corpus
    from runner.design import load_config
    from runner.pipeline import RunOptions, run

    corpus = build_default_corpus(tmp_path / "corpus", max_per_speaker=6, progress=False)
    config = tmp_path / "run.toml"
    config.write_text(SMALL_RUN.format(corpus=tmp_path / "corpus", roster=ROOT / "configs" / "encoders.toml"))
    generate_keypair(tmp_path / "run.key", tmp_path / "run.pub")
    out = tmp_path / "out"
    options = RunOptions(cache_root=tmp_path / "cache", signing_key=tmp_path / "run.key", progress=False, workers=0)
    made = run(load_config(config), out, options)
    finish_report(verify(AuditRequest(out / "results.csv", bundle=out, key=tmp_path / "run.pub")), out / "report")

    summary = generator().summarise(out, SMALL_ROWS)

    assert summary["run_id"] == made.run_id and summary["eer_method"] == "rocch"
    frame = corpus.frame
    assert summary["corpus"] == {
        "name": "asterisk",
        "speakers": frame["speaker"].nunique(),
        "utterances": len(frame),
        "hours": round(frame["duration_s"].sum() / 3600, 2),
        "sample_rate_hz": 16000,
        "problems": len(corpus.problems),
    }
    lists = [pd.read_csv(path, dtype=str) for path in sorted((out / "trials").glob("*.csv"))]
    utterances = set().union(*(set(trials["enrol_utt"]) | set(trials["test_utt"]) for trials in lists))
    assert summary["used"] == {
        "utterances": len(utterances),
        "speakers": len(set(frame.loc[frame["utt_id"].isin(utterances), "speaker"])),
        "spoofs": 0,
        "experiments": 2,
        "trial_lists": made.n_trial_lists,
        "trials": made.n_trials,
        "records": made.n_records,
        "encoders": ["mfcc-stats"],
        "countermeasure": None,
    }
    assert made.n_records == 6 and len(utterances) <= made.n_utterances  # 4 D01 cells and 2 D03 cells, one encoder
    realisations = sum(made.operator_counts.values())
    assert summary["work"] == {
        "realisations": realisations,
        "embeddings": made.forward_passes,
        "countermeasure_scores": 0,
        "operator_failures": made.operator_counts["failed"],
        "encoder_failures": 0,
    }
    results = pd.read_csv(out / "results.csv")
    for token, values in summary["eer"].items():
        experiment, condition = token.split("|")
        row = results[(results["experiment"] == experiment) & (results["condition"] == condition)]
        assert values == {"mfcc-stats": float(row["eer"].item())}
    assert len(summary["eer"]) == 6
    heatmap = (out / "report" / "figures" / "eer_heatmap.png").read_bytes()
    assert summary["figure"] == {
        "source": "report/figures/eer_heatmap.png",
        "sha256": hashlib.sha256(heatmap).hexdigest(),
    }
