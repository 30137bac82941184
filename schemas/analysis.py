"""The ``[analysis]`` table of a run configuration: how the statistics were declared before the run.

One typed reader with bounds for the runner (which refuses a configuration with a problem) and the audit
(which reads the bundle's signed ``config.toml`` and reports each problem as a finding). Keys, in EER units
where a rate: ``equivalence_margin`` (TOST margin) and ``acceptable_error`` (held-out predictions), numbers
strictly between 0 and 1; ``held_out_levels`` and ``dev_speakers``, lists of strings; ``operating_point``,
``"eer"`` or a target FAR strictly between 0 and 1; ``n_resamples``, an integer from 1 to ``N_RESAMPLES_MAX``
(each resample costs memory per trial: ``1e8`` would exhaust it); ``seed``, an integer from 0 to ``SEED_MAX``;
``bootstrap_eer_method`` (default: each row's own method) and ``matched_simulations`` (the few-speaker warning);
``calibration``, a table ``{ method = "logistic" | "platt", fit_on = "dev" }`` (optional ``prior``, a number
strictly between 0 and 1, default 0.5): a linear logistic calibration fitted on the development speakers' trials,
which ``dev_speakers`` must then declare; ``score_normalisation``, a table ``{ method = "as-norm", top_n = N,
cohort = [speakers] }``: adaptive s-norm against the clean utterances of the cohort speakers (never evaluation
speakers: the runner leaves them out of every trial list, nor development speakers), its metrics beside the raw
ones. Issue 41: ``ranking_family``, the family Holm's procedure covers in the paired encoder comparisons
(``"condition"``: all pairs of one condition; ``"experiment"``: all pairs of one experiment's conditions); the
trial-design audit's thresholds ``duration_ratio_warn`` and ``duration_ratio_error`` (median clip duration of one
condition over another's, default 1.3 and 1.6), ``target_ratio_spread`` (target:non-target ratio of one condition
over another's, default 1.5), numbers above 1, and ``impostor_overlap_min`` (the share of impostor speakers the
terms of a contrast share, default 1.0: any difference), a number in (0, 1]; ``menagerie_quantiles``, the quantiles
of the clean reference's speakers that set the menagerie's cuts (``[low, high]``, default ``[0.1, 0.9]``: goats
below the low one of mean target scores, lambs and wolves above the high one of false-accept shares);
``speaker_eer_min_trials``, the least target and non-target trials enrolled on a speaker for its EER under stress
(``[targets, non-targets]``, integers from 1, default ``[10, 20]``: an EER step of at most 0.1). An unknown key
is a problem too: a
misspelt ``n_resample`` would otherwise silently fall back to the default.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Literal

from schemas.eer_method import EER_METHODS, EerMethod
from schemas.errors import Error
from schemas.wording import count

__all__ = [
    "ANALYSIS_KEYS",
    "CALIBRATION_METHODS",
    "CALIBRATION_SPLITS",
    "NORMALISATION_METHODS",
    "N_RESAMPLES_MAX",
    "SEED_MAX",
    "TOP_N_MAX",
    "Analysis",
    "CalibrationDeclaration",
    "NormalisationDeclaration",
    "analysis_from_table",
    "names_without_referent",
    "read_analysis",
]

N_RESAMPLES_MAX = 100_000
SEED_MAX = 2**63 - 1


CALIBRATION_METHODS = ("logistic", "platt")
CALIBRATION_SPLITS = ("dev",)
NORMALISATION_METHODS = ("as-norm",)
RANKING_FAMILIES = ("condition", "experiment")
TOP_N_MAX = 100_000
TRIAL_COUNT_MAX = 10_000_000  # a speaker's trials (speaker_eer_min_trials)


@dataclass(frozen=True)
class CalibrationDeclaration:
    """``[analysis] calibration``: how raw scores become LLRs (``audit.metrics.record_calibration``) and on which
    trials the map is fitted (``dev``: the trials between development speakers, never evaluation trials).
    ``logistic`` is BOSARIS' prior-weighted logistic regression (no map when the scores separate the classes),
    ``platt`` the same with Platt's smoothed targets (a finite map on any two-class set)."""

    method: Literal["logistic", "platt"] = "logistic"
    fit_on: Literal["dev"] = "dev"
    prior: float = 0.5


