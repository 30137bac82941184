"""Per-trial statistics of a bundle (issue 7): read the scores of each contrast and of each subgroup record, then
call ``audit.statistics.bundle_statistics``.

What is declared before the run comes from the bundle's own ``config.toml`` (signed with the rest), table
``[analysis]``: ``equivalence_margin`` (EER units; TOST verdicts need it), ``acceptable_error`` (held-out
validation of additive predictions), ``held_out_levels`` (factor levels whose settings were held out),
``dev_speakers`` (the development speakers of the fixed-threshold subgroup analysis), ``operating_point``
(``"eer"`` or a target FAR), ``n_resamples`` and ``seed``. What is not declared is not computed, and the section
says so: a margin is never chosen after seeing the data.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, get_args

import numpy as np
import pandas as pd

from audit.analysis import Analysis, analysis_from_table
from audit.contrasts import Contrast
from audit.findings import Flag, Severity
from audit.metrics import MetricInputError
from audit.statistics import BootstrapEerMethod, ContrastInput, FixedThresholdInput, bundle_statistics
from audit.verified import VerifiedBundle

BOOTSTRAP_EER_METHODS: tuple[BootstrapEerMethod, ...] = get_args(BootstrapEerMethod)

TERMS = ("clean", "a", "b", "ab")


class _Scores:
    """Score arrays and trial lists of a verified bundle (loaded once, from verified bytes)."""

    def __init__(self, bundle: VerifiedBundle) -> None:
        self.files = bundle.files
        self.trial_list = bundle.trial_list_of

    def scores(self, record_id: str) -> np.ndarray:
        return self.files.scores[record_id].scores

    def trials(self, record_id: str) -> pd.DataFrame:
        return self.files.trial_lists[self.trial_list[record_id]]


def _contrast_input(contrast: Contrast, scores: _Scores, held_out_levels: set[str]) -> ContrastInput:
    records = contrast.records
    if len({scores.trial_list[r] for r in records}) != 1:
        raise ValueError("its four terms used different trial lists")
    trials = scores.trials(records[0])
    return ContrastInput(
        key={
            "experiment": contrast.experiment,
            "model": contrast.model,
            "corpus": contrast.corpus,
            "subgroup": contrast.subgroup or "",
            "level_a": contrast.level_a,
            "level_b": contrast.level_b,
        },
        family=f"{contrast.experiment}/{contrast.model_family or 'unknown family'}",
        scores={term: scores.scores(record) for term, record in zip(TERMS, records, strict=True)},
        labels=trials["label"].astype(int).to_numpy(),
        clusters=trials["enrol_speaker"].to_numpy(),
        held_out=bool({contrast.level_a, contrast.level_b} & held_out_levels),
        model=contrast.model,
    )


def _fixed_threshold_inputs(
    results: pd.DataFrame, scores: _Scores, dev_speakers: list[str]
) -> list[FixedThresholdInput]:
    """One input per (experiment, model, condition) with subgroup records: their trials pooled, each labelled
    with its record's subgroup, scored at one threshold."""
    groups: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    with_subgroup = results[results["subgroup"].notna()] if "subgroup" in results else results.iloc[0:0]
    for row in with_subgroup.itertuples():
        groups[(str(row.experiment), str(row.model), str(row.condition))].append(str(row.record_id))
    inputs = []
    for (experiment, model, condition), records in sorted(groups.items()):
        if len(records) < 2:
            continue
        frames = []
        for record in sorted(records):
            trials = scores.trials(record)
            subgroup = results.loc[results["record_id"] == record, "subgroup"].iloc[0]
            frames.append(trials.assign(score=scores.scores(record), subgroup=str(subgroup)))
        pooled = pd.concat(frames, ignore_index=True)
        inputs.append(
            FixedThresholdInput(
                key={"experiment": experiment, "model": model, "condition": condition},
                scores=pooled["score"].to_numpy(float),
                labels=pooled["label"].astype(int).to_numpy(),
                enrol_speaker=pooled["enrol_speaker"].to_numpy(),
                test_speaker=pooled["test_speaker"].to_numpy(),
                subgroups=pooled["subgroup"].to_numpy(),
                dev_speakers=dev_speakers,
            )
        )
    return inputs


def _interval_text(value: dict[str, Any]) -> str:
    return f"{_fmt(value.get('estimate'))} [{_fmt(value.get('low'))}, {_fmt(value.get('high'))}]"


