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
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any

import numpy as np
import pandas as pd

from audit.bundle import EER_KEYS, VerifiedBundle, design_audit
from audit.metrics import MetricInputError, SpoofingSet, is_reference, spoofing_sets_of_rows
from audit.statistics.calibration import (
    calibration_inputs,
    calibration_transfer_section,
    subgroup_calibration_section,
)
from audit.statistics.contrasts import ContrastInput
from audit.statistics.det_bands import BandInput
from audit.statistics.equivalence import FAMILY_RULE
from audit.statistics.menagerie import SpeakerRecord, menagerie_section
from audit.statistics.rankings import RankingInput, rankings_section
from audit.statistics.section import statistics_section
from audit.statistics.spoofing import SpoofingInput
from audit.statistics.subgroups import MIN_DEV_SPEAKERS, FixedThresholdInput, SubgroupInput
from audit.table import Contrast
from schemas import (
    EER_METHODS,
    SPOOFING_COLUMNS,
    Analysis,
    Flag,
    Severity,
    analysis_from_table,
    cell_text,
    count,
    format_number,
    names_without_referent,
    row_dicts,
)

TERMS = ("clean", "a", "b", "ab")
INTERVAL_DECIMALS = 3  # EERs, their intervals and the coupling r, in the section's lines and tables


class _Scores:
    """Score arrays and trial lists of a verified bundle (loaded once, from verified bytes)."""

    def __init__(self, bundle: VerifiedBundle) -> None:
        self.files = bundle.files
        self.trial_list = bundle.trial_list_of
        self.rescored = bundle.rescored
        self._columns: dict[str, dict[str, np.ndarray]] = {}

    def scores(self, record_id: str) -> np.ndarray:
        return self.files.scores[record_id].scores

    def trials(self, record_id: str) -> pd.DataFrame:
        return self.files.trial_lists[self.trial_list[record_id]]

    def columns(self, record_id: str) -> dict[str, np.ndarray]:
        """The record's trial list as arrays (label as int, speakers as str), made once per list: every contrast
        on the list then hands the statistics the same arrays, whose speaker codes are computed once."""
        list_id = self.trial_list[record_id]
        if list_id not in self._columns:
            frame = self.files.trial_lists[list_id]
            self._columns[list_id] = {
                "label": frame["label"].astype(int).to_numpy(),
                "enrol_speaker": frame["enrol_speaker"].astype(str).to_numpy(),
                "test_speaker": frame["test_speaker"].astype(str).to_numpy(),
                **({"test_utt": frame["test_utt"].astype(str).to_numpy()} if "test_utt" in frame else {}),
            }
        return self._columns[list_id]


def family_of(contrast: Contrast) -> str:
    """``E14/speaker``; a complement contrast (a stratum against the population it does not overlap) is a family
    of its own, ``E13/speaker (complement reference)``, never pooled with the overlapping reference's."""
    family = f"{contrast.experiment}/{contrast.model_family or 'unknown family'}"
    return f"{family} (complement reference)" if contrast.reference else family


def _contrast_input(
    contrast: Contrast, scores: _Scores, held_out_levels: set[str], near_chance_eer: float, eer_method: str
) -> ContrastInput:
    """The four terms' scores and trials; terms on different trial lists make a population contrast. A term's
    point EER comes from the re-scoring of its record's verified scores where that ran."""
    records = contrast.records
    columns = {term: scores.columns(record) for term, record in zip(TERMS, records, strict=True)}
    point_column = EER_KEYS[eer_method]  # statistics_eer_method names a known method
    shared = len({scores.trial_list[r] for r in records}) == 1

    def column(name: str) -> Any:
        per_term = {term: arrays[name] for term, arrays in columns.items()}
        return per_term["clean"] if shared else per_term

    return ContrastInput(
        key={
            "experiment": contrast.experiment,
            "model": contrast.model,
            "corpus": contrast.corpus,
            "subgroup": contrast.subgroup or "",
            "level_a": contrast.level_a,
            "level_b": contrast.level_b,
            **({"reference": contrast.reference} if contrast.reference else {}),
        },
        family=family_of(contrast),
        scores={term: scores.scores(record) for term, record in zip(TERMS, records, strict=True)},
        labels=column("label"),
        clusters=column("enrol_speaker"),
        test_speakers=column("test_speaker"),
        held_out=bool({contrast.level_a, contrast.level_b} & held_out_levels),
        model=contrast.model,
        records=dict(zip(TERMS, records, strict=True)),
        caveats=contrast.caveats(near_chance_eer),
        point_eers={
            term: scores.rescored[record][point_column]
            for term, record in zip(TERMS, records, strict=True)
            if point_column in scores.rescored.get(record, {})
        },
    )


