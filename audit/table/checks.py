"""The findings a results table alone can show (DESIGN.md section 5), thresholds declared in one place.

Each ``flag_*`` function looks at one thing and returns a :class:`~audit.table.findings.Flag` (or ``None`` when
there is nothing to say): a stable id, a severity, the record ids concerned and one plain sentence. Thresholds
live in :class:`AuditConfig`, which the report prints, so a reader knows which values produced the flags.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from audit.table.aggregates import GapPair, UnpairedGender, emotion_reference_level, is_clean
from audit.table.contrasts import Contrast, ContrastSet, IncompleteContrast
from schemas import PAPER_EXPERIMENT_PATTERN, Flag, Severity, ValidatedResults, count

# The 17 experiments of the benchmark (E09, E12, E19 are absent and E21 was removed).
BENCHMARK_EXPERIMENTS = tuple(f"E{n:02d}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 13, 14, 15, 16, 17, 18, 20))


@dataclass(frozen=True)
class AuditConfig:
    """Every declared threshold and label convention of the audit (written into the report)."""

    chance_eer: float = 0.5  # an EER above this is worse than chance
    near_chance_eer: float = 0.4  # a prediction or term at or above this is near chance
    percent_scale_above: float = 1.0  # an EER above this cannot be a fraction
    ratio_denominator_min: float = 0.005  # |denominator| below this makes a ratio unstable
    reference_level: str = "none"  # the level of a factor that means "not applied"
    clean_labels: tuple[str, ...] = ("clean",)  # condition labels of the clean gender-gap reference
    emotion_experiment: str = "E01"
    reference_emotion: str = "neutral"
    cross_corpus_experiments: tuple[str, ...] = ("E15", "E18")  # reference from another corpus by design
    expected_experiments: tuple[str, ...] = BENCHMARK_EXPERIMENTS
    expected_models: tuple[str, ...] = ()  # empty: every model label found in the table
    provenance_columns: tuple[str, ...] = ("checkpoint_blake3", "run_id", "trial_list_id")
    # encoder label -> corpora its weights were trained on (from the roster, ``audit verify --roster``)
    training_corpora: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            key: list(value) if isinstance(value, tuple) else dict(value) if isinstance(value, Mapping) else value
            for key, value in asdict(self).items()
        }


def _ids(frame: pd.DataFrame) -> tuple[str, ...]:
    return tuple(frame["record_id"].astype(str))


def _unique(records: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(records))


def _setting(contrast: Contrast) -> str:
    group = f" {contrast.subgroup}" if contrast.subgroup else ""
    return (
        f"{contrast.experiment} {contrast.model}{group} {contrast.factor_a}={contrast.level_a} x "
        f"{contrast.factor_b}={contrast.level_b}"
    )


def flag_schema(validated: ValidatedResults) -> Flag | None:
    """Every schema failure; rows with one are left out of everything downstream."""
    if not validated.failures:
        return None
    failures = [f.as_dict() for f in validated.failures]
    if validated.missing_required:
        message = (
            f"Required columns are missing ({', '.join(validated.missing_required)}), so nothing can be "
            f"recomputed; {len(failures)} schema failures in all."
        )
    else:
        message = (
            f"{count(len(failures), 'schema failure')} in {count(validated.n_invalid_rows, 'row')}: every "
            "row with a failure is left out of the aggregates."
        )
    records = _unique([f.record_id for f in validated.failures if f.record_id is not None])
    return Flag(
        "schema",
        Severity.ERROR,
        message,
        records,
        {"failures": failures, "missing_columns": validated.missing_required},
    )


def flag_percent_scale(frame: pd.DataFrame, config: AuditConfig) -> Flag | None:
    """EERs above 1 are percentages, not fractions: reported, never rescaled, and left out of aggregates."""
    rows = frame[frame["eer"] > config.percent_scale_above]
    if rows.empty:
        return None
    return Flag(
        "percent-scale",
        Severity.ERROR,
        f"{count(len(rows), 'row')} with an EER above {config.percent_scale_above:g} (percent-like): EERs "
        "must be fractions; nothing was rescaled and these rows are left out of the aggregates.",
        _ids(rows),
        {"max_eer": float(rows["eer"].max())},
    )


def flag_eer_above_chance(frame: pd.DataFrame, config: AuditConfig) -> Flag | None:
    """EERs between chance and 1: kept as measured (the legacy routine neither clips nor reverses scores)."""
    rows = frame[(frame["eer"] > config.chance_eer) & (frame["eer"] <= config.percent_scale_above)]
    if rows.empty:
        return None
    return Flag(
        "eer-above-chance",
        Severity.WARNING,
        f"{count(len(rows), 'row')} with an EER above chance ({config.chance_eer:g}), kept as measured: "
        "chance is not an upper bound, so contrasts on these rows are not evidence of saturation.",
        _ids(rows),
        {"max_eer": float(rows["eer"].max())},
    )


def flag_poorly_calibrated(frame: pd.DataFrame) -> Flag | None:
    """Rows whose ``act_dcf`` exceeds 1: at the Bayes threshold their calibrated LLRs cost more than the better of
    accepting and rejecting everyone, which needs no scores (minDCF is at most 1 by definition)."""
    if "act_dcf" not in frame:
        return None
    rows = frame[pd.to_numeric(frame["act_dcf"], errors="coerce") > 1.0]
    if rows.empty:
        return None
    return Flag(
        "poorly-calibrated",
        Severity.WARNING,
        f"{count(len(rows), 'row')} with an actDCF above 1, worse than deciding without the scores: the declared "
        "calibration does not transfer to these records (see the calibration-transfer section).",
        _ids(rows),
        {"max_act_dcf": float(pd.to_numeric(rows["act_dcf"]).max())},
    )


def flag_near_chance_prediction(contrasts: Sequence[Contrast], config: AuditConfig) -> Flag | None:
    """Contrasts whose additive prediction, or one of whose terms, is at or above ``near_chance_eer``."""
    cases = [c for c in contrasts if "near-chance-prediction" in c.caveats(config.near_chance_eer)]
    if not cases:
        return None
    return Flag(
        "near-chance-prediction",
        Severity.WARNING,
        f"{count(len(cases), 'contrast has', 'contrasts have')} an additive prediction or a term at or "
        f"above {config.near_chance_eer:g}; near chance the EER scale is not additive, so their IE says "
        "little about interaction.",
        _unique([r for c in cases for r in c.records]),
        {
            "contrasts": [
                {
                    "setting": _setting(c),
                    "prediction": c.prediction,
                    "max_term": max(c.eer_clean, c.eer_a, c.eer_b, c.eer_ab),
                }
                for c in cases
            ]
        },
    )


def flag_coupled_correlation(contrasts: Sequence[Contrast], ie_vs_prediction: dict[str, Any]) -> Flag | None:
    """Any IE-vs-prediction correlation is coupled: the prediction enters IE with a minus sign.

    The expected value under additivity is ``aggregates.expected_coupled_correlation`` (formula there).
    """
    observed = ie_vs_prediction["r_observed"]
    if observed is None:
        return None
    expected = ie_vs_prediction["r_expected_additive"]
    expected_text = "cannot be estimated" if expected is None else f"is {expected:.3f}"
    return Flag(
        "coupled-correlation",
        Severity.WARNING,
        f"IE and the prediction share terms, so their correlation (r = {observed:.3f} over {len(contrasts)} "
        f"contrasts) is mathematically coupled; under exact additivity with independent binomial noise r "
        f"{expected_text}, and a negative r is not evidence of saturation.",
        _unique([r for c in contrasts for r in c.records]),
        {
            "r_observed": observed,
            "r_expected_additive": expected,
            "by_family": ie_vs_prediction["by_family"],
            "formula": "r = -mean(v_a+v_b+v_clean) / sqrt(mean(v_ab+v_a+v_b+v_clean) * Var(prediction)), "
            "v = eer(1-eer)/4 * (1/n_target + 1/n_nontarget)",
        },
    )


def flag_unstable_ratio(
    gap_ratios: Sequence[dict[str, Any]], emotion_matrix: Sequence[dict[str, Any]], config: AuditConfig
) -> Flag | None:
    """Ratios whose denominator is below ``ratio_denominator_min`` in magnitude, or whose sign flips."""
    cases: list[dict[str, Any]] = []
    records: list[str] = []
    for ratio in gap_ratios:
        reasons = []
        if abs(ratio["clean_gap"]) < config.ratio_denominator_min:
            reasons.append(f"|clean gap| {abs(ratio['clean_gap']):.4g} < {config.ratio_denominator_min:g}")
        if ratio["gap"] * ratio["clean_gap"] < 0:
            reasons.append("the gap changes sign")
        if reasons:
            cases.append(
                {
                    "ratio": "gender gap / clean gender gap",
                    "experiment": ratio["experiment"],
                    "model": ratio["model"],
                    "condition": ratio["condition"],
                    "value": ratio["ratio"],
                    "why": "; ".join(reasons),
                }
            )
            records.extend(ratio["records"])
    level = emotion_reference_level({c["enrol"] for c in emotion_matrix}, config.reference_emotion)
    reference = next((c for c in emotion_matrix if c["enrol"] == c["test"] == level), None)
    if reference is not None and abs(reference["eer_mean"]) < config.ratio_denominator_min:
        cases.append(
            {
                "ratio": "emotion EER / reference EER",
                "experiment": config.emotion_experiment,
                "value": reference["eer_mean"],
                "why": "reference EER below the denominator threshold",
            }
        )
    if not cases:
        return None
    return Flag(
        "unstable-ratio",
        Severity.WARNING,
        f"{count(len(cases), 'ratio has', 'ratios have')} a denominator below "
        f"{config.ratio_denominator_min:g} in magnitude or a sign change; they show sensitivity to the "
        "denominator, not amplification: compare absolute gaps instead.",
        _unique(records),
        {"ratios": cases},
    )


def flag_emotion_reference(reference: dict[str, Any]) -> Flag | None:
    """``missing-reference-level``: Table 8's declared reference emotion matches no condition label, so its
    ratios are empty (or it matched under another label, said as information)."""
    if reference.get("warning") is None:
        return None
    missing = reference.get("used") is None
    return Flag(
        "missing-reference-level",
        Severity.WARNING if missing else Severity.INFO,
        str(reference["warning"]),
        (),
        {"declared": reference.get("declared"), "used": reference.get("used")},
    )


def _incomplete_flag(
    incomplete: Sequence[IncompleteContrast], reason: str, severity: Severity, message: str
) -> Flag | None:
    cases = [i for i in incomplete if i.reason == reason]
    if not cases:
        return None
    return Flag(
        reason,
        severity,
        message.format(n=count(len(cases), "model setting")),
        _unique([r for i in cases for r in i.records]),
        {
            "settings": [
                {
                    "setting": i.describe(),
                    "terms": list(i.problem_terms),
                    "found": {t: [list(pair) for pair in found] for t, found in i.terms.items()},
                }
                for i in cases
            ]
        },
    )


def flag_incomplete_contrasts(contrast_set: ContrastSet) -> list[Flag]:
    """missing-term, cross-corpus-reference and ambiguous-term, one flag each."""
    incomplete = contrast_set.incomplete
    candidates = [
        _incomplete_flag(
            incomplete,
            "missing-term",
            Severity.WARNING,
            "{n} without a measured term: no contrast computed; a missing marginal is never replaced by the reference.",
        ),
        _incomplete_flag(
            incomplete,
            "cross-corpus-reference",
            Severity.WARNING,
            "{n} with a term from another corpus (or in a design declared cross-corpus): "
            "excluded from the interaction tables.",
        ),
        _incomplete_flag(
            incomplete,
            "ambiguous-term",
            Severity.WARNING,
            "{n} with more than one row for a term: no contrast computed.",
        ),
    ]
    return [flag for flag in candidates if flag is not None]


def flag_substituted_reference(contrasts: Sequence[Contrast]) -> Flag | None:
    """A marginal that is the reference: same score file (error), or same EER and trial counts (warning)."""
    cases: list[dict[str, Any]] = []
    certain = False
    for contrast in contrasts:
        clean = contrast.terms[0]
        for term_name, marginal in zip(("a", "b"), contrast.terms[1:3], strict=True):
            same_scores = clean.scores_blake3 is not None and clean.scores_blake3 == marginal.scores_blake3
            same_numbers = (clean.eer, clean.counts) == (marginal.eer, marginal.counts)
            if same_scores or same_numbers:
                certain |= same_scores
                cases.append({
                    "setting": _setting(contrast), "term": term_name,
                    "evidence": "same scores_blake3" if same_scores else "same EER and trial counts",
                    "records": [clean.record_id, marginal.record_id],
                })  # fmt: skip
    if not cases:
        return None
    return Flag(
        "substituted-reference",
        Severity.ERROR if certain else Severity.WARNING,
        f"{count(len(cases), 'marginal term equals its', 'marginal terms equal their')} reference (same "
        "score file, or same EER and trial counts), which is what substituting the reference for a missing "
        "marginal produces; such contrasts measure nothing.",
        _unique([r for case in cases for r in case["records"]]),
        {"terms": cases},
    )


def flag_trial_matching(contrasts: Sequence[Contrast]) -> list[Flag]:
    """unmatched-trials (the terms mix trial lists), population-contrast (a factor selects other utterances, each
    pair of terms sharing a list) and trials-unverifiable (some term names no list)."""
    unmatched = [c for c in contrasts if c.trial_matching == "unmatched"]
    unverifiable = [c for c in contrasts if c.trial_matching == "unverifiable"]
    population = [c for c in contrasts if c.trial_matching.startswith("population")]
    flags = []
    if population:
        flags.append(
            Flag(
                "population-contrast",
                Severity.WARNING,
                f"{count(len(population), 'contrast has', 'contrasts have')} a factor whose levels are different "
                "utterances (a metadata factor such as emotion or age): each level pairs its terms on one trial list, "
                "but IE then compares populations by design, not a controlled interaction on the same pairs.",
                _unique([r for c in population for r in c.records]),
                {"settings": [{"setting": _setting(c), "factor": c.trial_matching} for c in population]},
            )
        )
    if unmatched:
        flags.append(
            Flag(
                "unmatched-trials",
                Severity.ERROR,
                f"{count(len(unmatched), 'contrast combines', 'contrasts combine')} terms scored on "
                "different trial lists, so their IE mixes populations with interaction.",
                _unique([r for c in unmatched for r in c.records]),
                {"settings": [_setting(c) for c in unmatched]},
            )
        )
    if unverifiable:
        flags.append(
            Flag(
                "trials-unverifiable",
                Severity.WARNING,
                f"{count(len(unverifiable), 'contrast has', 'contrasts have')} terms without a trial list "
                "id, so nothing shows that the four terms scored the same trials.",
                _unique([r for c in unverifiable for r in c.records]),
                {"settings": [_setting(c) for c in unverifiable]},
            )
        )
    return flags


def flag_unpaired_gender(unpaired: Sequence[UnpairedGender]) -> Flag | None:
    """Gender rows that give no gap: one gender missing, or several rows for one gender in one condition."""
    if not unpaired:
        return None
    return Flag(
        "unpaired-subgroup",
        Severity.WARNING,
        f"{count(len(unpaired), 'condition has', 'conditions have')} gender rows that do not form one F/M "
        "pair (a gender missing or repeated), so no gap is computed there.",
        _unique([r for u in unpaired for found in u.records.values() for r in found]),
        {
            "conditions": [
                {"where": f"{u.experiment} {u.model} {u.corpus} {u.condition}", **u.records} for u in unpaired
            ]
        },
    )


def flag_budget_mismatch(contrasts: Sequence[Contrast], pairs: Sequence[GapPair], config: AuditConfig) -> Flag | None:
    """Trial counts that differ across contrast terms, between F and M, or between a gap and its clean gap."""
    cases: dict[str, list[dict[str, Any]]] = {"contrast_terms": [], "subgroup_pairs": [], "ratio_terms": []}
    records: list[str] = []
    for contrast in contrasts:
        counts = [term.counts for term in contrast.terms]
        if len(set(counts)) > 1:
            cases["contrast_terms"].append({"setting": _setting(contrast), "counts": [list(c) for c in counts]})
            records.extend(contrast.records)
    clean_pairs = {(p.experiment, p.model, p.corpus): p for p in pairs if is_clean(p.condition, config.clean_labels)}
    for pair in pairs:
        f_counts, m_counts = pair.female.counts, pair.male.counts
        where = f"{pair.experiment} {pair.model} {pair.condition}"
        if f_counts != m_counts:
            cases["subgroup_pairs"].append({"where": where, "F": list(f_counts), "M": list(m_counts)})
            records.extend(pair.records)
        clean = clean_pairs.get((pair.experiment, pair.model, pair.corpus))
        if clean is not None and clean is not pair:
            clean_counts = [list(clean.female.counts), list(clean.male.counts)]
            if clean_counts != [list(f_counts), list(m_counts)]:
                cases["ratio_terms"].append(
                    {"where": where, "condition": [list(f_counts), list(m_counts)], "clean": clean_counts}
                )
                records.extend(pair.records + clean.records)
    total = sum(len(v) for v in cases.values())
    if total == 0:
        return None
    return Flag(
        "budget-mismatch",
        Severity.WARNING,
        f"Trial counts differ across the terms of {count(len(cases['contrast_terms']), 'contrast')}, "
        f"between F and M in {count(len(cases['subgroup_pairs']), 'gap')}, and between "
        f"{count(len(cases['ratio_terms']), 'gap')} and the clean gap, so the compared EERs carry different "
        "sampling noise.",
        _unique(records),
        cases,
    )


def flag_single_speaker_subgroup(frame: pd.DataFrame) -> Flag | None:
    """``single-speaker-subgroup``: a subgroup record whose enrolment side (the side a subgroup restricts) has one
    speaker, by the row's ``n_enrol_speakers``: its EER, and any gap built on it, is that speaker's, with no
    speaker-level uncertainty. Rows without the count are not judged."""
    if "subgroup" not in frame or "n_enrol_speakers" not in frame:
        return None
    single = frame[frame["subgroup"].notna() & (frame["n_enrol_speakers"] == 1).fillna(False).astype(bool)]
    if single.empty:
        return None
    cells = sorted({(str(e), str(s)) for e, s in zip(single["experiment"], single["subgroup"], strict=True)})
    return Flag(
        "single-speaker-subgroup",
        Severity.WARNING,
        f"{count(len(single), 'subgroup record has', 'subgroup records have')} one enrolment speaker: its EER "
        "describes that speaker, not the subgroup's population, and a gap built on it cannot be generalised.",
        _ids(single),
        {"cells": [{"experiment": e, "subgroup": s} for e, s in cells]},
    )


def flag_duplicate_checkpoint(table: pd.DataFrame) -> Flag | None:
    """``duplicate-checkpoint``: two or more encoder labels whose rows record the same checkpoint digest, so
    the labels are not distinct encoders (the paper's roster could not show that they were)."""
    if "checkpoint_blake3" not in table or "model" not in table:
        return None
    digested = table[table["checkpoint_blake3"].notna()]
    digests, models = digested["checkpoint_blake3"].astype(str), digested["model"].map(str)
    n_labels = models.groupby(digests).nunique()  # counted at once; only shared digests list their labels
    on_shared = digests.isin(n_labels.index[n_labels > 1])
    if not on_shared.any():
        return None
    shared = models[on_shared].groupby(digests[on_shared]).agg(lambda m: sorted(set(m)))
    records = digested[on_shared]
    return Flag(
        "duplicate-checkpoint",
        Severity.WARNING,
        f"{count(len(shared), 'checkpoint digest is', 'checkpoint digests are')} recorded under more than one "
        "encoder label: those labels are one encoder, and comparisons between them compare it with itself.",
        _ids(records),
        {"digests": [{"checkpoint_blake3": digest, "labels": names} for digest, names in shared.items()]},
    )


def flag_training_overlap(frame: pd.DataFrame, config: AuditConfig) -> Flag | None:
    """``training-overlap``: a record evaluates an encoder on a corpus the roster declares among its training
    corpora (speakers it may have seen in training: the paper's unaudited pre-training overlap)."""
    declared = {label: {name.lower() for name in names} for label, names in config.training_corpora.items()}
    if not declared:
        return None
    overlap = frame[
        [
            str(corpus).lower() in declared.get(str(model), set())
            for model, corpus in zip(frame["model"], frame["corpus"], strict=True)
        ]
    ]
    if overlap.empty:
        return None
    pairs = sorted({(str(m), str(c)) for m, c in zip(overlap["model"], overlap["corpus"], strict=True)})
    return Flag(
        "training-overlap",
        Severity.WARNING,
        f"{count(len(overlap), 'record evaluates', 'records evaluate')} an encoder on a corpus its training data "
        "included (declared in the roster): its speakers may be known to the encoder, so its EERs can be "
        "optimistic and are not comparable with encoders that never saw them.",
        _ids(overlap),
        {"encoder_corpus": [{"model": m, "corpus": c} for m, c in pairs]},
    )


def provenance_coverage(table: pd.DataFrame, columns: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per provenance column: rows with a value, rows in all, and the fraction (over every row read)."""
    total = len(table)
    coverage = {}
    for column in columns:
        present = int(table[column].notna().sum()) if column in table.columns else 0
        coverage[column] = {
            "present": present,
            "total": total,
            "fraction": present / total if total else None,
        }
    return coverage


def flag_missing_provenance(table: pd.DataFrame, config: AuditConfig) -> Flag | None:
    """Rows without a checkpoint digest, run id or trial list id (coverage as a fraction per column)."""
    coverage = provenance_coverage(table, config.provenance_columns)
    lacking = pd.Series(False, index=table.index)
    for column in config.provenance_columns:
        lacking |= table[column].isna() if column in table.columns else True
    if not lacking.any():
        return None
    parts = [f"{c} {v['present']}/{v['total']}" for c, v in coverage.items()]
    return Flag(
        "missing-provenance",
        Severity.WARNING,
        f"{int(lacking.sum())} of {len(table)} rows lack provenance (present: {', '.join(parts)}); their "
        "results cannot be bound to a checkpoint, run or trial list.",
        _unique(table.loc[lacking, "record_id"].dropna().astype(str).tolist()) if "record_id" in table else (),
        {"coverage": coverage},
    )


def flag_coverage(frame: pd.DataFrame, config: AuditConfig) -> Flag | None:
    """Cells of the paper's expected experiment x model matrix without a usable row.

    Only rows with the paper's experiment ids (E01..E21) are held to that matrix: demonstration experiments
    (D-numbered, the embedded default) and a legacy table's own ids (vox1_O) are not the paper's benchmark.
    """
    frame = frame[frame["experiment"].astype(str).str.fullmatch(PAPER_EXPERIMENT_PATTERN)]
    if frame.empty:
        return None
    models = config.expected_models or tuple(sorted(frame["model"].unique()))
    present = set(zip(frame["experiment"], frame["model"], strict=True))
    missing = [[e, m] for e in config.expected_experiments for m in models if (e, m) not in present]
    unexpected = sorted(set(frame["experiment"]) - set(config.expected_experiments))
    if not missing and not unexpected:
        return None
    expected_cells = len(config.expected_experiments) * len(models)
    return Flag(
        "coverage",
        Severity.WARNING,
        f"{len(missing)} of {expected_cells} expected experiment x model cells have no usable row"
        + (f", and experiments outside the expected set appear ({', '.join(unexpected)})" if unexpected else "")
        + "; summaries over models or experiments are then not over the same set.",
        (),
        {
            "missing_cells": missing,
            "unexpected_experiments": unexpected,
            "models": list(models),
            "experiments": list(config.expected_experiments),
        },
    )


def raise_flags(
    table: pd.DataFrame,
    validated: ValidatedResults,
    valid: pd.DataFrame,
    usable: pd.DataFrame,
    contrast_set: ContrastSet,
    pairs: Sequence[GapPair],
    unpaired: Sequence[UnpairedGender],
    aggregates: dict[str, Any],
    config: AuditConfig,
) -> list[Flag]:
    """Every table-only flag, in a fixed order.

    ``table``: every row read; ``valid``: rows that pass the schema; ``usable``: valid rows on the fraction
    scale, the ones the aggregates use.
    """
    contrasts = contrast_set.contrasts
    candidates = [
        flag_schema(validated),
        flag_percent_scale(valid, config),
        flag_eer_above_chance(usable, config),
        flag_poorly_calibrated(usable),
        flag_near_chance_prediction(contrasts, config),
        flag_coupled_correlation(contrasts, aggregates["ie_vs_prediction"]),
        flag_unstable_ratio(aggregates["gap_ratios"], aggregates["emotion_matrix"], config),
        flag_emotion_reference(aggregates["emotion_reference"]),
        *flag_incomplete_contrasts(contrast_set),
        flag_substituted_reference(contrasts),
        *flag_trial_matching(contrasts),
        flag_unpaired_gender(unpaired),
        flag_single_speaker_subgroup(usable),
        flag_budget_mismatch(contrasts, pairs, config),
        flag_missing_provenance(table, config),
        flag_duplicate_checkpoint(usable),
        flag_training_overlap(usable, config),
        flag_coverage(usable, config),
    ]
    return [flag for flag in candidates if flag is not None]
