"""Per-trial statistics of a verified bundle: the scores and trial lists of each contrast and of each subgroup record,
as ``audit.bundle.verify_bundle`` loaded them from verified bytes, into ``audit.statistics.statistics_section``.

What is declared before the run comes from the bundle's own ``config.toml`` (signed with the rest; read by
``audit.table.analysis``), table
``[analysis]``: ``equivalence_margin`` (EER units; TOST verdicts need it), ``acceptable_error`` (held-out
validation of additive predictions), ``held_out_levels`` (factor levels whose settings were held out),
``dev_speakers`` (the development speakers of the fixed-threshold subgroup analysis), ``operating_point``
(``"eer"`` or a target FAR), ``n_resamples`` and ``seed``, ``bootstrap_eer_method`` (default: the rows' own) and
``matched_simulations`` (datasets of the simulation behind a few-speakers warning, default 100). What is not
declared is not computed, and the section says so: a margin is never chosen after seeing the data.

The straight line of the bundle's statistics: the declared analysis checked, each statistic's inputs gathered
(``audit.statistics.inputs``), the statistics computed (``audit.statistics.section``) and worded into the report's
sections (``audit.statistics.wording`` and each topic's own section).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from audit.bundle import VerifiedBundle, design_audit
from audit.metrics import MetricInputError
from audit.statistics.calibration import (
    calibration_inputs,
    calibration_transfer_section,
    subgroup_calibration_section,
)
from audit.statistics.equivalence import FAMILY_RULE
from audit.statistics.inputs import (
    BundleScores,
    band_inputs,
    contrast_input,
    fixed_threshold_inputs,
    menagerie_inputs,
    ranking_inputs,
    scored_rows,
    spoofing_inputs,
    subgroup_inputs,
    subgroup_settings,
)
from audit.statistics.menagerie import menagerie_section
from audit.statistics.rankings import rankings_section
from audit.statistics.section import statistics_section
from audit.statistics.subgroups import MIN_DEV_SPEAKERS
from audit.statistics.wording import (
    INTERVAL_DECIMALS,
    count_text,
    coverage_statement,
    fixed_threshold_section,
    interval_text,
    share_text,
    spoofing_section,
    subgroup_gap_section,
)
from audit.table import Contrast
from schemas import (
    EER_METHODS,
    Analysis,
    Flag,
    Forked,
    Severity,
    analysis_from_table,
    count,
    format_number,
    names_without_referent,
)

SECTION = {"id": "per-trial-statistics", "title": "Per-trial statistics", "table": None}


def _speakers(bundle: VerifiedBundle) -> set[str]:
    """Every speaker of the bundle's corpus tables and of its trial lists (either side): the speakers a run could
    have set aside for development."""
    listed = {
        str(speaker)
        for trials in bundle.files.trial_lists.values()
        for column in ("enrol_speaker", "test_speaker")
        for speaker in trials[column].dropna().unique()
    }
    tabled = {
        str(speaker) for table in bundle.files.corpus_tables.values() for speaker in table["speaker"].dropna().unique()
    }
    return listed | tabled


def _signed_levels(bundle: VerifiedBundle) -> set[str]:
    """Every factor level the signed results table names: what the signed ``held_out_levels`` must refer to,
    whichever rows the audited table prints (a subset, a paper's columns) and whether or not it binds."""
    signed = bundle.files.results
    if signed is None:
        return set()
    return {str(level) for column in ("level_a", "level_b") if column in signed for level in signed[column].dropna()}


def _binding_failed(bundle: VerifiedBundle) -> bool:
    """The audited table did not bind to the signed one: its rows are not the signed rows the scores belong to."""
    return any(flag.id == "table-binding" and flag.severity is Severity.ERROR for flag in bundle.flags)


def statistics_of_bundle(
    results: pd.DataFrame,
    contrasts: Sequence[Contrast],
    bundle: VerifiedBundle,
    near_chance_eer: float = 0.4,
    det_curves: Sequence[Mapping[str, Any]] = (),
) -> tuple[dict[str, Any] | None, list[dict[str, Any]], list[Flag]]:
    """The statistics (or None), the report sections that summarise them or say why they are absent, and a
    ``bundle-schema`` flag when the signed ``[analysis]`` table cannot be used (checked against the signed files
    only); beside them the trial-design audit (``audit.bundle.design_audit``: its section and flags) under the
    declared thresholds. ``det_curves``: the report's curves (``audit.bundle.curves_of_bundle``), whose DET curves
    get bands (``band_inputs``).

    Only a bundle whose signature and every digest and schema verified is analysed, and only for an audited table
    that bound to its signed rows: intervals over bytes nobody vouches for, or over rows that are not the signed
    ones, would lend them a precision they have not earned."""
    if not bundle.intact:
        lines = [
            "Not run: the bundle did not verify (signature, digests or schemas; see the bundle sections), so no "
            "interval or verdict is computed from its scores."
        ]
        return None, [SECTION | {"status": "skipped", "lines": lines}], []
    analysis, problems = analysis_from_table((bundle.files.config or {}).get("analysis", {}))
    problems += names_without_referent(
        analysis, speakers=_speakers(bundle), levels=_signed_levels(bundle), speakers_of="the bundle's corpora"
    )
    if problems:
        message = f"The signed config.toml declares an analysis that cannot be used: {'; '.join(problems)}."
        failures = [{"file": "config.toml", "problem": problem} for problem in problems]
        flag = Flag("bundle-schema", Severity.ERROR, message, (), {"reason": "analysis", "failures": failures})
        return None, [SECTION | {"status": "failed", "lines": [message]}], [flag]
    if _binding_failed(bundle):
        lines = [
            "Not run: the audited table did not bind to the signed results table (see the table-binding section), "
            "so its rows are not the signed rows whose scores the statistics would read."
        ]
        return None, [SECTION | {"status": "skipped", "lines": lines}], []
    # The design audit reads only the signed lists: it runs in a fork beside the statistics.
    with Forked(design_audit, results, contrasts, bundle.files, bundle.trial_list_of, analysis) as designed:
        statistics, sections = _statistics(results, contrasts, bundle, analysis, near_chance_eer, det_curves)
        design_flags, design_section = designed.result()
    return statistics, [*sections, design_section], design_flags


def _statistics(
    results: pd.DataFrame,
    contrasts: Sequence[Contrast],
    bundle: VerifiedBundle,
    analysis: Analysis,
    near_chance_eer: float,
    det_curves: Sequence[Mapping[str, Any]] = (),
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
    scores = BundleScores(bundle)
    eer_method, method_note = statistics_eer_method(results, analysis.bootstrap_eer_method)
    inputs, skipped = [], []
    for contrast in contrasts:
        try:
            inputs.append(contrast_input(contrast, scores, set(analysis.held_out_levels), near_chance_eer, eer_method))
        except (OSError, ValueError, KeyError) as error:
            skipped.append(f"{'/'.join(contrast.records)}: {error}")
    dev_speakers = list(analysis.dev_speakers)
    try:
        settings = subgroup_inputs(subgroup_settings(results, scores))
    except (KeyError, ValueError) as error:
        return None, [section | {"status": "failed", "lines": [f"The subgroup records cannot be pooled: {error}."]}]
    fixed = fixed_threshold_inputs(settings, dev_speakers) if dev_speakers else []
    calibrated, fits = (
        calibration_inputs(
            scored_rows(results, scores), scores.trials, scores.scores, analysis.calibration, dev_speakers
        )
        if analysis.calibration is not None
        else ([], {})
    )
    spoofing = spoofing_inputs(scored_rows(results, scores), scores)
    rankings, unranked = ranking_inputs(scored_rows(results, scores), scores)
    try:
        statistics = statistics_section(
            inputs,
            margin=float(margin),
            acceptable_error=analysis.acceptable_error,
            fixed_threshold=fixed,
            subgroup_settings=settings,
            operating_point=analysis.operating_point,
            n_resamples=analysis.n_resamples,
            seed=analysis.seed,
            eer_method=eer_method,
            matched_simulations=analysis.matched_simulations,
            calibration=calibrated,
            spoofing=spoofing,
            rankings=rankings,
            ranking_family=analysis.ranking_family,
            bands=band_inputs(det_curves, scored_rows(results, scores), scores),
            menagerie=menagerie_inputs(contrasts, scores),
            menagerie_quantiles=analysis.menagerie_quantiles,
            speaker_eer_min_trials=analysis.speaker_eer_min_trials,
        )
    except MetricInputError as error:
        return None, [section | {"status": "failed", "lines": [f"The statistics could not be computed: {error}"]}]
    families = statistics["families"]
    rows = [
        {
            "family": family,
            "contrasts": result["n_contrasts"],
            "population contrasts": result["n_population_contrasts"],
            "verdict (Holm)": result["verdict"],
            "per contrast within / outside / undetermined": "{} / {} / {}".format(
                *(result["contrast_verdicts"][v] for v in ("additive within margin", "non-additive", "undetermined"))
            ),
            "contrasts outside margin (95% bounds)": count_text(result),
            "mean IE (can cancel)": interval_text(result["mean_ie"]),
            "|IE| found 80% (one contrast)": format_number(result["power"]["detectable_ie"], INTERVAL_DECIMALS),
            "additive shown if IE 0": share_text(result["power"]["p_additive_when_additive"]),
            "flagged": result["n_flagged"],
            "verdict without flagged": (result["unflagged"] or {}).get("verdict", "-"),
        }
        for family, result in families.items()
    ]
    coupling = statistics.get("coupling", {})
    n_population = sum(result["n_population_contrasts"] for result in families.values())
    lines = [
        f"Two-way speaker bootstrap ({statistics['n_resamples']} resamples of speakers shared by every contrast "
        f"and encoder; a trial counts once per drawn copy of each of its speakers; seed {statistics['seed']}; "
        f"{statistics['level']:.0%} {statistics['intervals']}); {len(inputs)} contrasts with per-trial scores, "
        f"{n_population} of them population contrasts (terms on different trial lists, resampled jointly "
        "through their speakers)" + (f", {len(skipped)} left out: {'; '.join(skipped[:3])}" if skipped else "") + ".",
        method_note,
        *coverage_statement(statistics),
        f"Equivalence to additivity (TOST) against the declared margin {margin}, alpha {statistics['alpha']}: "
        f"{FAMILY_RULE}. 'contrasts outside margin': bounds on how many have |IE| above the margin at "
        f"{statistics['level']:.0%} (at least the Holm rejections of 'within', at most those not shown within), "
        "with no point estimate (the count of estimates beyond the margin is biased away from 0 by the noise); "
        "'0 to all' means the data cannot tell. It cannot cancel, the signed mean can. The per-contrast counts are "
        "unadjusted; a contrast flagged near chance gets no verdict. Per contrast in report.json "
        "(statistics.contrasts, each with its own power).",
        "Power, by simulation on this audit's own draws (each resample's deviations one simulated data set's "
        "errors, at these speakers, trials and contrasts): '|IE| found 80%' is the smallest interaction that, in "
        "one contrast of an otherwise additive family, makes the family non-additive 80% of the time (the median "
        "over which contrast carries it); 'additive shown if IE 0' how often an exactly additive family is called "
        "additive. An 'undetermined' verdict says no more than that: interactions below the first could not "
        "be found.",
        "'flagged' counts the contrasts of a family that carry a near-chance or unmatched-trials flag: the family "
        "figures include them; statistics.families.<family>.unflagged has the same figures without them.",
    ]
    if coupling.get("observed") is not None and coupling.get("expected_under_additivity"):
        expected = coupling["expected_under_additivity"]
        observed, r, low, high = (
            format_number(value, INTERVAL_DECIMALS)
            for value in (coupling["observed"], expected.get("r"), expected.get("low"), expected.get("high"))
        )
        lines.append(
            f"IE vs prediction: observed r = {observed}; under pure additivity with the same trial noise r would be "
            f"about {r} (the median of {expected['n_simulations']} simulations on the audit's draws; 95% of them "
            f"within {low} to {high})."
        )
    if fixed:
        run = sum("skipped" not in result for result in statistics["fixed_threshold"])
        lines.append(
            f"Fixed-threshold subgroup error rates: {run} of {len(fixed)} subgroup settings at one threshold chosen "
            f"on {len(dev_speakers)} declared development speakers (statistics.fixed_threshold; the others name why "
            f"they were not run, e.g. fewer than {MIN_DEV_SPEAKERS} development speakers per class)."
        )
    sections = [section | {"status": "info", "lines": lines, "table": rows}]
    if "rankings" in statistics:
        ranked = rankings_section(statistics["rankings"], interval_text)
        if "ranking_family" not in ((bundle.files.config or {}).get("analysis") or {}):
            ranked["lines"].append(
                f'The run declares no [analysis] ranking_family: the toolkit\'s default, "{analysis.ranking_family}", '
                "is used (fixed before any run, so not chosen after seeing these results)."
            )
        if unranked:
            ranked["lines"].append(
                f"{count(len(unranked), 'record')} left out of the comparisons, each a second record of one encoder in "
                f"one setting (the pairs compare encoders, not records): {', '.join(unranked[:5])}."
            )
        sections.append(ranked)
    if statistics["subgroup_gaps"]:
        sections.append(subgroup_gap_section(statistics["subgroup_gaps"]))
    if statistics["fixed_threshold"]:
        sections.append(fixed_threshold_section(statistics["fixed_threshold"]))
    if analysis.calibration is not None:
        sections.append(calibration_transfer_section(statistics["calibration_transfer"], fits, interval_text))
    if statistics["spoofing"]:
        sections.append(spoofing_section(statistics["spoofing"]))
    if statistics["calibration_subgroups"]:
        sections.append(subgroup_calibration_section(statistics["calibration_subgroups"], interval_text))
    if statistics["menagerie"]:
        sections.append(menagerie_section(statistics["menagerie"], interval_text))
    return statistics, sections


def statistics_eer_method(results: pd.DataFrame, declared: str | None) -> tuple[Any, str]:
    """The bootstrap's EER variant and a line saying which and why: ``[analysis] bootstrap_eer_method`` when
    declared, else the method every results row names, else the most common one. The aggregates keep each row's
    own method, so the line names both."""
    rows = results["eer_method"].dropna().astype(str) if "eer_method" in results else pd.Series(dtype=str)
    named = ", ".join(sorted(set(rows))) or "not stated"
    if declared:
        method, why = declared, "declared in [analysis] bootstrap_eer_method"
    elif rows.nunique() == 1 and rows.iloc[0] in EER_METHODS:
        method, why = rows.iloc[0], "the method every results row names"
    elif len(rows) and rows.mode().iloc[0] in EER_METHODS:
        method, why = rows.mode().iloc[0], "the most common of the rows' methods"
    else:
        method, why = "interp", "the default: the rows name no method"
    return method, f"EER variant of these statistics: {method} ({why}); the aggregates use the rows' own ({named})."
