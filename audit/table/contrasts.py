"""Interaction contrasts: the four terms of a compound setting and the additive prediction they imply.

A design is the rows sharing (experiment, subgroup, factor_a, factor_b); its settings are the joint levels
(a, b) measured for any model, on the joint row's corpus. For each model and setting the terms are the rows at
levels (none, none), (a, none), (none, b) and (a, b)::

    prediction = EER(A) + EER(B) - EER(clean)        IE = EER(A+B) - prediction

A contrast is computed only when all four terms are measured once each on the same corpus. A missing marginal
is never replaced by the reference: the setting is returned as incomplete, with the reason, instead.

Rows with ``complement_of`` (a runner design with ``complement_reference``) measure the complement of a factor A
stratum, level ``other-than-<stratum>``: they are no level of the design's own contrasts. They give the
*complement contrasts*, each stratum against the population it does not overlap::

    clean = (other-than-s, none)   a = (s, none)   b = (other-than-s, b)   ab = (s, b)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

TERMS = ("clean", "a", "b", "ab")
Reason = Literal["missing-term", "cross-corpus-reference", "ambiguous-term"]


@dataclass(frozen=True)
class Term:
    """The values of one measured row that contrasts, gaps and their flags use."""

    record_id: str
    eer: float
    n_target: int
    n_nontarget: int
    model_family: str | None
    trial_list_id: str | None
    scores_blake3: str | None
    n_enrol_speakers: int | None = None  # the enrolment speakers behind the row, when the table says

    @property
    def counts(self) -> tuple[int, int]:
        return self.n_target, self.n_nontarget


def measured_terms(frame: pd.DataFrame) -> dict[Any, Term]:
    """A :class:`Term` per row label of a validated frame with every optional column present."""
    columns = (
        "record_id",
        "eer",
        "n_target",
        "n_nontarget",
        "model_family",
        "trial_list_id",
        "scores_blake3",
        "n_enrol_speakers",
    )
    return {
        label: Term(str(record), float(eer), int(n_target), int(n_nontarget), _text(family), _text(trials),
                    _text(scores), None if pd.isna(speakers) else int(speakers))
        for label, record, eer, n_target, n_nontarget, family, trials, scores, speakers in zip(
            frame.index, *(frame[c].tolist() for c in columns), strict=True
        )
    }  # fmt: skip


TrialMatching = Literal["matched", "population-a", "population-b", "unmatched", "unverifiable"]


def trial_matching(lists: tuple[str | None, ...]) -> TrialMatching:
    """How the trial lists of the (clean, a, b, ab) terms relate.

    ``matched``: one list for all four (a controlled contrast). ``population-a``: factor A selects other utterances
    (a metadata factor such as emotion or age), so (clean, b) share one list and (a, ab) another: the contrast
    compares populations by design. ``population-b`` likewise for factor B. ``unmatched``: any other mix, which
    confounds the interaction with the populations. ``unverifiable``: a term names no list.
    """
    clean, a, b, ab = lists
    if None in lists:
        return "unverifiable"
    if clean == a == b == ab:
        return "matched"
    if clean == b and a == ab:
        return "population-a"
    if clean == a and b == ab:
        return "population-b"
    return "unmatched"


@dataclass(frozen=True)
class Contrast:
    """One complete contrast; ``terms`` are the (clean, a, b, ab) measurements."""

    experiment: str
    model: str
    corpus: str
    subgroup: str | None
    factor_a: str
    level_a: str
    factor_b: str
    level_b: str
    terms: tuple[Term, Term, Term, Term]
    reference: str | None = None  # the complement level (other-than-<level_a>) of a complement contrast

    @property
    def eer_clean(self) -> float:
        return self.terms[0].eer

    @property
    def eer_a(self) -> float:
        return self.terms[1].eer

    @property
    def eer_b(self) -> float:
        return self.terms[2].eer

    @property
    def eer_ab(self) -> float:
        return self.terms[3].eer

    @property
    def records(self) -> tuple[str, ...]:
        return tuple(term.record_id for term in self.terms)

    @property
    def trial_matching(self) -> TrialMatching:
        """How the four terms' trial lists relate (see ``trial_matching``)."""
        return trial_matching(tuple(term.trial_list_id for term in self.terms))

    @property
    def model_family(self) -> str | None:
        """The family the terms agree on (``None`` when absent or inconsistent)."""
        families = {term.model_family for term in self.terms}
        return families.pop() if len(families) == 1 else None

    @property
    def prediction(self) -> float:
        return self.eer_a + self.eer_b - self.eer_clean

    def caveats(self, near_chance_eer: float) -> tuple[str, ...]:
        """The flags this contrast carries that limit what its IE means (the ids of ``audit.table.flags``):
        ``near-chance-prediction`` (the prediction or a term at or above ``near_chance_eer``) and
        ``unmatched-trials`` (the terms mix trial lists)."""
        near = max(self.prediction, *(term.eer for term in self.terms)) >= near_chance_eer
        return (("near-chance-prediction",) if near else ()) + (
            ("unmatched-trials",) if self.trial_matching == "unmatched" else ()
        )

    @property
    def ie(self) -> float:
        return self.eer_ab - self.prediction

    def as_dict(self) -> dict[str, Any]:
        return {
            "experiment": self.experiment,
            "model": self.model,
            "model_family": self.model_family,
            "corpus": self.corpus,
            "subgroup": self.subgroup,
            "factor_a": self.factor_a,
            "level_a": self.level_a,
            "factor_b": self.factor_b,
            "level_b": self.level_b,
            "eer_clean": self.eer_clean,
            "eer_a": self.eer_a,
            "eer_b": self.eer_b,
            "eer_ab": self.eer_ab,
            "prediction": self.prediction,
            "ie": self.ie,
            "records": list(self.records),
            **({"reference": self.reference} if self.reference else {}),
        }


