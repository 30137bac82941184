"""What an experiment draws from: its own ``select`` (both sides of every trial), an official list scored as published
(``trial_list``) and per-condition ``budgets``. Pools are small hand-made tables; the expected pairs and counts
are written out by hand, the official list is VoxCeleb1's own format."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from runner.design.config import load_config
from runner.plan import listed_trials, plan_run
from schemas.errors import InputError

ROOT = Path(__file__).resolve().parents[3]

CONFIG = """
[run]
name = "populations"
seed = 5

[corpora.vox]
adapter = "voxceleb1"
root = "{root}"

[encoders]
roster = "{roster}"
labels = ["mfcc-stats"]

[conditions]
"white-10dB" = [{{ name = "white", kwargs = {{ snr_db = 10 }} }}]

[[experiments]]
id = "E16"
title = "gender gap, test split"
use = "subgroup-gap"
subgroup = "gender"
select = {{ split = "test" }}
target_trials = 2
nontarget_trials = 1
budgets = {{ clean = [3, 4] }}
factor_a = {{ name = "noise", levels = ["white-10dB"] }}

[[experiments]]
id = "E05"
title = "official list under noise"
use = "mismatch"
trial_list = "veri_test2"
enrol_conditions = ["clean"]
test_conditions = ["clean", "white-10dB"]
"""

# Two test-split speakers per gender with three utterances each, and one dev-split speaker per gender.
SPEAKERS = {"id10270": ("F", "test"), "id10271": ("F", "test"), "id10272": ("M", "test"), "id10273": ("M", "test")}
SPEAKERS |= {"id10001": ("F", "dev"), "id10002": ("M", "dev")}
POOL = pd.DataFrame(
    [
        {"utt_id": f"{speaker}/v/0000{n}.wav", "speaker": speaker, "gender": gender, "split": split}
        for speaker, (gender, split) in SPEAKERS.items()
        for n in (1, 2, 3)
    ]
)
OFFICIAL = "1 id10270/v/00001.wav id10270/v/00002.wav\n0 id10272/v/00003.wav id10271/v/00001.wav\n"


@pytest.fixture
def config_path(tmp_path: Path) -> Path:
    (tmp_path / "vox").mkdir()
    (tmp_path / "vox" / "veri_test2.txt").write_text(OFFICIAL)
    path = tmp_path / "run.toml"
    path.write_text(CONFIG.format(root=tmp_path / "vox", roster=ROOT / "configs" / "encoders.toml"))
    return path


def test_a_population_both_sides_budgets_per_condition_and_an_official_list_as_published(config_path: Path) -> None:
    config = load_config(config_path)
    plans = plan_run(config, {"vox": POOL}, listed_trials(config, {"vox": POOL}))
    e16 = [plan for plan in plans if plan.experiment.id == "E16"]
    assert [(p.cell.condition, p.subgroup, len(p.trials.frame)) for p in e16] == [
        ("clean", "gender=F", 7),
        ("white-10dB", "gender=F", 3),
        ("clean", "gender=M", 7),
        ("white-10dB", "gender=M", 3),
    ]
    for plan in e16:
        frame = plan.trials.frame
        speakers = set(frame["enrol_speaker"]) | set(frame["test_speaker"])
        assert speakers <= {"id10270", "id10271", "id10272", "id10273"}  # never a dev-split speaker
        assert (frame["label"] == 1).sum() == (3 if plan.cell.condition == "clean" else 2)
    e05 = [plan for plan in plans if plan.experiment.id == "E05"]
    assert [plan.cell.condition for plan in e05] == ["clean->clean", "clean->white-10dB"]
    assert e05[0].trials is e05[1].trials  # one list, scored under each condition
    assert e05[0].trials.frame[["enrol_utt", "test_utt", "label", "enrol_speaker", "test_speaker"]].values.tolist() == [
        ["id10270/v/00001.wav", "id10270/v/00002.wav", 1, "id10270", "id10270"],
        ["id10272/v/00003.wav", "id10271/v/00001.wav", 0, "id10272", "id10271"],
    ]
    assert (e05[0].experiment.target_trials, e05[0].experiment.nontarget_trials) == (18_802, 18_809)  # published


def test_an_official_list_naming_an_utterance_the_corpus_lacks_is_one_line(config_path: Path) -> None:
    config = load_config(config_path)
    with pytest.raises(InputError) as caught:
        listed_trials(config, {"vox": POOL[POOL["utt_id"] != "id10271/v/00001.wav"]})
    assert "experiments E05: VoxCeleb1-O (cleaned) names 1 utterance(s) the corpus table lacks" in caught.value.line()
    assert "(first: id10271/v/00001.wav)" in caught.value.line()


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda s: s.replace('trial_list = "veri_test2"', 'trial_list = "vox1-O"'), "trial_list: expected one of"),
        (
            lambda s: s.replace('trial_list = "veri_test2"', 'trial_list = "veri_test2"\ntarget_trials = 5'),
            "experiments[1].target_trials: VoxCeleb1-O (cleaned) (trial_list) fixes the trials",
        ),
        (
            lambda s: s.replace('adapter = "voxceleb1"', 'adapter = "ravdess"'),
            "trial_list: official lists are VoxCeleb1's; corpus 'vox' is ravdess",
        ),
        (
            lambda s: s.replace("[conditions]\n", '[conditions]\nfemale = { select = { gender = "F" } }\n').replace(
                'test_conditions = ["clean", "white-10dB"]', 'test_conditions = ["clean", "female"]'
            ),
            "condition 'clean->female' selects utterances: a listed experiment's pairs are fixed",
        ),
        (lambda s: s.replace("clean = [3, 4]", "quiet = [3, 4]"), "budgets: no cell of E16 is named 'quiet'"),
        (lambda s: s.replace("clean = [3, 4]", "clean = [3]"), "budgets.clean: expected [target trials, non-target"),
        (lambda s: s.replace("clean = [3, 4]", "clean = [0, 4]"), "budgets.clean: expected [target trials"),
        (lambda s: s.replace('split = "test"', 'shelf = "test"'), "experiments[0].select.shelf: not a selectable"),
    ],
)
def test_bad_populations_name_the_key(config_path: Path, edit: object, expected: str) -> None:
    path = config_path.parent / "edited.toml"
    path.write_text(edit(config_path.read_text()))  # type: ignore[operator]
    with pytest.raises(InputError) as caught:
        load_config(path)
    assert expected in caught.value.line()
