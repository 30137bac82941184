"""`audit scores --by-model` (issue 41): one score file with a model column gives, number for number, what the same
scores split into one file per model give; a file that does not give every model the same trials once is one line
and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit.scores import read_model_scores
from tests.audit.scores.test_comparison import invoke, voxceleb_files

# Four VoxCeleb-style trials of two speakers; "blunt" ranks one non-target above a target.
TINY_TRIALS = [
    ("1", "id10001/a/1.wav", "id10001/b/1.wav"),
    ("0", "id10001/a/1.wav", "id10002/c/1.wav"),
    ("1", "id10002/c/1.wav", "id10002/d/1.wav"),
    ("0", "id10002/c/1.wav", "id10001/b/1.wav"),
]
TINY_SCORES = {"sharp": (0.9, 0.1, 0.8, 0.2), "blunt": (0.8, 0.4, 0.35, 0.1)}


def tiny_files(folder: Path) -> tuple[Path, Path]:
    """The tiny trial list and its model-column file (``<model> <enrol> <test> <score>``, the models interleaved)."""
    (folder / "trials.txt").write_text("".join(f"{k} {e} {t}\n" for k, e, t in TINY_TRIALS))
    lines = [
        f"{model} {e} {t} {scores[i]}\n"
        for i, (_, e, t) in enumerate(TINY_TRIALS)
        for model, scores in TINY_SCORES.items()
    ]
    (folder / "models.txt").write_text("".join(lines))
    return folder / "trials.txt", folder / "models.txt"


def test_a_model_column_gives_what_one_file_per_model_gives(tmp_path: Path) -> None:
    split = voxceleb_files(tmp_path, (0.05, 0.12, 0.1), seed=4)
    names = ["campp", "ecapa", "resnet"]  # not alphabetical in the file: models keep their first line's order
    per_model = [path.read_text().splitlines() for path in split]
    in_file = names[::-1]  # the order of first appearance: resnet, ecapa, campp
    renamed = [path.rename(tmp_path / f"{name}.txt") for name, path in zip(in_file, split, strict=True)]
    (tmp_path / "models.txt").write_text(  # trial by trial, each model's line
        "".join(
            f"{name} {line}\n"
            for trial in zip(*per_model, strict=True)
            for name, line in zip(in_file, trial, strict=True)
        )
    )
    args = ("--resamples", "200", "--json")
    _, model_out, _ = invoke(tmp_path / "trials.txt", tmp_path / "models.txt", "--by-model", *args)
    _, split_out, _ = invoke(tmp_path / "trials.txt", *renamed, *args)
    by_model, by_file = json.loads(model_out), json.loads(split_out)
    assert by_model["statistics"]["rankings"] == by_file["statistics"]["rankings"]
    assert by_model["aggregates"] == by_file["aggregates"]
    pairs = by_model["statistics"]["rankings"]["settings"][0]["pairs"]  # best EER first, as for files
    assert sorted(map(sorted, (pair["encoders"] for pair in pairs))) == [
        ["campp", "ecapa"], ["campp", "resnet"], ["ecapa", "resnet"]
    ]  # fmt: skip
    # the metrics are the first model's (the model of the file's first line); the source counts the file's lines
    assert by_model["source"]["model"] == "resnet" and by_model["source"]["n_lines"] == 3 * len(per_model[0])


def test_the_tiny_case_prints_the_hand_computed_difference_under_the_model_names(tmp_path: Path) -> None:
    trials, models = tiny_files(tmp_path)
    code, out, _ = invoke(trials, models, "--by-model", "--resamples", "50")
    # sharp separates the classes (EER 0); blunt's ROC convex hull runs from (P_fa 0, P_miss 1/2) to (1/2, 0) and
    # crosses P_fa = P_miss at 1/4: the paired difference sharp - blunt is -0.25
    assert code == 0 and out.startswith(f"PASS: {models}, model sharp (4 rows)")
    (line,) = [line for line in out.splitlines() if line.startswith("  all: ")]
    assert line.startswith("  all: sharp - blunt -0.250 [")
    code, out, _ = invoke(trials, models, "--by-model", "--resamples", "50", "--json")
    (pair,) = json.loads(out)["statistics"]["rankings"]["settings"][0]["pairs"]
    assert pair["encoders"] == ["sharp", "blunt"] and pair["difference"]["estimate"] == pytest.approx(-0.25)


def test_a_header_and_any_layout_after_the_model_field_are_read(tmp_path: Path) -> None:
    path = tmp_path / "models.txt"
    path.write_text("system score enrol test\nb 0.5 x y\na 0.25 x y\nb -1.5 x z\na 2 x z\n")
    read = read_model_scores(path)
    assert list(read) == ["b", "a"] and {f.format for f in read.values()} == {"voxceleb"}
    assert read["a"].frame["score"].tolist() == [0.25, 2.0] and read["a"].frame["line"].tolist() == [3, 5]
    assert read["b"].header == 1 and read["b"].frame["test_utt"].astype(str).tolist() == ["y", "z"]


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["a x y 0.1", "a x z 0.2"], "row 1, column 'model': expected two models or more in the model column, got "
         "only 'a'"),
        (["a x y 0.1", "b x y 0.2", "a x z 0.3", "b x z 0.4", "a x y 0.5"], "row 5, column 'model': expected one score "
         "per model and trial, got a second one of model 'a' for trial x y (first on row 1)"),
        (["a x y 0.1", "b x y 0.2", "a x z 0.3"], "row 3, column 'model': expected a line of model 'b' for trial x z, "
         "which model 'a' scores here: every model must score the same trials"),
        (["a x y 0.1", "b x y 0.2", "b x z 0.3"], "row 3, column 'model': expected only trials that model 'a' scores "
         "too, got trial x z: every model must score the same trials"),
        (["a x y 0.1", "b x y"], "row 2: expected '<model> <enrol> <test> <score>' (kaldi), got 3 field(s)"),
    ],
    ids=["one-model", "duplicate", "missing", "extra", "short-line"],
)  # fmt: skip
def test_a_file_that_does_not_give_every_model_the_same_trials_once_is_one_line(
    tmp_path: Path, lines: list[str], expected: str
) -> None:
    (tmp_path / "trials.txt").write_text("1 x y\n0 x z\n")
    path = tmp_path / "models.txt"
    path.write_text("".join(f"{line}\n" for line in lines))
    code, _, err = invoke(tmp_path / "trials.txt", path, "--by-model")
    (line,) = err.strip().splitlines()
    assert code == 2 and line.endswith(f"{path}, {expected}"), line


def test_by_model_takes_one_file_and_names_the_model_in_join_findings(tmp_path: Path) -> None:
    trials, models = tiny_files(tmp_path)
    code, _, err = invoke(trials, models, models, "--by-model")
    assert code == 2 and "--by-model: expected one score file with a model column, got 2" in err
    models.write_text("".join(models.read_text().splitlines(keepends=True)[2:]))  # both models lose trial 1
    code, out, _ = invoke(trials, models, "--by-model", "--resamples", "50")
    assert code == 1 and f"1 trial of the list have no score in {models} (model sharp)" in out
    assert f"no score in {models} (model blunt)" in out