def fixed_threshold_section(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Subgroup FAR and FRR at one common threshold, beside each subgroup's own-threshold EER (the paper's gaps)."""
    rows = [
        {
            **result["key"],
            "subgroup": subgroup,
            "threshold": result["threshold"],
            "EER (own threshold)": _interval_text(values["eer"]),
            "FAR (common)": _interval_text(values["far"]),
            "FRR (common)": _interval_text(values["frr"]),
            "trials": values["n_target"] + values["n_nontarget"],
        }
        for result in results
        for subgroup, values in sorted(result["subgroups"].items())
    ]
    return {
        "id": "fixed-threshold-subgroups",
        "title": "Subgroup error rates at one common threshold",
        "status": "info",
        "lines": [
            "Per-subgroup EERs compare separately optimised operating points; a deployment runs at one threshold. "
            "Here the threshold is chosen on development speakers disjoint from the evaluated ones, and each "
            "subgroup's FAR and FRR at it are shown beside its own EER (estimate [95% interval]).",
            "Intervals resample enrolment speakers: a subgroup with a single speaker gets a zero-width interval, "
            "which shows that its uncertainty cannot be estimated, not that there is none.",
        ],
        "table": rows,
    }


def statistics_eer_method(results: pd.DataFrame) -> tuple[BootstrapEerMethod, str]:
    """The EER variant of the per-trial statistics, and a line saying which and why: the rows' own method when they
    share one the bootstrap offers (interp, legacy), else interp. The aggregates keep each row's own method, so the
    line names both."""
    rows = sorted(set(results["eer_method"].dropna().astype(str))) if "eer_method" in results else []
    method: BootstrapEerMethod
    if len(rows) == 1 and rows[0] in BOOTSTRAP_EER_METHODS:
        method, why = rows[0], "the method every results row names"
    else:
        method, why = "interp", "the default; the bootstrap offers interp and legacy only"
    named = ", ".join(rows) or "not stated"
    return method, f"EER variant of these statistics: {method} ({why}); the aggregates use the rows' own ({named})."


SECTION = {"id": "per-trial-statistics", "title": "Per-trial statistics", "table": None}


def statistics_of_bundle(
    results: pd.DataFrame, contrasts: Sequence[Contrast], bundle: VerifiedBundle
) -> tuple[dict[str, Any] | None, list[dict[str, Any]], list[Flag]]:
    """The statistics (or None), the report sections that summarise them or say why they are absent, and a
    ``bundle-schema`` flag when the signed ``[analysis]`` table cannot be used.

    Only a bundle whose signature and every digest and schema verified is analysed: intervals over bytes nobody
    vouches for would lend them a precision they have not earned."""
    if not bundle.intact:
        lines = [
            "Not run: the bundle did not verify (signature, digests or schemas; see the bundle sections), so no "
            "interval or verdict is computed from its scores."
        ]
        return None, [SECTION | {"status": "skipped", "lines": lines}], []
    analysis, problems = analysis_from_table((bundle.files.config or {}).get("analysis", {}))
    if problems:
        message = f"The signed config.toml declares an analysis that cannot be used: {'; '.join(problems)}."
        flag = Flag(
            "bundle-schema",
            Severity.ERROR,
            message,
            (),
            {"reason": "analysis", "failures": [{"file": "config.toml", "problem": problem} for problem in problems]},
        )
        return None, [SECTION | {"status": "failed", "lines": [message]}], [flag]
    statistics, sections = _statistics(results, contrasts, bundle, analysis)
    return statistics, sections, []


def _statistics(
    results: pd.DataFrame, contrasts: Sequence[Contrast], bundle: VerifiedBundle, analysis: Analysis
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    section: dict[str, Any] = dict(SECTION)
    margin = analysis.equivalence_margin
    if margin is None:
        return None, [
            section
            | {
                "status": "skipped",
                "lines": [
                    "The run configuration declares no [analysis] equivalence_margin, so no equivalence verdict "
                    "is given (a margin chosen after seeing the data would not be a test)."
                ],
            }
        ]
    scores = _Scores(bundle)
    inputs, skipped = [], []
    for contrast in contrasts:
        try:
            inputs.append(_contrast_input(contrast, scores, set(analysis.held_out_levels)))
        except (OSError, ValueError, KeyError) as error:
            skipped.append(f"{'/'.join(contrast.records)}: {error}")
    eer_method, method_note = statistics_eer_method(results)
    dev_speakers = list(analysis.dev_speakers)
    try:
        fixed = _fixed_threshold_inputs(results, scores, dev_speakers) if dev_speakers else []
    except (KeyError, ValueError) as error:
        return None, [section | {"status": "failed", "lines": [f"The subgroup records cannot be pooled: {error}."]}]
    try:
        statistics = bundle_statistics(
            inputs,
            margin=float(margin),
            acceptable_error=analysis.acceptable_error,
            fixed_threshold=fixed,
            operating_point=analysis.operating_point,
            n_resamples=analysis.n_resamples,
            seed=analysis.seed,
            eer_method=eer_method,
        )
    except MetricInputError as error:
        return None, [section | {"status": "failed", "lines": [f"The statistics could not be computed: {error}"]}]
    families = statistics["families"]
    rows = [
        {
            "family": family,
            "contrasts": result["n_contrasts"],
            "mean IE": result["mean_ie"].get("estimate"),
            "interval": [result["mean_ie"].get("low"), result["mean_ie"].get("high")],
            "verdict": result["tost"]["verdict"],
        }
        for family, result in families.items()
    ]
    coupling = statistics.get("coupling", {})
    lines = [
        f"Speaker-cluster bootstrap ({statistics['n_resamples']} resamples of enrolment speakers, seed "
        f"{statistics['seed']}, {statistics['level']:.0%} percentile intervals), the same resample for the four "
        f"terms of each contrast; {len(inputs)} contrasts with per-trial scores"
        + (f", {len(skipped)} left out: {'; '.join(skipped[:3])}" if skipped else "")
        + ".",
        method_note,
        f"Equivalence to additivity (TOST) against the declared margin {margin}: per family below, per contrast "
        "in report.json (statistics.contrasts).",
    ]
    if coupling.get("observed") is not None:
        expected = coupling.get("expected_under_additivity", {})
        lines.append(
            f"IE vs prediction: observed r = {_fmt(coupling['observed'])}; under pure additivity with the same "
            f"trial noise r would be {_fmt(expected.get('median'))} (95% of simulations within "
            f"{_fmt(expected.get('low'))} to {_fmt(expected.get('high'))})."
        )
    if fixed:
        lines.append(
            f"Fixed-threshold subgroup error rates: {len(fixed)} subgroup settings at one threshold chosen on "
            f"development speakers {', '.join(dev_speakers)} (statistics.fixed_threshold)."
        )
    sections = [section | {"status": "info", "lines": lines, "table": rows}]
    if statistics["fixed_threshold"]:
        sections.append(fixed_threshold_section(statistics["fixed_threshold"]))
    return statistics, sections


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}"