@dataclass(frozen=True)
class IncompleteContrast:
    """A setting without a contrast for one model; ``terms`` maps each term to the (corpus, record) found."""

    experiment: str
    model: str
    corpus: str
    subgroup: str | None
    factor_a: str
    level_a: str
    factor_b: str
    level_b: str
    reason: Reason
    problem_terms: tuple[str, ...]
    terms: dict[str, list[tuple[str, str]]]

    @property
    def records(self) -> tuple[str, ...]:
        return tuple(record for found in self.terms.values() for _, record in found)

    def describe(self) -> str:
        """``E14 m1 [corpus] emotion=angry x noise=babble`` for messages."""
        group = f" {self.subgroup}" if self.subgroup else ""
        return (
            f"{self.experiment} {self.model}{group} [{self.corpus}] "
            f"{self.factor_a}={self.level_a} x {self.factor_b}={self.level_b}"
        )


@dataclass(frozen=True)
class ContrastSet:
    """Every complete contrast, and every setting that could not give one (with the reason)."""

    contrasts: list[Contrast]
    incomplete: list[IncompleteContrast]
    complement: list[Contrast] = field(default_factory=list)  # each stratum against its complement


def _text(value: Any) -> str | None:
    return None if pd.isna(value) else str(value)


def _level(value: Any, reference: str) -> str:
    """A level as text; empty and any spelling of the reference level (``None``) become ``reference``."""
    text = _text(value)
    return reference if text is None or text.lower() == reference else text


def _term(level_a: str, level_b: str, reference: str) -> str:
    a_ref, b_ref = level_a == reference, level_b == reference
    return {(True, True): "clean", (False, True): "a", (True, False): "b", (False, False): "ab"}[(a_ref, b_ref)]


