"""Issue 41's ``[analysis]`` keys: the ranking family and the trial-design thresholds, typed and bounded."""

from __future__ import annotations

import pytest

from schemas import Analysis, read_analysis


def test_the_defaults_are_the_issues() -> None:
    analysis = Analysis()
    assert (analysis.ranking_family, analysis.duration_ratio_warn, analysis.duration_ratio_error) == (
        "condition",
        1.3,
        1.6,
    )
    assert (analysis.target_ratio_spread, analysis.impostor_overlap_min) == (1.5, 1.0)


def test_declared_values_are_taken() -> None:
    text = (
        '[analysis]\nranking_family = "experiment"\nduration_ratio_warn = 1.2\nduration_ratio_error = 2\n'
        "impostor_overlap_min = 0.9\n"
    )
    analysis, problems = read_analysis(text)
    assert problems == [] and analysis.ranking_family == "experiment"
    assert (analysis.duration_ratio_warn, analysis.duration_ratio_error, analysis.impostor_overlap_min) == (
        1.2,
        2.0,
        0.9,
    )


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (
            'ranking_family = "pairs"',
            'analysis.ranking_family: expected one of "condition", "experiment", got a string',
        ),
        ("duration_ratio_warn = 1", "analysis.duration_ratio_warn: expected a finite number above 1, got an integer 1"),
        (
            "target_ratio_spread = inf",
            "analysis.target_ratio_spread: expected a finite number above 1, got a number inf",
        ),
        ("impostor_overlap_min = 0", "analysis.impostor_overlap_min: expected a number above 0 and at most 1"),
        ("impostor_overlap_min = 1.5", "got a number 1.5"),
        (
            "duration_ratio_error = 1.2",
            "analysis.duration_ratio_error: the warning ratio 1.3 is above the error ratio 1.2",
        ),
    ],
)
def test_each_bad_value_is_one_problem_and_keeps_the_default(line: str, problem: str) -> None:
    analysis, problems = read_analysis(f"[analysis]\n{line}\n")
    assert len(problems) == 1 and problem in problems[0]
    assert analysis == Analysis()


def test_a_warning_ratio_above_the_error_ratio_names_both() -> None:
    analysis, problems = read_analysis("[analysis]\nduration_ratio_warn = 2\nduration_ratio_error = 1.5\n")
    assert [problem.split(":")[0] for problem in problems] == [
        "analysis.duration_ratio_warn",
        "analysis.duration_ratio_error",
    ]
    assert analysis == Analysis()


def test_the_menagerie_quantiles_are_two_ordered_fractions() -> None:
    assert Analysis().menagerie_quantiles == (0.1, 0.9)
    analysis, problems = read_analysis("[analysis]\nmenagerie_quantiles = [0.05, 0.95]\n")
    assert problems == [] and analysis.menagerie_quantiles == (0.05, 0.95)
    for value, problem in (
        ("[0.9, 0.1]", "expected the low quantile below the high one"),
        ("[0.1]", "expected a list of two quantiles [low, high]"),
        ("[0, 0.9]", "expected a number strictly between 0 and 1"),
    ):
        analysis, problems = read_analysis(f"[analysis]\nmenagerie_quantiles = {value}\n")
        assert (
            len(problems) == 1 and problems[0].startswith("analysis.menagerie_quantiles: ") and problem in problems[0]
        )
        assert analysis == Analysis()


def test_the_speaker_eer_minimum_is_two_positive_counts() -> None:
    assert Analysis().speaker_eer_min_trials == (10, 20)
    analysis, problems = read_analysis("[analysis]\nspeaker_eer_min_trials = [5, 40]\n")
    assert problems == [] and analysis.speaker_eer_min_trials == (5, 40)
    for value, problem in (
        ("[10]", "expected a list of two counts [targets, non-targets]"),
        ("[0, 20]", "expected an integer from 1 to 10,000,000"),
        ("[10, 2.5]", "expected an integer from 1 to 10,000,000"),
    ):
        analysis, problems = read_analysis(f"[analysis]\nspeaker_eer_min_trials = {value}\n")
        assert len(problems) == 1 and problems[0].startswith("analysis.speaker_eer_min_trials: ")
        assert problem in problems[0] and analysis == Analysis()
