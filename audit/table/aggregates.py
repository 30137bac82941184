"""The paper's summary tables recomputed from a validated results table (DESIGN.md section 6).

Conventions, stated once: means are unweighted; an SD is the sample SD (ddof = 1) and ``None`` below two
values; a gender gap is ``EER(gender=F) - EER(gender=M)`` for rows that agree on experiment, model, corpus and
condition; the clean condition of a gap is the one whose label is in ``clean_labels``. Every function returns
plain lists of dicts (JSON-ready apart from NaN, which the report step replaces by null).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from audit.table.contrasts import Contrast, ContrastSet, Term, measured_terms

_SNR_PATTERNS = (
    re.compile(r"snr\s*[=:_]?\s*([-+]?\d+(?:\.\d+)?)\s*(?:db)?", re.IGNORECASE),
    # A sign right after a letter or digit is a separator (``babble-20dB`` is 20 dB), elsewhere it is a sign.
    re.compile(r"((?:(?<![A-Za-z0-9])[-+])?\d+(?:\.\d+)?)\s*db\b", re.IGNORECASE),
)
_GENDER = re.compile(r"^\s*gender\s*=\s*([FM])\s*$", re.IGNORECASE)


def mean_sd(values: Sequence[float]) -> tuple[float | None, float | None]:
    """Unweighted mean and sample SD (``None`` when undefined)."""
    array = np.asarray(values, dtype=float)
    mean = float(array.mean()) if array.size else None
    sd = float(array.std(ddof=1)) if array.size > 1 else None
    return mean, sd


def correlation(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson r, or ``None`` with fewer than three points or a constant variable."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.size < 3 or a.std() == 0 or b.std() == 0:
        return None
    return float(np.corrcoef(a, b)[0, 1])


def parse_snr(text: str | None) -> tuple[float, str] | None:
    """The SNR in dB written in a label (``babble snr=5``, ``music_5dB``) and the label without it."""
    if text is None:
        return None
    for pattern in _SNR_PATTERNS:
        match = pattern.search(text)
        if match:
            rest = (text[: match.start()] + " " + text[match.end() :]).strip(" _-,;:/|=")
            return float(match.group(1)), re.sub(r"[\s_]+", " ", rest) or "noise"
    return None


def per_experiment(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Table 6: records, mean and SD of EER per experiment."""
    rows = []
    for experiment, group in frame.groupby("experiment", sort=True):
        mean, sd = mean_sd(group["eer"].tolist())
        rows.append({"experiment": experiment, "n_records": len(group), "eer_mean": mean, "eer_sd": sd})
    return rows


