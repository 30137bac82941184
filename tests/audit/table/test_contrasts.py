"""Interaction contrasts: four terms on one corpus, prediction and IE worked out by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from audit.table.contrasts import derive_contrasts, trial_matching
from schemas.results import validate_results, with_all_columns

LEVELS = {"clean": ("none", "none"), "a": ("noisy", "none"), "b": ("none", "opus"), "ab": ("noisy", "opus")}


def frame(rows: list[dict[str, object]]) -> pd.DataFrame:
    """Validated rows (all must pass) with every optional column present, as the audit feeds them on."""
    text = pd.DataFrame([{k: str(v) if v != "" else None for k, v in row.items()} for row in rows], dtype=str)
    validated = validate_results(text)
    assert validated.failures == []
    return with_all_columns(validated.valid)


def term(term_name: str, eer: float, model: str = "m1", corpus: str = "c1", **extra: object) -> dict[str, object]:
    level_a, level_b = LEVELS[term_name]
    row: dict[str, object] = {
        "record_id": f"{model}-{corpus}-{term_name}-{extra.pop('tag', '')}",
        "experiment": "E14",
        "model": model,
        "corpus": corpus,
        "condition": f"{level_a}/{level_b}",
        "eer": eer,
        "n_target": 100,
        "n_nontarget": 1000,
        "factor_a": "noise",
        "level_a": level_a,
        "factor_b": "codec",
        "level_b": level_b,
    }
    row.update(extra)
    return row


def test_prediction_and_ie_by_hand() -> None:
    rows = [term("clean", 0.10), term("a", 0.15), term("b", 0.20), term("ab", 0.30)]
    result = derive_contrasts(frame(rows))
    assert result.incomplete == []
    (contrast,) = result.contrasts
    # prediction = 0.15 + 0.20 - 0.10 = 0.25; IE = 0.30 - 0.25 = 0.05
    assert contrast.prediction == pytest.approx(0.25)
    assert contrast.ie == pytest.approx(0.05)
    assert contrast.records == ("m1-c1-clean-", "m1-c1-a-", "m1-c1-b-", "m1-c1-ab-")
    assert (contrast.level_a, contrast.level_b) == ("noisy", "opus")


def test_reference_level_is_case_insensitive_and_empty_means_reference() -> None:
    rows = [
        term("clean", 0.10, level_a="None", level_b=""),
        term("a", 0.12, level_b="NONE"),
        term("b", 0.13),
        term("ab", 0.16),
    ]
    (contrast,) = derive_contrasts(frame(rows)).contrasts
    assert contrast.ie == pytest.approx(0.16 - (0.12 + 0.13 - 0.10))


def test_missing_marginal_is_never_replaced_by_the_reference() -> None:
    result = derive_contrasts(frame([term("clean", 0.10), term("b", 0.20), term("ab", 0.30)]))
    assert result.contrasts == []
    (incomplete,) = result.incomplete
    assert incomplete.reason == "missing-term"
    assert incomplete.problem_terms == ("a",)
    assert incomplete.terms["a"] == []


def test_a_model_without_the_joint_term_is_missing_a_term() -> None:
    rows = [term(t, e) for t, e in (("clean", 0.1), ("a", 0.2), ("b", 0.2), ("ab", 0.3))]
    rows += [term(t, e, model="m2") for t, e in (("clean", 0.1), ("a", 0.2), ("b", 0.2))]
    result = derive_contrasts(frame(rows))
    assert [c.model for c in result.contrasts] == ["m1"]
    assert [(i.model, i.reason, i.problem_terms) for i in result.incomplete] == [("m2", "missing-term", ("ab",))]


def test_reference_on_another_corpus_is_cross_corpus() -> None:
    rows = [term("clean", 0.05, corpus="vox"), term("a", 0.2), term("b", 0.1), term("ab", 0.3)]
    result = derive_contrasts(frame(rows))
    assert result.contrasts == []
    (incomplete,) = result.incomplete
    assert incomplete.reason == "cross-corpus-reference"
    assert incomplete.problem_terms == ("clean",)
    assert incomplete.terms["clean"] == [("vox", "m1-vox-clean-")]


def test_declared_cross_corpus_experiment_is_excluded_even_with_one_corpus_label() -> None:
    rows = [term(t, e, experiment="E15") for t, e in (("clean", 0.1), ("a", 0.2), ("b", 0.2), ("ab", 0.3))]
    result = derive_contrasts(frame(rows), excluded_experiments=("E15", "E18"))
    assert result.contrasts == []
    assert [i.reason for i in result.incomplete] == ["cross-corpus-reference"]


def test_two_rows_for_one_term_give_no_contrast() -> None:
    rows = [term("clean", 0.1), term("a", 0.2), term("a", 0.21, tag="again"), term("b", 0.2), term("ab", 0.3)]
    result = derive_contrasts(frame(rows))
    assert result.contrasts == []
    assert [(i.reason, i.problem_terms) for i in result.incomplete] == [("ambiguous-term", ("a",))]


def test_subgroups_and_models_are_separate_designs() -> None:
    rows = []
    for model in ("m1", "m2"):
        for subgroup, shift in (("gender=F", 0.0), ("gender=M", 0.01)):
            rows += [
                term(t, e + shift, model=model, subgroup=subgroup, tag=subgroup)
                for t, e in (("clean", 0.1), ("a", 0.2), ("b", 0.2), ("ab", 0.33))
            ]
    result = derive_contrasts(frame(rows))
    assert len(result.contrasts) == 4
    # IE = 0.33 + s - (0.2 + s + 0.2 + s - 0.1 - s) = 0.03 for every shift s
    assert all(c.ie == pytest.approx(0.03) for c in result.contrasts)
    assert {(c.model, c.subgroup) for c in result.contrasts} == {
        ("m1", "gender=F"),
        ("m1", "gender=M"),
        ("m2", "gender=F"),
        ("m2", "gender=M"),
    }


def test_two_joint_levels_share_the_reference_and_the_other_marginal() -> None:
    rows = [term("clean", 0.1), term("a", 0.2), term("b", 0.15), term("ab", 0.3)]
    rows += [term("b", 0.12, level_b="gsm", tag="gsm"), term("ab", 0.25, level_b="gsm", tag="gsm")]
    contrasts = {c.level_b: c for c in derive_contrasts(frame(rows)).contrasts}
    assert contrasts["opus"].ie == pytest.approx(0.3 - 0.25)
    assert contrasts["gsm"].ie == pytest.approx(0.25 - 0.22)
    assert contrasts["gsm"].records[0] == contrasts["opus"].records[0]


def test_rows_without_both_factors_are_not_contrasts() -> None:
    rows = [term("clean", 0.1), term("a", 0.2), term("b", 0.2), term("ab", 0.3, factor_b="")]
    result = derive_contrasts(frame(rows))
    assert result.contrasts == []
    assert result.incomplete == []  # no joint term left, so no setting to report


@pytest.mark.parametrize(
    ("lists", "expected"),
    [
        (("t1", "t1", "t1", "t1"), "matched"),
        (("t1", "t2", "t1", "t2"), "population-a"),  # factor A (e.g. emotion) selects other utterances
        (("t1", "t1", "t2", "t2"), "population-b"),
        (("t1", "t2", "t3", "t2"), "unmatched"),
        (("t1", "t1", "t1", "t2"), "unmatched"),
        (("t1", None, "t1", "t1"), "unverifiable"),
    ],
)
def test_trial_matching_of_the_four_terms(lists: tuple[str | None, ...], expected: str) -> None:
    assert trial_matching(lists) == expected


def _complement_rows(model: str = "m1") -> list[dict[str, object]]:
    """The design's four terms for stratum ``noisy`` and its complement's two rows (other-than-noisy)."""
    rows = [
        term("clean", 0.10, model),
        term("a", 0.20, model),
        term("b", 0.30, model),
        term("ab", 0.50, model),
    ]
    for level_b, eer in (("none", 0.12), ("opus", 0.28)):
        rows.append(
            term("clean", eer, model, tag=f"other-{level_b}")
            | {"level_a": "other-than-noisy", "level_b": level_b, "complement_of": "noisy"}
        )
    return rows


def test_a_stratum_against_its_complement_by_hand() -> None:
    result = derive_contrasts(frame(_complement_rows() + _complement_rows("m2")))
    # the design's own contrast is unchanged and the complement rows make no contrast against the all reference
    assert [(c.model, c.level_a, c.reference) for c in result.contrasts] == [
        ("m1", "noisy", None),
        ("m2", "noisy", None),
    ]
    assert result.contrasts[0].ie == pytest.approx(0.50 - (0.20 + 0.30 - 0.10))
    assert result.incomplete == []
    first, second = result.complement
    # prediction = EER(noisy) + EER(other-than-noisy + opus) - EER(other-than-noisy) = 0.20 + 0.28 - 0.12 = 0.36
    assert (first.model, first.level_a, first.level_b, first.reference) == ("m1", "noisy", "opus", "other-than-noisy")
    assert first.prediction == pytest.approx(0.36) and first.ie == pytest.approx(0.14)
    assert first.records == ("m1-c1-clean-other-none", "m1-c1-a-", "m1-c1-clean-other-opus", "m1-c1-ab-")
    assert second.model == "m2" and second.as_dict()["reference"] == "other-than-noisy"


def test_a_complement_setting_without_its_terms_gives_no_complement_contrast() -> None:
    rows = [row for row in _complement_rows() if row["record_id"] != "m1-c1-clean-other-none"]
    result = derive_contrasts(frame(rows))
    assert result.complement == [] and len(result.contrasts) == 1
