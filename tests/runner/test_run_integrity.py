"""Runner integrity on a small real run (real asterisk speech and music, the MFCC-statistics encoder).

Oracles: the results of a clean cold run (a damaged cache, changed material or a resume must give the same bytes,
or different ones exactly when an input changed), counts of damaged entries made by hand, and encoder call counts.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from runner.config import load_config
from runner.corpora.asterisk import build_default_corpus
from runner.pipeline import RunSummary, run
from tests.runner.test_cache import damage
from tests.runner.test_pipeline import CountingEncoder, counting_factory

ROOT = Path(__file__).resolve().parents[2]
MUSIC = Path("/usr/share/asterisk/moh")

CONFIG = """
[run]
name = "integrity"
seed = 5
batch_size = 16

[corpus]
name = "asterisk"
root = "{corpus}"
music = "{music}"

[encoders]
roster = "{roster}"
labels = ["mfcc-stats"]

[conditions]
"white-0dB" = [{{ name = "white", kwargs = {{ snr_db = 0 }} }}]
"music-5dB" = [{{ name = "music", kwargs = {{ snr_db = 5 }} }}]

[[experiments]]
id = "D01"
title = "noise"
use = "descriptive"
target_trials = 24
nontarget_trials = 24
factor_a = {{ name = "noise", levels = ["white-0dB", "music-5dB"] }}
"""


def write_config(folder: Path, corpus: Path, music: Path = MUSIC) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "run.toml"
    path.write_text(CONFIG.format(corpus=corpus, music=music, roster=ROOT / "configs" / "encoders.toml"))
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    build_default_corpus(folder, max_per_speaker=4, progress=False)
    return folder


def small_run(config: Path, out: Path, cache: Path, made: list[CountingEncoder] | None = None) -> RunSummary:
    factory = counting_factory(made if made is not None else [])
    return run(load_config(config), out, cache_root=cache, progress=False, workers=0, encoder_factory=factory)


@pytest.fixture(scope="module")
def cold(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunSummary]:
    folder = tmp_path_factory.mktemp("cold")
    summary = small_run(write_config(folder, corpus), folder / "out", folder / "cache")
    return folder, summary


def copy_cache(cold: tuple[Path, RunSummary], tmp_path: Path) -> Path:
    shutil.copytree(cold[0] / "cache", tmp_path / "cache")
    return tmp_path / "cache"


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "embeddings").rglob("*.emb"))


def test_a_damaged_cache_is_recomputed_counted_and_gives_the_same_results(
    cold: tuple[Path, RunSummary], tmp_path: Path
) -> None:
    folder, first = cold
    assert first.cache_rejected == 0 and first.forward_passes > 0
    cache = copy_cache(cold, tmp_path)
    files = entries(cache)
    kinds = ["swapped", "truncated", "empty", "garbage", "nan-unsigned", "nan-signed"]
    for index, kind in enumerate(kinds):  # "swapped" damages two files: each holds the other's entry
        damage(kind, files[2 * index], files[2 * index + 1])
    made: list[CountingEncoder] = []
    summary = small_run(folder / "run.toml", tmp_path / "out", cache, made)
    assert summary.cache_rejected == len(kinds) + 1
    assert made[0].embedded == len(kinds) + 1  # exactly the rejected entries were embedded again
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert record["cache_rejected"]["total"] == len(kinds) + 1
    assert (tmp_path / "out" / "results.csv").read_bytes() == (folder / "out" / "results.csv").read_bytes()
    again = small_run(folder / "run.toml", tmp_path / "out", cache)  # the recomputed entries verify now
    assert again.cache_rejected == 0 and again.forward_passes == 0


def test_changed_music_is_never_served_from_the_cache(
    cold: tuple[Path, RunSummary], corpus: Path, tmp_path: Path
) -> None:
    folder = cold[0]
    cache = copy_cache(cold, tmp_path)
    music = tmp_path / "moh"
    shutil.copytree(MUSIC, music)
    config = write_config(tmp_path / "same", corpus, music)
    same = small_run(config, tmp_path / "same" / "out", cache)
    assert same.forward_passes == 0  # the same music in another folder: the same key
    victim = sorted(p for p in music.iterdir() if p.is_file())[0]
    os.replace(sorted(p for p in music.iterdir() if p.is_file())[-1], victim)  # one file replaced by another
    made: list[CountingEncoder] = []
    changed = small_run(write_config(tmp_path / "changed", corpus, music), tmp_path / "changed" / "out", cache, made)
    music_sides = json.loads((folder / "out" / "operators.json").read_text())["chains"]
    expected = sum(c["applied"] + c["failed"] + c["fallback"] for c in music_sides.values() if "music" in str(c))
    assert made[0].embedded == expected > 0  # every music side, and only those, was recomputed
    assert changed.cache_rejected == 0
