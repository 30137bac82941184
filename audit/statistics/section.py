"""The statistics section of a bundle audit: every contrast and subgroup setting from one shared draw."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from audit.metrics import one_thread
from audit.statistics.calibration import CalibrationInput, calibration_statistics
from audit.statistics.contrasts import (
    INTERVAL_RULE,
    ContrastInput,
    DrawCache,
    SpeakerDraws,
    draw_contrast,
    scored_trials,
)
from audit.statistics.coupling import coupling_under_additivity
from audit.statistics.coverage import CoverageDesign, measured_coverage, simulated_coverage
from audit.statistics.det_bands import det_bands
from audit.statistics.draws import StatisticsInputError
from audit.statistics.equivalence import family_summary, held_out_validation, tost_verdict
from audit.statistics.menagerie import (
    MIN_TRIALS,
    QUANTILES,
    SpeakerEerSettings,
    menagerie_or_reason,
)
from audit.statistics.rankings import RankingInput, paired_rankings, ranking_draws
from audit.statistics.rankings import speaker_ids as speaker_ids_of
from audit.statistics.records import ScoredRecord
from audit.statistics.spoofing import SpoofingInput, spoofing_intervals
from audit.statistics.subgroups import (
    FixedThresholdInput,
    SubgroupInput,
    fixed_threshold_analysis,
    subgroup_gap_intervals,
)
from schemas import EerMethod, Forked

# Entry point for the audit of a bundle


def _fixed_threshold_or_reason(
    record: FixedThresholdInput,
    operating_point: Literal["eer"] | float,
    n_resamples: int,
    seed: int,
    level: float,
    eer_method: EerMethod,
    draws: SpeakerDraws | None,
) -> dict[str, Any]:
    """One record's fixed-threshold analysis, or why it has none (e.g. its development trials lack a class):
    one record cannot stop the others, and the reason is written, not dropped."""
    try:
        return fixed_threshold_analysis(
            record,
            operating_point=operating_point,
            n_resamples=n_resamples,
            seed=seed,
            level=level,
            eer_method=eer_method,
            draws=draws,
        )
    except StatisticsInputError as error:
        return {"key": dict(record.key), "skipped": str(error)}


FEW_SPEAKERS = 30  # below this many speakers a contrast's intervals carry a matched-simulation warning


def small_sample_warnings(
    summaries: Sequence[dict[str, Any]], eer_method: EerMethod, level: float, *, n_datasets: int = 100
) -> list[str]:
    """One warning per speaker count below ``FEW_SPEAKERS``, stating the coverage that the same bootstrap
    achieved on a matched simulation (``CoverageDesign`` with that many speakers and the contrasts' median
    target and non-target trials per speaker); each summary gets its ``matched_coverage``."""
    by_size: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for summary in summaries:
        if summary["n_clusters"] < FEW_SPEAKERS:
            by_size[summary["n_clusters"]].append(summary)
    warnings = []
    for n_speakers, members in sorted(by_size.items()):
        design = CoverageDesign(
            n_speakers=max(n_speakers, 2),
            targets_per_speaker=max(1, int(np.median([m["n_target_clean"] for m in members]) // n_speakers)),
            nontargets_per_speaker=max(1, int(np.median([m["n_nontarget_clean"] for m in members]) // n_speakers)),
        )
        achieved = simulated_coverage(
            design, n_datasets=n_datasets, n_resamples=100, level=level, eer_method=eer_method
        )
        for member in members:
            member["matched_coverage"] = achieved
        rates, errors = achieved["coverage"], achieved["mc_se"]
        warnings.append(
            f"Warning: {len(members)} contrast(s) rest on {n_speakers} speakers (fewer than {FEW_SPEAKERS}); on a "
            f"matched simulation ({n_datasets} datasets) the {level:.0%} intervals covered the truth "
            f"{rates['clean']:.0%} of the time for a single EER (Monte-Carlo SE {errors['clean']:.0%}), "
            f"{rates['ie']:.0%} for IE ({errors['ie']:.0%}) and {rates['gap']:.0%} for a subgroup gap "
            f"({errors['gap']:.0%})."
        )
    return warnings


def statistics_section(
    contrasts: Sequence[ContrastInput],
    *,
    margin: float,
    acceptable_error: float | None = None,
    fixed_threshold: Sequence[FixedThresholdInput] = (),
    subgroup_settings: Sequence[SubgroupInput] = (),
    operating_point: Literal["eer"] | float = "eer",
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    alpha: float = 0.05,
    eer_method: EerMethod = EerMethod.INTERP,
    matched_simulations: int = 100,
    calibration: Sequence[CalibrationInput] = (),
    spoofing: Sequence[SpoofingInput] = (),
    rankings: Sequence[RankingInput] = (),
    ranking_family: str = "condition",
    bands: Sequence[ScoredRecord] = (),
    menagerie: Sequence[tuple[ScoredRecord, Sequence[ScoredRecord]]] = (),
    menagerie_quantiles: tuple[float, float] = QUANTILES,
    speaker_eer_min_trials: tuple[int, int] = MIN_TRIALS,
) -> dict[str, Any]:
    """Every issue-7 statistic of a bundle, JSON-able, for ``report.json`` (section ``statistics``).

    ``contrasts``: one :class:`ContrastInput` per contrast with per-trial scores (four terms' score arrays,
    shared labels, enrolment-speaker clusters, optional subgroups, family, held-out marker). ``margin``: the
    practical equivalence margin declared before the run (EER units). ``acceptable_error``: the predeclared
    error for held-out predictions (held-out validation is skipped when None). ``fixed_threshold``: records
    for the common-threshold subgroup analysis. ``subgroup_settings``: pooled subgroup records whose gaps get
    intervals (``subgroup_gap_intervals``). ``matched_simulations``: datasets of the matched simulation
    behind each few-speakers warning. ``calibration``: records under a declared calibration, whose transfer
    metrics get intervals (``audit.statistics.calibration``; the development speakers are drawn too, and each draw
    refits the map). ``spoofing``: the spoof cells' evaluation sets, whose spoofing-aware metrics get intervals
    (``audit.statistics.spoofing``). ``rankings``: the settings whose encoders are compared in pairs, Holm over the
    declared ``ranking_family`` (``audit.statistics.rankings``; a record drawn for a contrast is not drawn again, the
    others are drawn in a forked process beside the contrasts). ``bands``: the DET curves that get pointwise bands
    (``audit.statistics.det_bands``). ``menagerie``: per clean reference record its compound cells, whose speakers
    get the menagerie (by ``menagerie_quantiles``) and per-speaker EERs where a speaker has at least
    ``speaker_eer_min_trials`` (``audit.statistics.menagerie``). The speaker draws are made once, over every speaker
    of every contrast, setting, calibrated record, spoof cell, ranking setting, DET curve and menagerie record, and
    shared by all of them.
    """
    speaker_ids = [
        ids for contrast in contrasts for term in scored_trials(contrast)[0].values() for ids in term.speakers()
    ]
    settings = [*subgroup_settings, *fixed_threshold]
    speaker_ids += [np.asarray(ids) for s in settings for ids in (s.enrol_speaker, s.test_speaker)]
    speaker_ids += [ids for record in calibration for ids in (record.enrol_speaker, record.test_speaker)]
    developed = {id(record.development): record.development for record in calibration if record.development}
    speaker_ids += [ids for dev in developed.values() for ids in (dev.enrol_speaker, dev.test_speaker)]
    speaker_ids += [
        ids
        for cell in spoofing
        for ids in (cell.evaluated.enrol_speaker, cell.evaluated.test_speaker)
        if ids is not None  # the bundle path passes only cells whose lists name their speakers
    ]
    speaker_ids += speaker_ids_of(rankings)
    speaker_ids += [ids for band in bands for ids in (band.enrol_speaker, band.test_speaker)]
    speaker_ids += [
        ids
        for reference, stressed in menagerie
        for record in (reference, *stressed)
        for ids in (record.enrol_speaker, record.test_speaker)
    ]
    shared = SpeakerDraws.of(speaker_ids, n_resamples, seed) if speaker_ids else None
    # The subgroup settings' statistics feed nothing else here: they run beside the contrasts (schemas.Forked), and
    # so do the ranked records' draws, in two halves (the largest part of the statistics at paper scale: one fork
    # would finish after the others), each process's compiled loops on one thread.
    ranked_parts = _two_parts(rankings)
    with (
        one_thread(),
        Forked(
            _settings_statistics,
            subgroup_settings,
            fixed_threshold,
            shared,
            operating_point,
            n_resamples,
            seed,
            level,
            eer_method,
            fork=bool(settings),
        ) as beside,
        Forked(ranking_draws, ranked_parts[0], shared, eer_method, contrasts, fork=bool(rankings and shared)) as ranked,
        Forked(ranking_draws, ranked_parts[1], shared, eer_method, contrasts, fork=bool(rankings and shared)) as more,
    ):
        cache = DrawCache()
        result = _contrast_statistics(
            contrasts,
            shared,
            margin,
            acceptable_error,
            n_resamples,
            seed,
            level,
            alpha,
            eer_method,
            matched_simulations,
            cache,
        )
        result["calibration_transfer"], result["calibration_subgroups"] = (
            calibration_statistics(calibration, shared, level) if shared else ([], [])
        )
        result["spoofing"] = spoofing_intervals(spoofing, shared, level) if shared else []
        result["det_bands"] = det_bands(bands, shared, level) if shared else []
        eers = SpeakerEerSettings(shared, level, eer_method, speaker_eer_min_trials) if shared else None
        result["menagerie"] = [menagerie_or_reason(*pair, menagerie_quantiles, eers) for pair in menagerie]
        # The rankings wait for their draws last: what reads no ranked draw runs here while the fork draws them.
        if rankings and shared:
            cache.merge(ranked.result())
            cache.merge(more.result())
            result["rankings"] = paired_rankings(
                rankings, shared, family=ranking_family, level=level, alpha=alpha, eer_method=eer_method, cache=cache
            )
        result["subgroup_gaps"], result["fixed_threshold"] = beside.result()
    return result


def _two_parts(rankings: Sequence[RankingInput]) -> tuple[list[RankingInput], list[RankingInput]]:
    """The ranked settings in two parts of about equal cost (trials x encoders: each encoder's draws sum every
    trial), for two processes; each part in the settings' order."""
    costs = [np.size(setting.labels) * len(setting.scores) for setting in rankings]
    parts: tuple[list[int], list[int]] = ([], [])
    loads = [0, 0]
    for index in sorted(range(len(rankings)), key=lambda index: -costs[index]):
        lighter = int(loads[1] < loads[0])
        parts[lighter].append(index)
        loads[lighter] += costs[index]
    first, second = (sorted(part) for part in parts)
    return [rankings[index] for index in first], [rankings[index] for index in second]