@dataclass(frozen=True)
class NormalisationDeclaration:
    """``[analysis] score_normalisation``: AS-norm (``audit.metrics.normalisation``) with the ``top_n`` closest
    of the cohort speakers' clean utterances; the raw scores and their metrics are kept beside it."""

    cohort: tuple[str, ...]
    top_n: int
    method: Literal["as-norm"] = "as-norm"


@dataclass(frozen=True)
class Analysis:
    """The declared analysis; a key that is absent (or has a problem) keeps its default here."""

    equivalence_margin: float | None = None
    acceptable_error: float | None = None
    held_out_levels: tuple[str, ...] = ()
    dev_speakers: tuple[str, ...] = ()
    operating_point: Literal["eer"] | float = "eer"
    n_resamples: int = 1000
    seed: int = 0
    bootstrap_eer_method: EerMethod | None = None  # None: each row's own method
    matched_simulations: int = 100
    calibration: CalibrationDeclaration | None = None
    score_normalisation: NormalisationDeclaration | None = None
    ranking_family: Literal["condition", "experiment"] = "condition"
    duration_ratio_warn: float = 1.3
    duration_ratio_error: float = 1.6
    target_ratio_spread: float = 1.5
    impostor_overlap_min: float = 1.0
    menagerie_quantiles: tuple[float, float] = (0.1, 0.9)
    speaker_eer_min_trials: tuple[int, int] = (10, 20)


class _InvalidAnalysisError(Error, ValueError):
    """One value's problem, reported as ``analysis.KEY: problem``."""


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_KIND_NAMES = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "a table",
}


def _key(key: str) -> str:
    """``analysis.KEY`` as TOML writes it: bare when it may be, else quoted (so a problem stays one line)."""
    return f"analysis.{key if _BARE_KEY.fullmatch(key) else json.dumps(key)}"


def _shown(value: Any) -> str:
    text = repr(value)
    text = text if len(text) <= 40 else f"{text[:37]}..."
    return f"{_KIND_NAMES.get(type(value), type(value).__name__)} {text}"