def _subgroup_settings(results: pd.DataFrame, scores: _Scores) -> list[tuple[dict[str, str], pd.DataFrame]]:
    """Per (experiment, model, condition) with two or more subgroup records: their trials pooled, each labelled
    with its record's subgroup."""
    groups: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    with_subgroup = results[results["subgroup"].notna()] if "subgroup" in results else results.iloc[0:0]
    for row in with_subgroup.itertuples():
        groups[(str(row.experiment), str(row.model), str(row.condition))].append(str(row.record_id))
    settings = []
    for (experiment, model, condition), records in sorted(groups.items()):
        if len(records) < 2:
            continue
        frames = []
        for record in sorted(records):
            trials = scores.trials(record)
            subgroup = results.loc[results["record_id"] == record, "subgroup"].iloc[0]
            frames.append(trials.assign(score=scores.scores(record), subgroup=str(subgroup)))
        key = {"experiment": experiment, "model": model, "condition": condition}
        settings.append((key, pd.concat(frames, ignore_index=True)))
    return settings


def _subgroup_inputs(settings: list[tuple[dict[str, str], pd.DataFrame]]) -> list[SubgroupInput]:
    return [
        SubgroupInput(
            key=key,
            scores=pooled["score"].to_numpy(float),
            labels=pooled["label"].astype(int).to_numpy(),
            enrol_speaker=pooled["enrol_speaker"].to_numpy(),
            test_speaker=pooled["test_speaker"].to_numpy(),
            subgroups=pooled["subgroup"].to_numpy(),
        )
        for key, pooled in settings
    ]


def _fixed_threshold_inputs(settings: list[SubgroupInput], dev_speakers: list[str]) -> list[FixedThresholdInput]:
    """One input per subgroup setting, scored at one threshold chosen on the development speakers."""
    return [
        FixedThresholdInput(**{f.name: getattr(setting, f.name) for f in fields(setting)}, dev_speakers=dev_speakers)
        for setting in settings
    ]


def _interval_text(value: dict[str, Any] | None) -> str:
    """``estimate [low, high]``; a withheld interval as ``estimate (no interval: one speaker)``, a degenerate one
    (no width: every resample the same value, or cut to the metric's bound) as ``estimate (no interval: why)``; an
    estimate outside its own interval with a word why; a zero count with its exact bound beside."""
    if value is None:
        return "-"
    estimate, low, high = (format_number(value.get(key), INTERVAL_DECIMALS) for key in ("estimate", "low", "high"))
    if "withheld" in value:
        return f"{estimate} (no interval: {str(value['withheld']).split(':')[0]})"
    if "degenerate" in value:
        return f"{estimate} (no interval: {str(value['degenerate']).split(' (')[0]})"
    text = f"{estimate} [{low}, {high}]"
    if value.get("low") is not None and not value["low"] <= value["estimate"] <= value["high"]:
        text += " (the estimate lies outside: its resamples sit to one side of it)"
    if "exact_bound" in value:
        bound = value["exact_bound"]
        exact = (format_number(bound[key], INTERVAL_DECIMALS) for key in ("low", "high"))
        text += " (exact [{}, {}]: {})".format(*exact, bound["reason"].split(":")[0])
    return text