def per_encoder(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Table 7: macro EER per model (records -> conditions -> experiments, each level an unweighted mean)."""
    by_condition = frame.groupby(["model", "experiment", "condition"], sort=True)["eer"].mean()
    by_experiment = by_condition.groupby(level=["model", "experiment"]).mean()
    rows = []
    for model, experiments in by_experiment.groupby(level="model", sort=True):
        rows.append({"model": model, "macro_eer": float(experiments.mean()), "n_experiments": len(experiments)})
    return rows


def eer_by_model_condition(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Mean EER per (experiment, condition, model) over its records (subgroups pooled): the cells of the
    encoder x condition heatmap."""
    keys = ["experiment", "condition", "model"]
    table = frame.reindex(columns=[*keys, "eer"]).dropna(subset=keys)
    grouped = table.groupby(keys, sort=True)["eer"]
    return [
        {"experiment": e, "condition": c, "model": m, "eer_mean": float(mean), "n_records": int(n)}
        for (e, c, m), mean, n in zip(grouped.mean().index, grouped.mean(), grouped.size(), strict=True)
    ]


_CELL_KEYS = ["experiment", "corpus", "condition", "subgroup"]


def _cells(frame: pd.DataFrame) -> pd.DataFrame:
    """The cell keys (experiment, corpus, condition, subgroup; an empty key as ""), model and EER of each row."""
    return (
        frame.reindex(columns=[*_CELL_KEYS, "model", "eer"])
        .astype({key: object for key in _CELL_KEYS})
        .fillna({key: "" for key in _CELL_KEYS})
    )


def _model_means(cells: pd.DataFrame) -> pd.Series:
    """Mean EER per cell and model (a model's records in one cell averaged), sorted by cell, then model."""
    return cells.groupby([*_CELL_KEYS, "model"], sort=True)["eer"].mean()


def condition_means(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Tables 20-25: mean and SD of EER per (experiment, corpus, condition, subgroup) across encoders.

    An encoder with several records in one cell (e.g. enrolment x test conditions sharing a label) is averaged
    first, so the SD is across encoders, not records; it is not a confidence interval (the paper says the same).
    Both levels are grouped once over the whole table, not per cell.
    """
    cells = _cells(frame)
    per_model = _model_means(cells)
    model_values: dict[tuple[Any, ...], list[float]] = defaultdict(list)  # one value per encoder, then across them
    for cell, value in zip(per_model.index.droplevel("model"), per_model.tolist(), strict=True):
        model_values[cell].append(value)
    rows = []
    n_records = cells.groupby(_CELL_KEYS, sort=True).size()
    for cell, n in zip(n_records.index, n_records.tolist(), strict=True):
        values = model_values.get(cell, [])
        mean, sd = mean_sd(values)
        named = {key: (value or None) for key, value in zip(_CELL_KEYS, cell, strict=True)}
        rows.append({**named, "n_models": len(values), "n_records": n, "eer_mean": mean, "eer_sd": sd})
    return rows


def emotion_matrix(frame: pd.DataFrame, experiment: str, reference: str) -> list[dict[str, Any]]:
    """Table 8: mean EER per (enrolment, test) condition across models, and its ratio to reference/reference.

    Uses the experiment's rows without a subgroup; a model's records in one cell are averaged first, so the
    mean and SD are across encoders.
    """
    rows = frame[
        (frame["experiment"] == experiment)
        & frame["subgroup"].isna()
        & frame["enrol_condition"].notna()
        & frame["test_condition"].notna()
    ]
    per_model = rows.groupby(["enrol_condition", "test_condition", "model"], sort=True)["eer"].mean()
    cells: list[dict[str, Any]] = []
    for cell_key, values in per_model.groupby(level=["enrol_condition", "test_condition"], sort=True):
        enrol, test = cell_key  # type: ignore[misc,str-unpack]
        mean, sd = mean_sd(values.tolist())
        cells.append(
            {
                "enrol": enrol,
                "test": test,
                "matched": enrol == test,
                "n_models": len(values),
                "eer_mean": mean,
                "eer_sd": sd,
            }
        )
    level = emotion_reference_level({c["enrol"] for c in cells} | {c["test"] for c in cells}, reference)
    reference_mean = next((c["eer_mean"] for c in cells if c["enrol"] == c["test"] == level), None)
    for entry in cells:
        entry["ratio_to_reference"] = entry["eer_mean"] / reference_mean if reference_mean else None
    return cells


_LABEL_PREFIX = re.compile(r"^[A-Za-z]+\s*[-_=:]\s*")


def emotion_reference_level(levels: Iterable[str], reference: str) -> str | None:
    """The condition label that names the reference emotion: ``reference`` itself, else the one label that
    is ``reference`` behind a prefix (the runner writes ``emo-neutral`` for the audit's ``neutral``); None when
    no label or several match (the report then warns: see ``emotion_reference``)."""
    present = set(levels)
    if reference in present:
        return reference
    matches = [level for level in present if _LABEL_PREFIX.sub("", level).lower() == reference.lower()]
    return matches[0] if len(matches) == 1 else None


def emotion_reference(frame: pd.DataFrame, experiment: str, reference: str) -> dict[str, Any]:
    """Which label Table 8's ratios divide by, and a warning when none could be used (never silent)."""
    rows = frame[(frame["experiment"] == experiment) & frame["enrol_condition"].notna()]
    levels = set(rows["enrol_condition"].astype(str)) | set(rows["test_condition"].dropna().astype(str))
    used = emotion_reference_level(levels, reference)
    result: dict[str, Any] = {"experiment": experiment, "declared": reference, "used": used, "warning": None}
    if rows.empty:
        return result  # no Table 8 to make: nothing to warn about
    if used is None:
        result["warning"] = (
            f"No {experiment} condition label names the declared reference emotion {reference!r} (labels: "
            f"{', '.join(sorted(levels))}): Table 8 has no ratios. Declare the reference level (audit "
            "config reference_emotion)."
        )
    elif used != reference:
        result["warning"] = f"The reference emotion {reference!r} is the label {used!r} in this table."
    return result


@dataclass(frozen=True)
class GapPair:
    """One model's F and M records for one condition; ``gap`` = EER(F) - EER(M)."""

    experiment: str
    model: str
    corpus: str
    condition: str
    female: Term
    male: Term

    @property
    def records(self) -> tuple[str, str]:
        return self.female.record_id, self.male.record_id

    @property
    def gap(self) -> float:
        return self.female.eer - self.male.eer


@dataclass(frozen=True)
class UnpairedGender:
    """A condition whose gender rows cannot form one F/M pair (a gender missing, or several rows of one)."""

    experiment: str
    model: str
    corpus: str
    condition: str
    records: dict[str, list[str]]


def gender_gap_pairs(frame: pd.DataFrame) -> tuple[list[GapPair], list[UnpairedGender]]:
    """F/M row pairs per experiment, model, corpus and condition, and the gender rows that do not pair."""
    genders = frame["subgroup"].map(lambda s: None if pd.isna(s) else _gender(str(s)))
    grouped = frame[genders.notna()]
    measured = measured_terms(grouped)
    keyed: dict[tuple[str, str, str, str], dict[str, list[Term]]] = defaultdict(lambda: defaultdict(list))
    columns = ("experiment", "model", "corpus", "condition")
    for label, experiment, model, corpus, condition, gender in zip(
        grouped.index, *(grouped[c] for c in columns), genders[grouped.index], strict=True
    ):
        keyed[(experiment, model, corpus, condition)][gender].append(measured[label])
    pairs, unpaired = [], []
    for (experiment, model, corpus, condition), by_gender in sorted(keyed.items()):
        if len(by_gender["F"]) == 1 and len(by_gender["M"]) == 1:
            pairs.append(GapPair(experiment, model, corpus, condition, by_gender["F"][0], by_gender["M"][0]))
        else:
            found = {g: [t.record_id for t in by_gender[g]] for g in ("F", "M")}
            unpaired.append(UnpairedGender(experiment, model, corpus, condition, found))
    return pairs, unpaired


def _gender(subgroup: str) -> str | None:
    match = _GENDER.match(subgroup)
    return match.group(1).upper() if match else None


def is_clean(condition: str, clean_labels: Iterable[str]) -> bool:
    """Whether ``condition`` is one of the clean labels, whatever its case and surrounding spaces."""
    return condition.strip().lower() in {label.lower() for label in clean_labels}


def _fewest_speakers(terms: Iterable[Term]) -> int | None:
    """The fewest enrolment speakers behind ``terms`` (None when a row does not say): how thin a gap's side is."""
    counts = [term.n_enrol_speakers for term in terms]
    known = [count for count in counts if count is not None]
    return min(known) if known and len(known) == len(counts) else None


def gender_gaps(pairs: Sequence[GapPair], clean_labels: Iterable[str]) -> list[dict[str, Any]]:
    """Table 9: per experiment, corpus and condition: mean and maximum absolute gap, mean signed gap, and the
    fewest enrolment speakers behind a female and a male row (a gap of one speaker per side is that speaker's)."""
    clean = tuple(clean_labels)
    groups: dict[tuple[str, str, str], list[GapPair]] = defaultdict(list)
    for pair in pairs:
        groups[(pair.experiment, pair.corpus, pair.condition)].append(pair)
    rows = []
    for (experiment, corpus, condition), members in sorted(groups.items()):
        absolute = [abs(p.gap) for p in members]
        mean_abs, sd_abs = mean_sd(absolute)
        rows.append(
            {
                "experiment": experiment,
                "corpus": corpus,
                "condition": condition,
                "clean": is_clean(condition, clean),
                "n_models": len(members),
                "gap_abs_mean": mean_abs,
                "gap_abs_sd": sd_abs,
                "gap_abs_max": max(absolute),
                "gap_signed_mean": mean_sd([p.gap for p in members])[0],
                "speakers_f": _fewest_speakers(p.female for p in members),
                "speakers_m": _fewest_speakers(p.male for p in members),
            }
        )
    return rows


def gap_ratios(pairs: Sequence[GapPair], clean_labels: Iterable[str]) -> list[dict[str, Any]]:
    """Table 10: each model's signed gap under a condition divided by its signed clean gap (same corpus), with the
    enrolment speakers behind its female and male rows."""
    clean = tuple(clean_labels)
    clean_pairs = {(p.experiment, p.model, p.corpus): p for p in pairs if is_clean(p.condition, clean)}
    rows = []
    for pair in pairs:
        reference = clean_pairs.get((pair.experiment, pair.model, pair.corpus))
        if reference is None or pair is reference:
            continue
        rows.append(
            {
                "experiment": pair.experiment,
                "model": pair.model,
                "corpus": pair.corpus,
                "condition": pair.condition,
                "gap": pair.gap,
                "clean_gap": reference.gap,
                "ratio": pair.gap / reference.gap if reference.gap != 0 else None,
                "speakers_f": pair.female.n_enrol_speakers,
                "speakers_m": pair.male.n_enrol_speakers,
                "records": [*pair.records, *reference.records],
            }
        )
    return rows


def gap_vs_snr(gaps: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Figure 4: mean absolute gap by noise and labelled SNR, beside the same experiment's clean mean."""
    clean_mean = {(g["experiment"], g["corpus"]): g["gap_abs_mean"] for g in gaps if g["clean"]}
    rows = []
    for gap in gaps:
        parsed = None if gap["clean"] else parse_snr(gap["condition"])
        if parsed is None:
            continue
        snr_db, noise = parsed
        rows.append(
            {
                "experiment": gap["experiment"],
                "corpus": gap["corpus"],
                "noise": noise,
                "snr_db": snr_db,
                "condition": gap["condition"],
                "n_models": gap["n_models"],
                "gap_abs_mean": gap["gap_abs_mean"],
                "gap_abs_sd": gap["gap_abs_sd"],
                "clean_gap_abs_mean": clean_mean.get((gap["experiment"], gap["corpus"])),
            }
        )
    return sorted(rows, key=lambda r: (r["experiment"], r["noise"], -r["snr_db"]))


def summarise_contrasts(
    contrasts: Sequence[Contrast], key: Callable[[Contrast], dict[str, Any]], near_chance_eer: float = 0.4
) -> list[dict[str, Any]]:
    """Per ``key(contrast)``: mean, SD and n of IE, mean |IE|, the mean and maximum prediction, the mean joint
    EER and the mean NLI; then ``n_flagged`` (contrasts carrying a ``Contrast.caveats`` flag, which these
    figures include) and the same IE figures without them (``*_unflagged``).

    NLI (Table 11) = IE / prediction, the deviation relative to the additive prediction, over contrasts with a
    positive prediction only (``n_nli`` of them); undefined otherwise."""
    groups: dict[tuple[tuple[str, Any], ...], list[Contrast]] = defaultdict(list)
    for contrast in contrasts:
        groups[tuple(key(contrast).items())].append(contrast)
    rows = []
    for group_key, members in sorted(groups.items(), key=lambda item: [str(v) for _, v in item[0]]):
        ie_mean, ie_sd = mean_sd([c.ie for c in members])
        predictions = [c.prediction for c in members]
        positive = [c for c in members if c.prediction > 0]
        unflagged = [c for c in members if not c.caveats(near_chance_eer)]
        mean_unflagged, sd_unflagged = mean_sd([c.ie for c in unflagged])
        rows.append(
            {
                **dict(group_key),
                "n": len(members),
                "ie_mean": ie_mean,
                "ie_sd": ie_sd,
                "ie_abs_mean": mean_sd([abs(c.ie) for c in members])[0],
                "prediction_mean": mean_sd(predictions)[0],
                "prediction_max": max(predictions),
                "eer_ab_mean": mean_sd([c.eer_ab for c in members])[0],
                "nli_mean": mean_sd([c.ie / c.prediction for c in positive])[0],
                "n_nli": len(positive),
                "n_flagged": len(members) - len(unflagged),
                "ie_mean_unflagged": mean_unflagged,
                "ie_sd_unflagged": sd_unflagged,
            }
        )
    return rows


def binomial_eer_variance(eer: float, n_target: int, n_nontarget: int) -> float:
    """Sampling variance of an EER as the mean of a miss and a false-alarm rate, both at rate ``eer``.

    ``Var = eer (1 - eer) / 4 * (1/n_target + 1/n_nontarget)``: independent binomial errors, ignoring the
    noise in the threshold itself and speaker dependence, so it is a lower bound.
    """
    return eer * (1.0 - eer) / 4.0 * (1.0 / n_target + 1.0 / n_nontarget)


def expected_coupled_correlation(contrasts: Sequence[Contrast]) -> float | None:
    """Correlation of IE with the prediction expected under exact additivity with independent term noise.

    With true IE = 0 and each measured term ``t`` off by independent noise of variance ``v_t`` (binomial,
    above), ``IE = e_ab - e_a - e_b + e_clean`` and the prediction carries ``e_a + e_b - e_clean``, so
    ``Cov(IE, P) = -mean(v_a + v_b + v_clean)``, ``Var(IE) = mean(v_ab + v_a + v_b + v_clean)`` and ``r = Cov
    / sqrt(Var(IE) * Var(P))``, with ``Var(P)`` the observed variance of the predictions (at least its noise
    part). A negative r is therefore expected from the shared terms alone.
    """
    if len(contrasts) < 3:
        return None
    shared, total = [], []
    for contrast in contrasts:
        v = [binomial_eer_variance(t.eer, t.n_target, t.n_nontarget) for t in contrast.terms]
        shared.append(v[0] + v[1] + v[2])
        total.append(sum(v))
    noise_p = float(np.mean(shared))
    var_p = max(float(np.var([c.prediction for c in contrasts], ddof=1)), noise_p)
    var_ie = float(np.mean(total))
    if var_p == 0 or var_ie == 0:
        return None
    return -noise_p / math.sqrt(var_ie * var_p)


_SIMULATIONS_AT_ONCE = 128  # a few MB of noise at a time, kept in cache
COUPLED_SIMULATIONS = 2000  # per coupled-r range; ie_vs_prediction sizes the draws it makes once on it


def _coupled_r(noise: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """r of IE against the prediction per simulation, from each term's ``noise`` (simulations x contrasts x
    terms)."""
    noise_prediction = noise[..., 1] + noise[..., 2] - noise[..., 0]
    simulated = centres + noise_prediction
    ie = noise[..., 3] - noise_prediction
    simulated -= simulated.mean(axis=1, keepdims=True)
    ie -= ie.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (simulated * ie).sum(axis=1) / np.sqrt((simulated**2).sum(axis=1) * (ie**2).sum(axis=1))


def standard_normals(size: int, seed: int = 0) -> np.ndarray:
    """The first ``size`` standard normal draws of ``seed``'s generator: any shorter prefix is what a call with
    fewer draws would give, so :func:`expected_coupled_range` calls of one seed can share them."""
    return np.random.default_rng(seed).normal(size=size)


def expected_coupled_range(
    contrasts: Sequence[Contrast],
    *,
    n_simulations: int = COUPLED_SIMULATIONS,
    level: float = 0.95,
    seed: int = 0,
    normals: np.ndarray | None = None,
) -> dict[str, float] | None:
    """The spread of the IE-vs-prediction correlation under exact additivity for this many contrasts: per
    simulation, each term gets independent normal noise of its binomial variance, the predictions' centres are
    shrunk to their spread beyond that noise (noise is counted once), and r is taken across contrasts.

    ``normals``: ``standard_normals(n, seed)`` for an ``n`` at least ``n_simulations`` x 4 x the contrasts, drawn
    once for several calls (the result is the same as without)."""
    if len(contrasts) < 3:
        return None
    variances = np.array(
        [[binomial_eer_variance(t.eer, t.n_target, t.n_nontarget) for t in c.terms] for c in contrasts]
    )  # contrasts x (clean, a, b, ab)
    predictions = np.array([c.prediction for c in contrasts])
    noise_p = float(np.mean(variances[:, :3].sum(axis=1)))
    spread = float(np.var(predictions, ddof=1))
    shrink = math.sqrt(max(spread - noise_p, 0.0) / spread) if spread > 0 else 0.0
    centres = predictions.mean() + (predictions - predictions.mean()) * shrink
    size = n_simulations * variances.size
    draws = (standard_normals(size, seed) if normals is None else normals[:size]).reshape(n_simulations, -1, 4)
    scale = np.sqrt(variances)
    steps = range(0, n_simulations, _SIMULATIONS_AT_ONCE)
    r = np.concatenate([_coupled_r(draws[start : start + _SIMULATIONS_AT_ONCE] * scale, centres) for start in steps])
    r = r[np.isfinite(r)]
    if r.size == 0:
        return None
    tail = (1 - level) / 2
    low, median, high = np.quantile(r, [tail, 0.5, 1 - tail])
    return {"median": float(median), "low": float(low), "high": float(high), "level": level}


def ie_vs_prediction(contrasts: Sequence[Contrast], near_chance_eer: float = 0.4) -> dict[str, Any]:
    """Figure 3: IE against the prediction, overall and per (experiment, model family), with the coupled r."""
    groups: dict[tuple[str, str | None], list[Contrast]] = defaultdict(list)
    for contrast in contrasts:
        groups[(contrast.experiment, contrast.model_family)].append(contrast)
    unflagged = [c for c in contrasts if not c.caveats(near_chance_eer)]
    normals = standard_normals(COUPLED_SIMULATIONS * 4 * len(contrasts))  # every range's draws: one stream's prefix
    return {
        "n": len(contrasts),
        "r_observed": correlation([c.prediction for c in contrasts], [c.ie for c in contrasts]),
        "r_expected_additive": expected_coupled_correlation(contrasts),
        "r_expected_additive_range": expected_coupled_range(contrasts, normals=normals),
        "n_flagged": len(contrasts) - len(unflagged),
        "r_observed_unflagged": correlation([c.prediction for c in unflagged], [c.ie for c in unflagged]),
        "r_expected_additive_unflagged": expected_coupled_correlation(unflagged),
        "by_family": [
            {
                "experiment": experiment,
                "model_family": family,
                "n": len(members),
                "r_observed": correlation([c.prediction for c in members], [c.ie for c in members]),
                "r_expected_additive": expected_coupled_correlation(members),
                "r_expected_additive_range": expected_coupled_range(members, normals=normals),
            }
            for (experiment, family), members in sorted(groups.items(), key=lambda item: str(item[0]))
        ],
        "points": [
            {
                "experiment": c.experiment,
                "model": c.model,
                "model_family": c.model_family,
                "prediction": c.prediction,
                "ie": c.ie,
            }
            for c in contrasts
        ],
    }


def inventory(frame: pd.DataFrame, contrasts: Sequence[Contrast], cross_corpus: Iterable[str]) -> list[dict[str, Any]]:
    """Table 5: per experiment, its corpora, encoders, conditions, subgroups, records and trials, and the use
    the audit admits for it (derived from the table: interaction on shared trials, arithmetic only where the
    trial lists are unverifiable, population contrasts, cross-corpus reference excluded from interaction,
    subgroup gaps, condition means)."""
    excluded = set(cross_corpus)
    by_experiment: dict[str, list[Contrast]] = defaultdict(list)
    for contrast in contrasts:
        by_experiment[contrast.experiment].append(contrast)
    rows = []
    for experiment, group in frame.groupby("experiment", sort=True):
        members = by_experiment.get(str(experiment), [])
        uses = []
        if experiment in excluded:
            uses.append("condition means only (reference from another corpus: no interaction)")
        elif any(c.trial_matching == "matched" for c in members):
            uses.append("interaction on shared trials")
        elif any(c.trial_matching == "unverifiable" for c in members):
            uses.append("interaction arithmetic only (trial lists unverifiable)")
        if experiment not in excluded and any(c.trial_matching.startswith("population") for c in members):
            uses.append("population contrasts")
        if "subgroup" in group and group["subgroup"].notna().any():
            uses.append("subgroup gaps")
        rows.append(
            {
                "experiment": experiment,
                "corpora": sorted(group["corpus"].astype(str).unique().tolist()),
                "n_encoders": int(group["model"].nunique()),
                "n_conditions": int(group["condition"].nunique()),
                "n_subgroups": int(group["subgroup"].nunique()) if "subgroup" in group else 0,
                "n_records": len(group),
                "n_trials": int((group["n_target"] + group["n_nontarget"]).sum()),
                "n_contrasts": len(members),
                "admitted_use": "; ".join(uses) or "condition means",
            }
        )
    return rows


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks of ``values``, tied values sharing the mean of their ranks (``pandas.Series.rank()``)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    tied = np.diff(np.r_[starts, values.size])
    ranks = np.empty(values.size)
    ranks[order] = np.repeat(starts + (tied + 1) / 2, tied)
    return ranks


def encoder_agreement(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Table 13: for each pair of encoders, over the cells (experiment, corpus, condition, subgroup) both
    measured, the Spearman rank correlation of their EERs (Pearson's of their average ranks, as
    ``scipy.stats.spearmanr``, without importing scipy.stats) and the mean absolute EER difference."""
    wide = _model_means(_cells(frame)).unstack("model")
    models = list(wide.columns)
    values = wide.to_numpy(float)  # cells x models, NaN where a model did not measure the cell
    measured = ~np.isnan(values)
    rows = []
    for i, first in enumerate(models):
        for j, second in enumerate(models[i + 1 :], start=i + 1):
            both = measured[:, i] & measured[:, j]
            x, y = values[both, i], values[both, j]
            defined = x.size >= 3 and x.std() > 0 and y.std() > 0
            rows.append(
                {
                    "model_1": first,
                    "model_2": second,
                    "n_cells": int(x.size),
                    "spearman": float(np.corrcoef(_average_ranks(x), _average_ranks(y))[0, 1]) if defined else None,
                    "mean_abs_difference": float(np.mean(np.abs(x - y))) if x.size else None,
                }
            )
    return rows


def recompute_aggregates(
    frame: pd.DataFrame,
    contrast_set: ContrastSet,
    pairs: Sequence[GapPair],
    *,
    clean_labels: Sequence[str],
    emotion_experiment: str,
    reference_emotion: str,
    near_chance_eer: float = 0.4,
    cross_corpus_experiments: Sequence[str] = (),
) -> dict[str, Any]:
    """Every aggregate of the report's ``aggregates`` section."""
    contrasts = contrast_set.contrasts
    gaps = gender_gaps(pairs, clean_labels)
    return {
        "inventory": inventory(frame, contrasts, cross_corpus_experiments),
        "per_experiment": per_experiment(frame),
        "per_encoder": per_encoder(frame),
        "condition_means": condition_means(frame),
        "eer_by_model_condition": eer_by_model_condition(frame),
        "emotion_matrix": emotion_matrix(frame, emotion_experiment, reference_emotion),
        "emotion_reference": emotion_reference(frame, emotion_experiment, reference_emotion),
        "encoder_agreement": encoder_agreement(frame),
        "gender_gaps": gaps,
        "gap_ratios": gap_ratios(pairs, clean_labels),
        "contrasts": [c.as_dict() for c in contrasts],
        "contrast_summary": summarise_contrasts(
            contrasts, lambda c: {"experiment": c.experiment, "model_family": c.model_family}, near_chance_eer
        ),
        "contrast_by_model": summarise_contrasts(
            contrasts,
            lambda c: {"experiment": c.experiment, "model": c.model, "model_family": c.model_family},
            near_chance_eer,
        ),
        "contrast_by_setting": summarise_contrasts(
            contrasts,
            lambda c: {
                "experiment": c.experiment,
                "factor_a": c.factor_a,
                "level_a": c.level_a,
                "factor_b": c.factor_b,
                "level_b": c.level_b,
                "model_family": c.model_family,
            },
            near_chance_eer,
        ),
        "ie_vs_prediction": ie_vs_prediction(contrasts, near_chance_eer),
        "gap_vs_snr": gap_vs_snr(gaps),
    }