def _contrast_statistics(
    contrasts: Sequence[ContrastInput],
    shared: SpeakerDraws | None,
    margin: float,
    acceptable_error: float | None,
    n_resamples: int,
    seed: int,
    level: float,
    alpha: float,
    eer_method: EerMethod,
    matched_simulations: int,
    cache: DrawCache,
) -> dict[str, Any]:
    """``statistics_section`` of the contrasts: intervals, verdicts, families, coupling, held-out validation (each
    record's draws kept in ``cache`` for the rankings)."""
    contrast_draws = [draw_contrast(c, n_resamples, seed, level, eer_method, shared, cache) for c in contrasts]
    summaries = [
        {**r.summary, "tost": _tost_unless_near_chance(tost_verdict(r.draws["ie"], margin, alpha), c.caveats)}
        for r, c in zip(contrast_draws, contrasts, strict=True)
    ]
    families: dict[str, list[int]] = defaultdict(list)
    for index, contrast in enumerate(contrasts):
        families[contrast.family].append(index)

    def summary_of(members: list[int]) -> dict[str, Any]:
        return family_summary(
            [contrast_draws[i].estimate["ie"] for i in members],
            np.vstack([contrast_draws[i].draws["ie"] for i in members]),
            [summaries[i]["tost"] for i in members],
            level,
            margin=margin,
            alpha=alpha,
        )

    family_results = {}
    for family, members in sorted(families.items()):
        unflagged = [i for i in members if not contrasts[i].caveats]
        family_results[family] = summary_of(members) | {
            "n_population_contrasts": sum(contrasts[i].population for i in members),
            "n_flagged": len(members) - len(unflagged),
            "unflagged": summary_of(unflagged) if unflagged and len(unflagged) < len(members) else None,
        }
    for summary, contrast in zip(summaries, contrasts, strict=True):
        summary["caveats"] = list(contrast.caveats)
    speakers = int(np.median([summary["n_clusters"] for summary in summaries])) if summaries else 0
    measured = measured_coverage(eer_method, speakers, level) if summaries else None
    result: dict[str, Any] = {
        "coverage_warnings": small_sample_warnings(summaries, eer_method, level, n_datasets=matched_simulations),
        "intervals": INTERVAL_RULE,
        "measured_coverage": measured | {"median_speakers": speakers} if measured else None,
        "eer_method": eer_method,
        "cluster": "enrolment and test speakers (two-way) where test speakers are given, else enrolment speaker",
        "n_resamples": n_resamples,
        "seed": seed,
        "level": level,
        "margin": margin,
        "alpha": alpha,
        "contrasts": summaries,
        "families": family_results,
        "coupling": coupling_under_additivity(
            [r.estimate for r in contrast_draws], [r.draws for r in contrast_draws], level
        ),
    }
    if acceptable_error is not None:
        result["held_out"] = held_out_validation(
            [
                {
                    "model": c.model,
                    "held_out": c.held_out,
                    "prediction": r.estimate["prediction"],
                    "observed": r.estimate["ab"],
                    "key": c.key,
                }
                for c, r in zip(contrasts, contrast_draws, strict=True)
            ],
            acceptable_error,
        )
    return result