def _fraction(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        raise _InvalidAnalysisError(f"expected a number strictly between 0 and 1, got {_shown(value)}")
    return float(value)


def _operating_point(value: Any) -> Literal["eer"] | float:
    if value == "eer" and isinstance(value, str):
        return "eer"
    if isinstance(value, str):
        raise _InvalidAnalysisError(f'expected "eer" or a target FAR strictly between 0 and 1, got {_shown(value)}')
    return _fraction(value)


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise _InvalidAnalysisError(f"expected a list of non-empty strings, got {_shown(value)}")
    return tuple(value)


def _integer(low: int, high: int) -> Callable[[Any], int]:
    def read(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise _InvalidAnalysisError(f"expected an integer from {low:,} to {high:,}, got {_shown(value)}")
        return value

    return read


def _eer_method(value: Any) -> EerMethod:
    if not isinstance(value, str) or value not in EER_METHODS:
        spelled = ", ".join(f'"{method}"' for method in EER_METHODS)
        raise _InvalidAnalysisError(f"expected one of {spelled}, got {_shown(value)}")
    return EerMethod(value)


def _ratio(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 1 < value < float("inf"):
        raise _InvalidAnalysisError(f"expected a finite number above 1, got {_shown(value)}")
    return float(value)


def _share(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise _InvalidAnalysisError(f"expected a number above 0 and at most 1, got {_shown(value)}")
    return float(value)


def _quantile_pair(value: Any) -> tuple[float, float]:
    if not isinstance(value, list) or len(value) != 2:
        raise _InvalidAnalysisError(f"expected a list of two quantiles [low, high], got {_shown(value)}")
    low, high = (_fraction(item) for item in value)
    if not low < high:
        raise _InvalidAnalysisError(f"expected the low quantile below the high one, got {_shown(value)}")
    return low, high


def _trial_counts(value: Any) -> tuple[int, int]:
    if not isinstance(value, list) or len(value) != 2:
        raise _InvalidAnalysisError(f"expected a list of two counts [targets, non-targets], got {_shown(value)}")
    targets, nontargets = (_integer(1, TRIAL_COUNT_MAX)(item) for item in value)
    return targets, nontargets


def _ranking_family(value: Any) -> str:
    if not isinstance(value, str) or value not in RANKING_FAMILIES:
        spelled = ", ".join(f'"{family}"' for family in RANKING_FAMILIES)
        raise _InvalidAnalysisError(f"expected one of {spelled}, got {_shown(value)}")
    return value


def _calibration(value: Any) -> CalibrationDeclaration:
    if not isinstance(value, dict):
        raise _InvalidAnalysisError(f'expected a table {{ method = "logistic", fit_on = "dev" }}, got {_shown(value)}')
    unknown = sorted(set(value) - {"method", "fit_on", "prior"})
    if unknown:
        raise _InvalidAnalysisError(f"unknown key {unknown[0][:40]!r} (known: method, fit_on, prior)")
    for key, allowed in (("method", CALIBRATION_METHODS), ("fit_on", CALIBRATION_SPLITS)):
        if value.get(key) not in allowed or not isinstance(value.get(key), str):
            spelled = ", ".join(f'"{name}"' for name in allowed)
            got = _shown(value[key]) if key in value else "nothing"
            raise _InvalidAnalysisError(f"{key}: expected one of {spelled}, got {got}")
    try:
        prior = _fraction(value.get("prior", 0.5))
    except _InvalidAnalysisError as problem:
        raise _InvalidAnalysisError(f"prior: {problem}") from None
    return CalibrationDeclaration(value["method"], value["fit_on"], prior)


def _score_normalisation(value: Any) -> NormalisationDeclaration:
    expected = '{ method = "as-norm", top_n = N, cohort = [speakers] }'
    if not isinstance(value, dict):
        raise _InvalidAnalysisError(f"expected a table {expected}, got {_shown(value)}")
    unknown = sorted(set(value) - {"method", "top_n", "cohort"})
    if unknown:
        raise _InvalidAnalysisError(f"unknown key {unknown[0][:40]!r} (known: method, top_n, cohort)")
    missing = [key for key in ("method", "top_n", "cohort") if key not in value]
    if missing:
        raise _InvalidAnalysisError(f"{missing[0]}: missing (expected a table {expected})")
    if value["method"] not in NORMALISATION_METHODS or not isinstance(value["method"], str):
        raise _InvalidAnalysisError(f'method: expected "as-norm", got {_shown(value["method"])}')
    readers: tuple[tuple[str, Callable[[Any], Any]], ...] = (("top_n", _integer(2, TOP_N_MAX)), ("cohort", _strings))
    read = {}
    for key, reader in readers:
        try:
            read[key] = reader(value[key])
        except _InvalidAnalysisError as problem:
            raise _InvalidAnalysisError(f"{key}: {problem}") from None
    if not read["cohort"]:
        raise _InvalidAnalysisError("cohort: expected at least one speaker")
    return NormalisationDeclaration(read["cohort"], read["top_n"])


_READERS: dict[str, Callable[[Any], Any]] = {
    "equivalence_margin": _fraction,
    "acceptable_error": _fraction,
    "held_out_levels": _strings,
    "dev_speakers": _strings,
    "operating_point": _operating_point,
    "n_resamples": _integer(1, N_RESAMPLES_MAX),
    "seed": _integer(0, SEED_MAX),
    "bootstrap_eer_method": _eer_method,
    "matched_simulations": _integer(1, 10_000),
    "calibration": _calibration,
    "score_normalisation": _score_normalisation,
    "ranking_family": _ranking_family,
    "duration_ratio_warn": _ratio,
    "duration_ratio_error": _ratio,
    "target_ratio_spread": _ratio,
    "impostor_overlap_min": _share,
    "menagerie_quantiles": _quantile_pair,
    "speaker_eer_min_trials": _trial_counts,
}
ANALYSIS_KEYS: tuple[str, ...] = tuple(_READERS)


def analysis_from_table(table: Any) -> tuple[Analysis, list[str]]:
    """The typed analysis of an already parsed ``[analysis]`` table, and one line per problem."""
    if not isinstance(table, dict):
        return Analysis(), [f"analysis: expected a table, got {_shown(table)}"]
    values: dict[str, Any] = {}
    problems = []
    for key, value in table.items():
        reader = _READERS.get(key)
        if reader is None:
            problems.append(f"{_key(key)}: unknown key (known: {', '.join(_READERS)})")
            continue
        try:
            values[key] = reader(value)
        except _InvalidAnalysisError as problem:
            problems.append(f"{_key(key)}: {problem}")
    if "calibration" in values and not values.get("dev_speakers"):
        needs = f'fit_on = "dev" needs the development speakers ({_key("dev_speakers")})'
        problems.append(f"{_key('calibration')}: {needs}")
        del values["calibration"]
    normalisation = values.get("score_normalisation")
    shared = sorted(set(normalisation.cohort) & set(values.get("dev_speakers", ()))) if normalisation else []
    if shared:
        problems.append(
            f"{_key('score_normalisation')}: cohort: {count(len(shared), 'speaker')} also declared a development "
            f"speaker ({', '.join(name[:40] for name in shared[:5])}): the cohort is left out of every trial list"
        )
        del values["score_normalisation"]
    thresholds = ("duration_ratio_warn", "duration_ratio_error")
    warn, error = (values.get(key, getattr(Analysis, key)) for key in thresholds)
    if warn > error:  # each given one is named, and both keep their defaults
        for key in (key for key in thresholds if key in values):
            problems.append(f"{_key(key)}: the warning ratio {warn} is above the error ratio {error}")
            del values[key]
    return Analysis(**values), problems


def read_analysis(text: str) -> tuple[Analysis, list[str]]:
    """The typed ``[analysis]`` of a configuration's TOML text (defaults when absent), and one line per problem."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return Analysis(), [f"not valid TOML: {error}"]
    except RecursionError:
        return Analysis(), ["not valid TOML: nested too deeply"]
    return analysis_from_table(document.get("analysis", {}))


def names_without_referent(
    analysis: Analysis, *, speakers: Collection[str], levels: Collection[str], speakers_of: str = "the trial lists"
) -> list[str]:
    """One line per declared list that names what the run does not have: ``dev_speakers`` that are no speaker
    of ``speakers`` (those of ``speakers_of``), ``held_out_levels`` that are no level of ``levels`` (its factors).

    Such a name would make the report describe a threshold chosen on, or settings held out by, nothing at all.

    >>> names_without_referent(Analysis(dev_speakers=("a", "zz")), speakers={"a", "b"}, levels=())
    ['analysis.dev_speakers: 1 name is no speaker of the trial lists: zz']
    """
    problems = []
    for key, declared, known, what in (
        ("dev_speakers", analysis.dev_speakers, speakers, f"speaker of {speakers_of}"),
        ("held_out_levels", analysis.held_out_levels, levels, "factor level of the experiments"),
    ):
        unknown = [name for name in declared if name not in known]
        if unknown:
            shown = ", ".join(name[:40] for name in unknown[:10]) + (", ..." if len(unknown) > 10 else "")
            problems.append(
                f"{_key(key)}: {count(len(unknown), 'name')} {'is' if len(unknown) == 1 else 'are'} no {what}: {shown}"
            )
    return problems
