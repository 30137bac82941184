"""Published trial-list formats read as-is, with the file and line of any malformed line."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.scores.trial_lists import TrialListError, read_kaldi_trials, read_voxceleb_trials


def test_voxceleb_list_keeps_order_and_labels(tmp_path: Path) -> None:
    path = tmp_path / "veri_test2.txt"
    path.write_text("1 id1/v/00001.wav id1/w/00002.wav\n\n0 id1/v/00001.wav id2/x/00001.wav\n")
    trials = read_voxceleb_trials(path)
    assert trials.to_dict("records") == [
        {"enrol_utt": "id1/v/00001.wav", "test_utt": "id1/w/00002.wav", "label": 1},
        {"enrol_utt": "id1/v/00001.wav", "test_utt": "id2/x/00001.wav", "label": 0},
    ]
    assert str(trials["label"].dtype) == "int8"


def test_kaldi_list(tmp_path: Path) -> None:
    path = tmp_path / "trials"
    path.write_text("spk1-utt1 spk1-utt2 target\nspk1-utt1 spk2-utt1 nontarget\n")
    trials = read_kaldi_trials(path)
    assert list(trials["label"]) == [1, 0]
    assert list(trials["test_utt"]) == ["spk1-utt2", "spk2-utt1"]


@pytest.mark.parametrize(
    ("reader", "text", "line", "column", "message"),
    [
        (read_voxceleb_trials, "1 a b\n2 a c\n", 2, "label", "got label '2'"),
        (read_voxceleb_trials, "1 a b\n\n1 a\n", 3, None, "got 2 field(s)"),
        (read_voxceleb_trials, "a b target\n", 1, "label", "got label 'a'"),
        (read_kaldi_trials, "a b target\na c non-target\n", 2, "label", "got label 'non-target'"),
        (read_kaldi_trials, "a b c target\n", 1, None, "got 4 field(s)"),
    ],
)
def test_malformed_line_names_file_and_line(
    tmp_path: Path, reader: object, text: str, line: int, column: str | None, message: str
) -> None:
    path = tmp_path / "list.txt"
    path.write_text(text)
    with pytest.raises(TrialListError) as caught:
        reader(path)  # type: ignore[operator]
    assert (caught.value.source, caught.value.row, caught.value.column) == (str(path), line, column)
    assert message in caught.value.problem


def test_missing_list_is_named(tmp_path: Path) -> None:
    with pytest.raises(TrialListError, match="trial list not found"):
        read_voxceleb_trials(tmp_path / "veri_test2.txt")