NEAR_CHANCE = "near-chance-prediction"


def _tost_unless_near_chance(tost: dict[str, Any], caveats: Sequence[str]) -> dict[str, Any]:
    """The TOST result, its verdict withheld ('undetermined', with the reason) on a contrast flagged near chance:
    an EER near 0.5 has no room to move, so a small IE there says nothing about additivity."""
    if NEAR_CHANCE not in caveats:
        return tost
    return tost | {
        "verdict": "undetermined",
        "verdict_withheld": f"{NEAR_CHANCE}: a term or the prediction is near chance, where IE cannot show additivity",
        "verdict_before_withholding": tost["verdict"],
    }


def _settings_statistics(
    subgroup_settings: Sequence[SubgroupInput],
    fixed_threshold: Sequence[FixedThresholdInput],
    shared: SpeakerDraws | None,
    operating_point: Literal["eer"] | float,
    n_resamples: int,
    seed: int,
    level: float,
    eer_method: EerMethod,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``statistics_section`` of the subgroup settings: their gap intervals and fixed-threshold analyses."""
    gaps = [subgroup_gap_intervals(setting, shared, level, eer_method) for setting in subgroup_settings if shared]
    fixed = [
        _fixed_threshold_or_reason(record, operating_point, n_resamples, seed, level, eer_method, shared)
        for record in fixed_threshold
    ]
    return gaps, fixed