def derive_contrasts(
    frame: pd.DataFrame, reference_level: str = "none", excluded_experiments: Iterable[str] = ()
) -> ContrastSet:
    """All contrasts of ``frame`` (validated rows with every optional column present).

    ``excluded_experiments`` are designs declared cross-corpus (E15, E18 in the benchmark): their settings are
    returned as incomplete with reason ``cross-corpus-reference`` even if the corpus labels agree.
    """
    reference = reference_level.lower()
    excluded = set(excluded_experiments)
    factorial = frame[frame["factor_a"].notna() & frame["factor_b"].notna()]
    complement_rows = factorial["complement_of"].notna() if "complement_of" in factorial else None
    if complement_rows is not None:
        complement = complement_contrasts(factorial, complement_rows, reference)
        factorial = factorial[~complement_rows]
    else:
        complement = []
    measured = measured_terms(factorial)
    # (design, model) -> term -> level pair -> corpus -> measured terms
    found: dict[tuple[Any, ...], dict[str, dict[tuple[str, str], dict[str, list[Term]]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    )
    settings: dict[tuple[Any, ...], set[tuple[str, str, str]]] = defaultdict(set)
    models: dict[tuple[Any, ...], set[str]] = defaultdict(set)
    columns = ["experiment", "model", "corpus", "subgroup", "factor_a", "level_a", "factor_b", "level_b"]
    for label, experiment, model, corpus, subgroup, factor_a, level_a, factor_b, level_b in zip(
        factorial.index, *(factorial[c] for c in columns), strict=True
    ):
        level_a = _level(level_a, reference)
        level_b = _level(level_b, reference)
        design = (experiment, _text(subgroup), factor_a, factor_b)
        term = _term(level_a, level_b, reference)
        found[(design, model)][term][(level_a, level_b)][corpus].append(measured[label])
        models[design].add(model)
        if term == "ab":
            settings[design].add((level_a, level_b, corpus))

    contrasts: list[Contrast] = []
    incomplete: list[IncompleteContrast] = []
    for design in sorted(settings, key=lambda d: tuple(map(str, d))):
        experiment, subgroup, factor_a, factor_b = design
        for model in sorted(models[design]):
            by_term = found[(design, model)]
            for level_a, level_b, corpus in sorted(settings[design]):
                wanted = {
                    "clean": (reference, reference),
                    "a": (level_a, reference),
                    "b": (reference, level_b),
                    "ab": (level_a, level_b),
                }
                by_level = {term: by_term[term].get(levels, {}) for term, levels in wanted.items()}
                same_corpus = {term: per_corpus.get(corpus, []) for term, per_corpus in by_level.items()}
                missing = tuple(term for term in TERMS if not same_corpus[term])
                elsewhere = tuple(term for term in missing if by_level[term])
                ambiguous = tuple(term for term in TERMS if len(same_corpus[term]) > 1)
                reason: Reason | None = None
                problem_terms: tuple[str, ...] = ()
                if ambiguous:
                    reason, problem_terms = "ambiguous-term", ambiguous
                elif elsewhere or (experiment in excluded and not missing):
                    reason, problem_terms = "cross-corpus-reference", elsewhere or ("clean",)
                elif missing:
                    reason, problem_terms = "missing-term", missing
                if reason is not None:
                    terms = {
                        term: [(c, t.record_id) for c, found_terms in by_level[term].items() for t in found_terms]
                        for term in TERMS
                    }
                    incomplete.append(
                        IncompleteContrast(
                            experiment,
                            model,
                            corpus,
                            subgroup,
                            factor_a,
                            level_a,
                            factor_b,
                            level_b,
                            reason,
                            problem_terms,
                            terms,
                        )
                    )
                    continue
                clean, a, b, ab = (same_corpus[term][0] for term in TERMS)
                contrasts.append(
                    Contrast(
                        experiment,
                        model,
                        corpus,
                        subgroup,
                        factor_a,
                        level_a,
                        factor_b,
                        level_b,
                        (clean, a, b, ab),
                    )
                )
    return ContrastSet(contrasts, incomplete, complement)


def complement_contrasts(factorial: pd.DataFrame, is_complement: pd.Series, reference: str) -> list[Contrast]:
    """Each stratum s against its complement: per (design, model, corpus, s, b) with the four rows
    (other-than-s, none), (s, none), (other-than-s, b), (s, b) each measured once; a setting that lacks one, or
    holds one twice, gives no complement contrast (the design's own contrasts report missing terms)."""
    measured = measured_terms(factorial)
    columns = ["experiment", "model", "corpus", "subgroup", "factor_a", "level_a", "factor_b", "level_b"]
    cells: dict[tuple[Any, ...], list[Term]] = defaultdict(list)
    strata: set[tuple[Any, ...]] = set()
    for label, complement, *values in zip(
        factorial.index, is_complement, *(factorial[c] for c in columns), strict=True
    ):
        experiment, model, corpus, subgroup, factor_a, level_a, factor_b, level_b = values
        level_a, level_b = _level(level_a, reference), _level(level_b, reference)
        stratum = str(factorial.at[label, "complement_of"]) if complement else level_a
        design = (experiment, model, corpus, _text(subgroup), factor_a, factor_b, stratum)
        cells[(*design, bool(complement), level_b)].append(measured[label])
        if complement and level_b != reference:
            strata.add((*design, level_b, level_a))
    contrasts = []
    for experiment, model, corpus, subgroup, factor_a, factor_b, stratum, level_b, other in sorted(
        strata, key=lambda key: tuple(map(str, key))
    ):
        design = (experiment, model, corpus, subgroup, factor_a, factor_b, stratum)
        wanted = [(True, reference), (False, reference), (True, level_b), (False, level_b)]
        found = [cells.get((*design, *term), []) for term in wanted]
        if all(len(terms) == 1 for terms in found):
            terms = (found[0][0], found[1][0], found[2][0], found[3][0])
            contrasts.append(
                Contrast(experiment, model, corpus, subgroup, factor_a, stratum, factor_b, level_b, terms, other)
            )
    return contrasts