def subgroup_gap_section(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each subgroup setting's gaps to its reference subgroup, with intervals and the speakers behind each."""
    rows = [
        {
            **result["key"],
            "subgroup": name,
            "speakers": result["n_speakers"].get(name),
            "EER": _interval_text(result["eer"][name]),
            "gap to " + str(result["reference"]): _interval_text(result["gap_to_reference"][name])
            if name in result.get("gap_to_reference", {})
            else "reference",
        }
        for result in results
        if result.get("eer")
        for name in sorted(result["eer"])
    ]
    single = sorted(
        {f"{'/'.join(r['key'].values())} {n}" for r in results for n, k in r["n_speakers"].items() if k == 1}
    )  # every one: a partial list reads as the whole
    return {
        "id": "subgroup-gaps",
        "title": "Subgroup EER gaps with intervals",
        "status": "info",
        "lines": [
            "Each subgroup's EER at its own threshold and its gap to the reference subgroup (estimate [95% interval]), "
            "from the same two-way speaker draws as the contrasts; the speakers behind each subgroup are counted.",
            *(
                [
                    f"{len(single)} subgroup(s) of one speaker get no interval, and neither does a gap or range "
                    f"they take part in (a value of that speaker, not of a population): {'; '.join(single)}."
                ]
                if single
                else []
            ),
        ],
        "table": rows,
    }


def fixed_threshold_section(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Subgroup FAR and FRR at one common threshold, beside each subgroup's own-threshold EER (the paper's gaps)."""
    rows = [
        {
            **result["key"],
            "subgroup": subgroup,
            "threshold": _threshold_text(result),
            "EER (own threshold)": _interval_text(values["eer"]),
            "FAR (common)": _interval_text(values["far"]),
            "FRR (common)": _interval_text(values["frr"]),
            "trials": values["n_target"] + values["n_nontarget"],
        }
        for result in results
        for subgroup, values in sorted(result.get("subgroups", {}).items())
    ]
    skipped = [f"{'/'.join(result['key'].values())}: {result['skipped']}" for result in results if "skipped" in result]
    zero = sum(
        1
        for result in results
        for values in result.get("subgroups", {}).values()
        for rate in ("far", "frr")
        if "exact_bound" in (values.get(rate) or {})
    )
    return {
        "id": "fixed-threshold-subgroups",
        "title": "Subgroup error rates at one common threshold",
        "status": "info",
        "lines": [
            "Per-subgroup EERs compare separately optimised operating points; a deployment runs at one threshold. "
            "Here the threshold is chosen on development speakers disjoint from the evaluated ones, and each "
            "subgroup's FAR and FRR at it are shown beside its own EER (estimate [95% interval]).",
            "Intervals resample the development and the evaluation speakers on both sides of each trial, and each "
            "resample chooses its own threshold on its development trials, so the threshold's uncertainty is in the "
            "FAR and FRR intervals (the threshold column gives its 95% range). A subgroup of one speaker gets no "
            f"interval. The analysis needs {MIN_DEV_SPEAKERS} development speakers per class (declared minimum).",
            *(
                [
                    f"{zero} rate(s) count no event (or only events): the bootstrap has nothing to vary there, so the "
                    "exact Clopper-Pearson bound over their trials (taken as independent) is given beside."
                ]
                if zero
                else []
            ),
            *([f"{len(skipped)} setting(s) have no analysis: {'; '.join(skipped)}"] if skipped else []),
        ],
        "table": rows,
    }


def _threshold_text(result: dict[str, Any]) -> str:
    """The point threshold and the range of the resamples' thresholds."""
    draws = result.get("threshold_draws") or {}
    low, high = (format_number(draws.get(key), INTERVAL_DECIMALS) for key in ("low", "high"))
    return f"{format_number(result['threshold'], INTERVAL_DECIMALS)} [{low}, {high}]"


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
    tabled = {str(speaker) for table in bundle.files.corpus_tables.values() for speaker in table["speaker"].dropna()}
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
    get bands (``_band_inputs``).

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
    design_flags, design_section = design_audit(results, contrasts, bundle.files, bundle.trial_list_of, analysis)
    statistics, sections = _statistics(results, contrasts, bundle, analysis, near_chance_eer, det_curves)
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
    scores = _Scores(bundle)
    eer_method, method_note = statistics_eer_method(results, analysis.bootstrap_eer_method)
    inputs, skipped = [], []
    for contrast in contrasts:
        try:
            inputs.append(_contrast_input(contrast, scores, set(analysis.held_out_levels), near_chance_eer, eer_method))
        except (OSError, ValueError, KeyError) as error:
            skipped.append(f"{'/'.join(contrast.records)}: {error}")
    dev_speakers = list(analysis.dev_speakers)
    try:
        settings = _subgroup_inputs(_subgroup_settings(results, scores))
    except (KeyError, ValueError) as error:
        return None, [section | {"status": "failed", "lines": [f"The subgroup records cannot be pooled: {error}."]}]
    fixed = _fixed_threshold_inputs(settings, dev_speakers) if dev_speakers else []
    calibrated, fits = (
        calibration_inputs(
            _scored_rows(results, scores), scores.trials, scores.scores, analysis.calibration, dev_speakers
        )
        if analysis.calibration is not None
        else ([], {})
    )
    spoofing = _spoofing_inputs(_scored_rows(results, scores), scores)
    rankings, unranked = _ranking_inputs(_scored_rows(results, scores), scores)
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
            bands=_band_inputs(det_curves, _scored_rows(results, scores), scores),
            menagerie=_menagerie_inputs(contrasts, scores),
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
            "contrasts outside margin (95% bounds)": _count_text(result),
            "mean IE (can cancel)": _interval_text(result["mean_ie"]),
            "|IE| found 80% (one contrast)": format_number(result["power"]["detectable_ie"], INTERVAL_DECIMALS),
            "additive shown if IE 0": _share_text(result["power"]["p_additive_when_additive"]),
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
        *_coverage_statement(statistics),
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
        ranked = rankings_section(statistics["rankings"], _interval_text)
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
        sections.append(calibration_transfer_section(statistics["calibration_transfer"], fits, _interval_text))
    if statistics["spoofing"]:
        sections.append(spoofing_section(statistics["spoofing"]))
    if statistics["calibration_subgroups"]:
        sections.append(subgroup_calibration_section(statistics["calibration_subgroups"], _interval_text))
    if statistics["menagerie"]:
        sections.append(menagerie_section(statistics["menagerie"], _interval_text))
    return statistics, sections


def _spoofing_inputs(rows: list[dict[str, Any]], scores: _Scores) -> list[SpoofingInput]:
    """The spoof cells whose evaluation sets can be formed and name their trials' speakers (the others have no
    metric, which the beyond-EER step says)."""
    sets = spoofing_sets_of_rows(
        rows, scores.trials, scores.scores, lambda record_id: scores.files.scores[record_id].cm_scores
    )
    by_id = {str(row["record_id"]): row for row in rows}
    return [
        SpoofingInput(
            {
                name: cell_text(by_id[record_id].get(name)) or ""
                for name in ("experiment", "model", "condition", "subgroup")
            }
            | {"record_id": record_id},
            evaluated,
        )
        for record_id, evaluated in sets.items()
        if isinstance(evaluated, SpoofingSet) and evaluated.enrol_speaker is not None and evaluated.kinds.size
    ]


MAX_BAND_PANELS = 9  # encoders (panels) of a subgroup DET figure


def _band_inputs(
    det_curves: Sequence[Mapping[str, Any]], rows: list[dict[str, Any]], scores: _Scores
) -> list[BandInput]:
    """The DET curves that get bands: every DET curve of the report's figures (``audit.bundle.curves``: per drawn
    experiment a panel per condition family at its hardest condition, a curve per encoder), and per experiment with
    subgroup records a figure of its own, a panel per encoder (at most ``MAX_BAND_PANELS``), a curve per subgroup at
    the clean condition and at the experiment's hardest for its subgroups (highest mean EER over their records)."""
    keys: list[dict[str, str]] = [
        {name: str(curve.get(name) or "") for name in ("figure", "panel", "series", "record_id")}
        for curve in det_curves
        if "det" in (curve.get("figures") or ())
    ]
    with_subgroup: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if cell_text(row.get("subgroup")) and not cell_text(row.get("complement_of")):
            with_subgroup[str(row["experiment"])].append(row)
    for experiment, members in sorted(with_subgroup.items()):
        eers: dict[str, list[float]] = defaultdict(list)
        for row in members:
            eer = row.get("eer")
            if not is_reference(row) and isinstance(eer, float | int) and np.isfinite(eer):
                eers[str(row["condition"])].append(float(eer))
        hardest = max(sorted(eers), key=lambda condition: float(np.mean(eers[condition]))) if eers else None
        models = sorted({str(row["model"]) for row in members})[:MAX_BAND_PANELS]
        seen = set()
        for row in sorted(members, key=lambda row: str(row["record_id"])):
            style = "clean" if is_reference(row) else str(row["condition"])
            place = (str(row["model"]), str(row["subgroup"]), style)
            if place[0] in models and (style == "clean" or style == hardest) and place not in seen:
                seen.add(place)
                keys.append(
                    {"figure": f"{experiment} subgroups", "panel": place[0], "series": place[1], "style": style,
                     "record_id": str(row["record_id"])}
                )  # fmt: skip
    inputs = []
    for key in keys:
        record = key["record_id"]
        if record in scores.files.scores and record in scores.trial_list:
            columns = scores.columns(record)
            inputs.append(
                BandInput(
                    key, scores.scores(record), columns["label"] == 1, columns["enrol_speaker"], columns["test_speaker"]
                )
            )
    return inputs


RANKING_KEY = ("experiment", "corpus", "condition", "enrol_condition", "test_condition", "subgroup")


def _ranking_inputs(rows: list[dict[str, Any]], scores: _Scores) -> tuple[list[RankingInput], list[str]]:
    """One setting per experiment, corpus, condition (enrolment and test condition) and subgroup: its encoders'
    records on one trial list (a setting whose encoders used several lists is split by list, each named); and the
    records left out, a second record of one encoder in one setting (the pairs compare encoders, not records)."""
    settings: dict[tuple[tuple[str, str], ...], dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    left_out = []
    for row in rows:
        record = str(row["record_id"])
        key = tuple((name, cell_text(row.get(name)) or "") for name in RANKING_KEY)
        if settings[key][scores.trial_list[record]].setdefault(str(row["model"]), record) != record:
            left_out.append(record)
    inputs = []
    for key, lists in sorted(settings.items()):
        for list_id, records in sorted(lists.items()):
            columns = scores.columns(next(iter(records.values())))
            named = {name: value for name, value in key if value} | ({"trial_list": list_id} if len(lists) > 1 else {})
            inputs.append(
                RankingInput(
                    key=named,
                    scores={model: scores.scores(record) for model, record in records.items()},
                    labels=columns["label"],
                    enrol_speaker=columns["enrol_speaker"],
                    test_speaker=columns["test_speaker"],
                    records=records,
                )
            )
    return inputs, left_out


def spoofing_section(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The spoof cells' spoofing-aware metrics with their intervals."""
    table = [
        {
            **{name: row["key"][name] for name in ("experiment", "model", "condition", "subgroup") if row["key"][name]},
            **{name: _interval_text(row[name]) if "estimate" in row[name] else "n/a" for name in SPOOFING_COLUMNS},
            "trials": row["n_trials"],
        }
        for row in rows
    ]
    return {
        "id": "spoofing-intervals",
        "title": "Spoofing-aware metrics with intervals",
        "status": "info",
        "lines": [
            "Per spoof cell (its targets and spoofs, its genuine companion's bona fide non-targets): SV-, SPF- and "
            "SASV-EER and the countermeasure's EER (rocch), a-DCF, min t-DCF and the concurrent t-EER, estimate "
            "[95% interval] from the same two-way speaker draws as the contrasts (percentile). Their coverage has "
            "not been measured by simulation: read them as the spread the speakers give, not as a checked 95%.",
        ],
        "table": table,
    }


def _count_text(family: dict[str, Any]) -> str:
    """A family's bounds on its count of contrasts outside the margin: ``3 to 7``; ``0 to 24 (cannot tell)`` when
    they run from none to every tested contrast; the contrasts whose verdict was withheld (near chance) counted
    apart, since the bounds say nothing of them."""
    low, high = family["n_outside_margin"]["low"], family["n_outside_margin"]["high"]
    untested = family["n_not_tested"]
    cannot_tell = low == 0 and high == family["n_contrasts"] - untested and high > 0
    return (
        f"{low} to {high}"
        + (" (cannot tell)" if cannot_tell else "")
        + (f" of the tested; {untested} not tested (verdict withheld)" if untested else "")
    )


def _share_text(share: float | None) -> str:
    return "-" if share is None else f"{share:.0%}"


def _coverage_statement(statistics: dict[str, Any]) -> list[str]:
    """One statement of what coverage these intervals reach: the matched simulations' where the audit ran them
    (contrasts on fewer than ``FEW_SPEAKERS`` speakers, with their Monte-Carlo error), else DESIGN section 4's row
    for this variant and about this many speakers (none for a level the table does not give). Never both: the
    table's design is not this audit's, and two figures for one interval contradict each other."""
    warnings = statistics.get("coverage_warnings") or []
    if warnings:
        return [" ".join(warnings)]
    row = statistics.get("measured_coverage")
    if row is None:
        return []
    return [
        f"Measured coverage of these 95% intervals in {row['eer_method']} at {row['n_speakers']} speakers (the "
        f"simulated count at or below this audit's median of {row['median_speakers']} speakers per contrast; "
        f"{row['n_datasets']:,} simulated datasets with speaker effects on both sides and unequal trials per "
        f"speaker, DESIGN section 4): single EER {row['clean']:.3f} (Monte-Carlo SE {row['clean_se']:.3f}), "
        f"IE {row['ie']:.3f} ({row['ie_se']:.3f}), subgroup gap {row['gap']:.3f} ({row['gap_se']:.3f})."
    ]


def _scored_rows(results: pd.DataFrame, scores: _Scores) -> list[dict[str, Any]]:
    """The results rows whose verified scores and trial list the statistics have."""
    rows = row_dicts(results)
    return [
        row
        for row in rows
        if str(row["record_id"]) in scores.files.scores and str(row["record_id"]) in scores.trial_list
    ]


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


def _menagerie_inputs(
    contrasts: Sequence[Contrast], scores: _Scores
) -> list[tuple[SpeakerRecord, list[SpeakerRecord]]]:
    """Per clean reference record of a contrast without subgroup (sorted), its record and those of the compound
    cells (both factors on: each contrast's ``ab`` term) it is the reference of, each once."""
    compound: dict[str, dict[str, Contrast]] = defaultdict(dict)
    for contrast in contrasts:
        clean, *_, both = contrast.records
        if not contrast.subgroup and not contrast.reference:
            compound[clean].setdefault(both, contrast)

    def record(record_id: str, contrast: Contrast, condition: str) -> SpeakerRecord:
        columns = scores.columns(record_id)
        key = {"experiment": contrast.experiment, "model": contrast.model, "corpus": contrast.corpus,
               "condition": condition, "record_id": record_id}  # fmt: skip
        labels = columns["label"] == 1
        return SpeakerRecord(
            key,
            scores.scores(record_id),
            labels,
            columns["enrol_speaker"],
            columns["test_speaker"],
            columns.get("test_utt"),
        )

    pairs = []
    for clean, cells in sorted(compound.items()):
        if clean not in scores.files.scores or clean not in scores.trial_list:
            continue
        first = next(iter(cells.values()))
        stressed = [
            record(both, contrast, f"{contrast.level_a} x {contrast.level_b}")
            for both, contrast in sorted(cells.items())
            if both in scores.files.scores and both in scores.trial_list
        ]
        pairs.append((record(clean, first, "clean"), stressed))
    return pairs
