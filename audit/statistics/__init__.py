"""Uncertainty and beyond-the-paper statistics for bundles with per-trial scores (issue 7, DESIGN.md 4).

Everything here is pure numpy and returns JSON-able dicts (floats, ints, strings, lists).

**Clusters: two-way speaker bootstrap.** A non-target trial involves two speakers, each with its own effect on
the score, so both are resampled: speakers are drawn with replacement (multiplicities, ``draw_cluster_weights``)
and a trial between speakers s and t counts ``m_s * m_t`` times, a trial of one speaker (a target) ``m_s``
times: every pair whose two speakers are drawn is kept, once per drawn copy of each (the "pigeonhole"
bootstrap of crossed data). Resampling only the enrolment speaker left the test side's effect out and its
intervals under-covered (0.87 for a single EER at 30 speakers). Measured coverage of the 95 % intervals on a
simulation with known truth (``CoverageDesign``: speaker effects on both sides of non-target trials,
speaker-by-condition effects; 1,000 datasets at 30 speakers): single EER 0.93, IE 0.97, subgroup gap 0.96.
The scheme is mildly conservative for IE (the pair-level noise is counted more than once), never narrow.
Given no test speakers, one-way clustering on the enrolment speaker is used and said (``cluster``).

**One draw, shared.** ``bundle_statistics`` draws the speaker multiplicities once, over every speaker of every
contrast and subgroup setting (``SpeakerDraws``), and every term, contrast, encoder, trial list, subgroup gap and
fixed-threshold setting uses the same rows: the four terms of a contrast, family summaries and population
contrasts are resampled jointly. A population contrast (terms
on different trial lists: E13, E14, E17, E20) is resampled through its speakers: a drawn speaker keeps all
its trials in every list.

**EER variant.** Bootstrap draws and their point estimates use one EER variant of ``audit.metrics.point``, named
``eer_method`` in every result (the bundle path takes the rows' own, and a term's point estimate from the
re-scoring of its record's verified scores): ``interp``, ``legacy`` (the paper's routine, bit for bit) or
``rocch`` (BOSARIS' convex hull). For a resample, each equals
``audit.metrics.point.eer`` of the trials repeated as often as their weight (``audit.metrics.weighted_roc``, tested).

**Few speakers.** Below ``FEW_SPEAKERS`` (30) speakers a contrast's result carries the coverage that the same
bootstrap achieved on a matched simulation, and the report warns.

**Intervals** come from the bootstrap draws (``numpy.quantile``, linear interpolation) at the declared ``level``;
``n_resamples`` and ``seed`` are recorded beside them. A single EER and the additive prediction get the
bias-corrected percentile interval (``bias_corrected_interval``: the convex hull EER's finite-sample optimism is
reproduced by its resamples, and the percentile interval under-covered in ``rocch``), differences (IE, gaps) and
fixed-threshold rates the percentile one (``contrasts.BIAS_CORRECTED``; chosen by simulation, DESIGN section 4,
``MEASURED_COVERAGE``). A subgroup of one speaker gets no interval (``withheld``). A draw in which a subset has no
class is undefined (NaN) and counted as ``n_undefined``, never filled. The calibration-transfer metrics and the
spoof cells' metrics have their own rules (``calibration``, ``spoofing``); a family states its power
(``equivalence.family_power``).

**Rankings** (issue 41, ``rankings``): paired encoder comparisons on the same draws, Holm over a declared family, the
minimum detectable difference by simulation on the run's draws, and the macro ranking with intervals.

**DET bands and calibration by subgroup** (issue 41, ``det_bands``, ``calibration``): the report's DET curves with
pointwise bands of the miss rate from the same draws, and each subgroup's ``Cllr - minCllr`` under the declared map
with its difference to the reference subgroup; speakers under stress (``menagerie``): Doddington's categories by a rule
fixed on the clean reference, who changes category in each compound cell, and each speaker's EER with an interval
from the same draws (its impostors; its targets by test utterance) where it has enough trials.
"""

from audit.statistics.bundle import statistics_eer_method, statistics_of_bundle
from audit.statistics.contrasts import ContrastInput, SpeakerDraws, bootstrap_contrast, estimate_with_interval
from audit.statistics.coupling import coupling_under_additivity
from audit.statistics.coverage import MEASURED_COVERAGE, CoverageDesign, measured_coverage, simulated_coverage
from audit.statistics.det_bands import det_band, det_bands, pointwise_band
from audit.statistics.draws import (
    StatisticsInputError,
    basic_interval,
    bias_corrected_interval,
    cluster_codes,
    draw_cluster_weights,
    pair_codes,
    percentile_interval,
)
from audit.statistics.equivalence import family_power, family_summary, held_out_validation, tost_verdict
from audit.statistics.inputs import family_of
from audit.statistics.menagerie import menagerie
from audit.statistics.rankings import RankingInput, p_text, paired_rankings, rankings_section
from audit.statistics.rankings import speaker_ids as ranking_speaker_ids
from audit.statistics.records import ScoredRecord
from audit.statistics.section import small_sample_warnings, statistics_section
from audit.statistics.spoofing import SpoofingInput, spoofing_intervals
from audit.statistics.subgroups import (
    FixedThresholdInput,
    SubgroupInput,
    fixed_threshold_analysis,
    subgroup_gap_intervals,
)
from audit.statistics.wording import fixed_threshold_section, subgroup_gap_section

__all__ = [
    "MEASURED_COVERAGE",
    "ContrastInput",
    "CoverageDesign",
    "FixedThresholdInput",
    "RankingInput",
    "ScoredRecord",
    "SpeakerDraws",
    "SpoofingInput",
    "StatisticsInputError",
    "SubgroupInput",
    "basic_interval",
    "bias_corrected_interval",
    "bootstrap_contrast",
    "cluster_codes",
    "coupling_under_additivity",
    "det_band",
    "det_bands",
    "draw_cluster_weights",
    "estimate_with_interval",
    "family_of",
    "family_power",
    "family_summary",
    "fixed_threshold_analysis",
    "fixed_threshold_section",
    "held_out_validation",
    "measured_coverage",
    "menagerie",
    "p_text",
    "pair_codes",
    "paired_rankings",
    "percentile_interval",
    "pointwise_band",
    "ranking_speaker_ids",
    "rankings_section",
    "simulated_coverage",
    "small_sample_warnings",
    "spoofing_intervals",
    "statistics_eer_method",
    "statistics_of_bundle",
    "statistics_section",
    "subgroup_gap_intervals",
    "subgroup_gap_section",
    "tost_verdict",
]
