"""Run configurations: the default one loads, and each kind of bad configuration is one InputError naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.design import check_dev_speakers, load_config
from runner.design.experiments import REFERENCE_LEVEL
from schemas.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
DEFAULT = ROOT / "configs" / "default.toml"


def test_default_config_loads_with_its_designs() -> None:
    config = load_config(DEFAULT)
    assert [e.id for e in config.experiments] == ["D01", "D02", "D03", "D04", "D05"]
    assert config.countermeasure is not None and config.countermeasure.spec.label == "aasist"
    assert config.countermeasure.experiments == ("D05",)  # the one experiment with a spoof cell
    assert [choice.adapter for choice in config.corpora.values()] == ["asterisk", "world_proxy"]
    assert [e.label for e in config.encoders] == ["ecapa-tdnn", "campplus-zh-en", "resemblyzer", "mfcc-stats"]
    assert config.encoders[0].weights is not None and config.encoders[1].weights is not None
    noise_x_codec = config.experiments[0]
    cells = noise_x_codec.cells(config.conditions)
    # (1 reference + 3 noise levels) x (1 reference + 2 codecs) = 12 cells, the reference first.
    assert len(cells) == 12
    assert (cells[0].condition, cells[0].level_a, cells[0].level_b) == (
        "clean",
        REFERENCE_LEVEL,
        REFERENCE_LEVEL,
    )
    compound = next(c for c in cells if c.level_a == "pink-0dB" and c.level_b == "opus-8k")
    assert compound.condition == "pink-0dB+opus-8k"
    assert [spec["name"] for spec in compound.test_chain] == ["pink", "codec"]
    assert compound.enrol_chain == () and compound.enrol_condition == "clean"
    mismatch = config.experiments[2].cells(config.conditions)
    assert [c.condition for c in mismatch][:2] == ["clean->clean", "clean->telephony-mulaw"]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda s: s.replace("seed = 20261130", 'seed = "x"'), "run.seed: expected an integer"),
        (
            lambda s: s.replace('eer_method = "rocch"', 'eer_method = "best"'),
            "run.eer_method: expected one of",
        ),
        (lambda s: s.replace('"opus-8k", "amrnb-12k2"]', '"opus-9k"]'), "unknown condition 'opus-9k'"),
        (lambda s: s.replace('name = "pink", kwargs = { snr_db = 0 }', 'name = "brown"'), "pink-0dB[0]"),
        (lambda s: s.replace("bitrate = 12200", "bitrate = 12000"), "amrnb-12k2[0]"),
        (
            lambda s: s.replace('"resemblyzer", "mfcc-stats"]', '"ecapa"]'),
            "encoders.labels: unknown encoder label 'ecapa'; did you mean 'ecapa-tdnn'?",
        ),
        (lambda s: s.replace('id = "D02"', 'id = "D01"'), "unique ids"),
        (lambda s: s.replace('id = "D02"', 'id = "Z02"'), "E01..E21"),
        (lambda s: s.replace("target_trials = 200", "target_trials = -1"), "expected an integer > 0"),
        (lambda s: s + "\n[broken\n", "not valid TOML"),
        *(
            (
                lambda s, v=value: s.replace("p_target = 0.01", f"p_target = {v}"),
                f"run.p_target: expected a finite {why}",
            )
            for value, why in [
                ("1.5", "number > 0 and < 1, got 1.5"),
                ("1", "number > 0 and < 1, got 1.0"),
                ("0", "number > 0 and < 1, got 0.0"),
                ("nan", "number > 0 and < 1, got nan"),
                ("-0.01", "number > 0 and < 1, got -0.01"),
            ]
        ),
        (lambda s: s.replace("c_miss = 1.0", "c_miss = inf"), "run.c_miss: expected a finite number > 0, got inf"),
        (lambda s: s.replace("c_miss = 1.0", "c_miss = 0"), "run.c_miss: expected a finite number > 0, got 0.0"),
        (lambda s: s.replace("n_resamples = 1000", "n_resamples = 1e8"), "analysis.n_resamples: expected an integer"),
        (lambda s: s.replace("n_resamples = 1000", "n_resample = 100"), "analysis.n_resample: unknown key"),
        (
            lambda s: s.replace('"pink-0dB", "loss-bursty-10"]', '"pink-0dB", "pink-5dB"]'),
            "analysis.held_out_levels: 1 name is no factor level of the experiments: pink-5dB",
        ),
        (
            lambda s: s.replace('fit_on = "dev" }', 'fit_on = "eval" }'),
            'analysis.calibration: fit_on: expected one of "dev"',
        ),
        (
            lambda s: s.replace('label = "aasist"', 'label = "aasis"'),
            "countermeasure.label: unknown countermeasure 'aasis'; did you mean 'aasist'?",
        ),
        (
            lambda s: s.replace('front_end = "first-nb_samp-repeated"', 'front_end = "x"'),
            "countermeasure.front_end: expected one of first-nb_samp-repeated, got 'x'",
        ),
        (
            lambda s: s.replace(
                'front_end = "first-nb_samp-repeated"', 'front_end = "first-nb_samp-repeated"\nexperiments = ["D09"]'
            ),
            "countermeasure.experiments: unknown experiment(s) D09",
        ),
    ],
)
def test_bad_configs_name_the_problem(tmp_path: Path, edit: object, expected: str) -> None:
    path = tmp_path / "default.toml"
    path.write_text(edit(DEFAULT.read_text()))  # type: ignore[operator]
    (tmp_path / "encoders.toml").write_bytes((ROOT / "configs" / "encoders.toml").read_bytes())
    with pytest.raises(InputError) as caught:
        load_config(path)
    assert expected in caught.value.line()
    assert str(path) in caught.value.line()


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda s: s.replace("utterances_per_speaker = 12", "utterances_per_speker = 12"),
            "corpora.asterisk.utterances_per_speker: unknown key in [corpora.asterisk]; "
            "did you mean 'utterances_per_speaker'?",
        ),
        (
            lambda s: s.replace("[analysis]", "[analysys]"),
            "analysys: unknown table in the top level; did you mean 'analysis'?",
        ),
        (
            lambda s: s.replace("equivalence_margin = 0.02", "equivalance_margin = 0.02"),
            "analysis.equivalance_margin: unknown key in [analysis]; did you mean 'equivalence_margin'?",
        ),
        (
            lambda s: s.replace('eer_method = "rocch"', 'eer_methd = "rocch"'),
            "run.eer_methd: unknown key in [run]; did you mean 'eer_method'?",
        ),
        (
            lambda s: s.replace('subgroup_side = "enrol"', 'subgroup_sde = "enrol"'),
            "experiments[3].subgroup_sde: unknown key in [experiments[3]]; did you mean 'subgroup_side'?",
        ),
        (
            lambda s: s.replace('name = "noise", levels', 'nmae = "noise", levels', 1),
            "experiments[0].factor_a.nmae: unknown key in [experiments[0].factor_a]; did you mean 'name'?",
        ),
        (
            lambda s: s.replace('labels = ["ecapa-tdnn"', 'lables = ["ecapa-tdnn"'),
            "encoders.lables: unknown key in [encoders]; did you mean 'labels'?",
        ),
        (lambda s: s + "\n[zzz]\nq = 1\n", "zzz: unknown table in the top level; valid keys: run, corpus"),
        (
            lambda s: s.replace('music = "/usr/share/asterisk/moh"', 'music = "no-such-music"'),
            "corpora.asterisk.music: folder not found: ",
        ),
    ],
)
def test_typos_are_one_line_naming_key_table_and_closest_key(tmp_path: Path, edit: object, expected: str) -> None:
    path = tmp_path / "default.toml"
    path.write_text(edit(DEFAULT.read_text()))  # type: ignore[operator]
    (tmp_path / "encoders.toml").write_bytes((ROOT / "configs" / "encoders.toml").read_bytes())
    with pytest.raises(InputError) as caught:
        load_config(path)
    line = caught.value.line()
    assert line == f"{path}: {expected}" or line.startswith(f"{path}: {expected}"), line
    assert "\n" not in line


def test_every_shipped_config_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INTERBIAS_CORPORA", str(tmp_path / "corpora"))  # named, not read, at load
    monkeypatch.setenv("INTERBIAS_CHECKPOINTS", str(tmp_path / "checkpoints"))
    for path in sorted((ROOT / "configs").glob("*.toml")):
        # the roster, the declared corpus sizes and the paper's published counts are not run configurations
        if path.name not in ("encoders.toml", "corpus_sizes.toml", "paper_counts.toml"):
            assert load_config(path).experiments, path


def test_development_speakers_that_no_corpus_has_are_refused_before_any_work() -> None:
    config = load_config(DEFAULT)
    check_dev_speakers(config, {"june-wallack", "ivrvoice-ru", "other"})  # declared ones present: no error
    with pytest.raises(InputError) as caught:
        check_dev_speakers(config, {"june-wallack", "other"})
    assert caught.value.line() == (
        f"{DEFAULT}: analysis.dev_speakers: 1 name is no speaker of the selected corpora: ivrvoice-ru"
    )


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load_config(tmp_path / "absent.toml")


def test_the_default_reads_checkpoints_where_interbias_checkpoints_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """INTERBIAS_CHECKPOINTS, as the docs export it, is where the default and its kin read checkpoints; unset,
    the cache's checkpoints folder (where `interbias checkpoints install` puts them), and it stays unset for a
    configuration read later (full.toml's placeholder roots rely on that)."""
    import os

    monkeypatch.setenv("INTERBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("INTERBIAS_CHECKPOINTS", str(tmp_path / "elsewhere"))
    named = {spec.label: spec.checkpoint for spec in load_config(DEFAULT).encoders}
    assert named["ecapa-tdnn"] == tmp_path / "elsewhere" / "speechbrain" / "spkrec-ecapa-voxceleb"
    monkeypatch.delenv("INTERBIAS_CHECKPOINTS")
    cached = {spec.label: spec.checkpoint for spec in load_config(DEFAULT).encoders}
    assert cached["ecapa-tdnn"] == tmp_path / "cache" / "checkpoints" / "speechbrain" / "spkrec-ecapa-voxceleb"
    assert "INTERBIAS_CHECKPOINTS" not in os.environ


def test_placeholder_roots_are_unset_again_after_the_configuration_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan from declared sizes names its roots by placeholders; the rest of the process (a run, a test) must not
    find them set afterwards: the checkpoints root would then point at the placeholder."""
    import os

    from runner.design import ROOT_VARIABLES, placeholder_roots

    monkeypatch.delenv("INTERBIAS_CORPORA", raising=False)
    monkeypatch.setenv("INTERBIAS_CHECKPOINTS", "/data/checkpoints")
    with placeholder_roots("/nonexistent/plan"):
        assert os.environ["INTERBIAS_CORPORA"] == "/nonexistent/plan"
        assert os.environ["INTERBIAS_CHECKPOINTS"] == "/data/checkpoints"  # a set one is kept
    assert "INTERBIAS_CORPORA" not in os.environ and os.environ["INTERBIAS_CHECKPOINTS"] == "/data/checkpoints"
    assert ROOT_VARIABLES == ("INTERBIAS_CORPORA", "INTERBIAS_CHECKPOINTS")


@pytest.mark.parametrize(
    ("old", "new"), [("runner.config", "runner.design.config"), ("runner.designs", "runner.design.experiments")]
)
def test_the_old_import_paths_still_import_the_same_names_with_a_warning(old: str, new: str) -> None:
    """Users' scripts that import the runner's pre-wing paths keep working for one release (re-exports, not copies)."""
    import importlib
    import sys

    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
        deprecated = importlib.import_module(old)
    current = importlib.import_module(new)
    assert deprecated.__all__ == current.__all__
    assert all(getattr(deprecated, name) is getattr(current, name) for name in current.__all__)
