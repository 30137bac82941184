"""Run configuration: the corpus, the encoders, the named conditions and the experiment designs of one run.

A configuration is a TOML file (``configs/default.toml`` is the embedded default). It is validated on load and
every problem is one ``InputError`` naming the file and the key. Relative paths resolve against the file's folder;
``~`` and ``$VARS`` are expanded, with ``$INTERBIAS_CACHE`` defaulting to ``~/.cache/interbias-sv``.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from audit.errors import InputError
from audit.metrics import EerMethod
from provenance.digests import Digest, file_digest
from runner.encoders import EncoderSpec

REFERENCE_LEVEL = "none"
CLEAN = "clean"
EXPERIMENT_USES = ("interaction", "mismatch", "subgroup-gap", "descriptive")
FAILURE_POLICIES = ("drop-trial", "fail-run")
EER_METHODS = ("legacy", "rocch", "interp")

OperatorSpec = dict[str, Any]
Chain = tuple[OperatorSpec, ...]


def default_cache_root() -> Path:
    return Path(os.environ.get("INTERBIAS_CACHE", "~/.cache/interbias-sv")).expanduser()


@dataclass(frozen=True)
class Factor:
    """One factor of a factorial design; ``none`` (the reference level) is implied."""

    name: str
    levels: tuple[str, ...]


@dataclass(frozen=True)
class Cell:
    """One condition of an experiment: what is applied to the enrolment and to the test side."""

    condition: str
    enrol_condition: str
    test_condition: str
    enrol_chain: Chain
    test_chain: Chain
    level_a: str | None = None
    level_b: str | None = None


@dataclass(frozen=True)
class ExperimentDesign:
    """An experiment: factorial (factor_a x factor_b) or mismatch (enrolment x test conditions)."""

    id: str
    title: str
    use: str
    target_trials: int
    nontarget_trials: int
    degrade: Literal["test", "both"] = "test"
    factor_a: Factor | None = None
    factor_b: Factor | None = None
    enrol_conditions: tuple[str, ...] = ()
    test_conditions: tuple[str, ...] = ()
    subgroup: str | None = None
    subgroup_side: Literal["both", "enrol"] = "both"

    def cells(self, conditions: dict[str, Chain]) -> list[Cell]:
        """Every condition of the design, the reference first."""
        if self.factor_a is None:
            return [
                Cell(f"{e}->{t}", e, t, conditions[e], conditions[t])
                for e in self.enrol_conditions
                for t in self.test_conditions
            ]
        levels_b = (REFERENCE_LEVEL, *self.factor_b.levels) if self.factor_b else (REFERENCE_LEVEL,)
        cells = []
        for level_a in (REFERENCE_LEVEL, *self.factor_a.levels):
            for level_b in levels_b:
                applied = [level for level in (level_a, level_b) if level != REFERENCE_LEVEL]
                chain: Chain = tuple(spec for level in applied for spec in conditions[level])
                label = "+".join(applied) or CLEAN
                enrol = (label, chain) if self.degrade == "both" else (CLEAN, ())
                cells.append(Cell(label, enrol[0], label, enrol[1], chain, level_a, level_b))
        return cells


@dataclass(frozen=True)
class CorpusChoice:
    name: str
    root: Path
    music: Path | None
    utterances_per_speaker: int | None


@dataclass(frozen=True)
class RunConfig:
    """A validated run configuration."""

    source: Path
    digest: Digest
    raw: dict[str, Any]
    name: str
    seed: int
    eer_method: EerMethod
    failure_policy: str
    p_target: float
    c_miss: float
    c_fa: float
    batch_size: int
    corpus: CorpusChoice
    encoders: tuple[EncoderSpec, ...]
    conditions: dict[str, Chain]
    experiments: tuple[ExperimentDesign, ...]
    analysis: dict[str, Any]


class _Reader:
    """Typed access to a TOML table that raises InputError naming the file and the key."""

    def __init__(self, source: Path, table: dict[str, Any], prefix: str) -> None:
        self.source, self.table, self.prefix = source, table, prefix

    def fail(self, key: str, problem: str) -> InputError:
        return InputError(str(self.source), f"{self.prefix}{key}: {problem}")

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
        if key not in self.table:
            if default is ...:
                raise self.fail(key, "missing required key")
            return default
        value = self.table[key]
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            raise self.fail(key, f"expected {_kind_name(kind)}, got a boolean")
        if not isinstance(value, kind):
            raise self.fail(key, f"expected {_kind_name(kind)}, got {type(value).__name__} {value!r}")
        return value

    def choice(self, key: str, options: tuple[str, ...], default: str | None = None) -> str:
        value = self.get(key, str, default)
        if value not in options:
            raise self.fail(key, f"expected one of {', '.join(options)}, got {value!r}")
        return cast(str, value)

    def positive_int(self, key: str, default: Any = ...) -> int:
        value = self.get(key, int, default)
        if value is not None and value <= 0:
            raise self.fail(key, f"expected an integer > 0, got {value}")
        return cast(int, value)

    def sub(self, key: str, default: Any = ...) -> _Reader:
        return _Reader(self.source, self.get(key, dict, default), f"{self.prefix}{key}.")

    def path(self, key: str, default: Any = ...) -> Path | None:
        value = self.get(key, str, default)
        return None if value is None else _resolve(self.source, value)

    def strings(self, key: str, default: Any = ...) -> tuple[str, ...]:
        values = self.get(key, list, default)
        if not all(isinstance(v, str) for v in values):
            raise self.fail(key, "expected a list of strings")
        return tuple(values)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _resolve(source: Path, value: str) -> Path:
    os.environ.setdefault("INTERBIAS_CACHE", str(default_cache_root()))
    path = Path(os.path.expandvars(value)).expanduser()
    return path if path.is_absolute() else (source.parent / path).resolve()


def load_config(path: Path) -> RunConfig:
    """Read and validate a run configuration; every problem is one InputError."""
    path = Path(path)
    if not path.is_file():
        raise InputError(str(path), "configuration file not found")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise InputError(str(path), f"not valid TOML: {error}") from None
    top = _Reader(path, raw, "")
    run = top.sub("run")
    conditions = _read_conditions(top.sub("conditions"))
    experiments = tuple(
        _read_experiment(_Reader(path, table, f"experiments[{i}]."), conditions)
        for i, table in enumerate(top.get("experiments", list))
    )
    ids = [e.id for e in experiments]
    if len(set(ids)) != len(ids) or not ids:
        raise top.fail("experiments", f"expected at least one experiment with unique ids, got {ids}")
    return RunConfig(
        source=path,
        digest=file_digest(path),
        raw=raw,
        name=run.get("name", str),
        seed=run.get("seed", int),
        eer_method=cast(EerMethod, run.choice("eer_method", EER_METHODS, "rocch")),
        failure_policy=run.choice("failure_policy", FAILURE_POLICIES, "drop-trial"),
        p_target=float(run.get("p_target", (int, float), 0.01)),
        c_miss=float(run.get("c_miss", (int, float), 1.0)),
        c_fa=float(run.get("c_fa", (int, float), 1.0)),
        batch_size=run.positive_int("batch_size", 16),
        corpus=_read_corpus(top.sub("corpus")),
        encoders=_read_encoders(top.sub("encoders")),
        conditions=conditions,
        experiments=experiments,
        analysis=_read_analysis(top.sub("analysis", {})),
    )


def _read_analysis(table: _Reader) -> dict[str, Any]:
    """The ``[analysis]`` declarations the audit uses (see ``audit.bundle_statistics``), type-checked here."""
    margin = table.get("equivalence_margin", (int, float), None)
    if margin is not None and margin <= 0:
        raise table.fail("equivalence_margin", f"expected a margin > 0, got {margin}")
    table.get("acceptable_error", (int, float), None)
    table.strings("held_out_levels", ())
    table.strings("dev_speakers", ())
    point = table.get("operating_point", (str, float), "eer")
    if isinstance(point, str) and point != "eer":
        raise table.fail("operating_point", f'expected "eer" or a target FAR, got {point!r}')
    table.positive_int("n_resamples", 1000)
    table.get("seed", int, 0)
    return dict(table.table)


def _read_corpus(table: _Reader) -> CorpusChoice:
    return CorpusChoice(
        name=table.get("name", str),
        root=cast(Path, table.path("root")),
        music=table.path("music", None),
        utterances_per_speaker=table.positive_int("utterances_per_speaker", None),
    )


def _read_encoders(table: _Reader) -> tuple[EncoderSpec, ...]:
    """The run's labels from the roster (checkpoint paths resolved by the roster, or ``checkpoints_root``)."""
    from runner.encoders import load_roster  # the roster format belongs to the encoders package

    roster_path = cast(Path, table.path("roster"))
    roster = {spec.label: spec for spec in load_roster(roster_path, table.path("checkpoints_root", None))}
    labels = table.strings("labels")
    if not labels:
        raise table.fail("labels", "expected at least one encoder label")
    for label in labels:
        if label not in roster:
            raise table.fail("labels", f"unknown encoder label {label!r} (roster {roster_path}: {sorted(roster)})")
    return tuple(roster[label] for label in labels)


def _read_conditions(table: _Reader) -> dict[str, Chain]:
    from runner.operators import OperatorSpecError, operator_from_spec

    conditions: dict[str, Chain] = {CLEAN: ()}
    for name in table.table:
        specs = table.get(name, list)
        for position, spec in enumerate(specs):
            try:
                operator_from_spec(spec)
            except (OperatorSpecError, TypeError, ValueError) as error:
                raise table.fail(f"{name}[{position}]", str(error)) from None
        conditions[name] = tuple(specs)
    if conditions[CLEAN]:
        raise table.fail(CLEAN, "the clean condition applies no operator")
    return conditions


def _read_experiment(table: _Reader, conditions: dict[str, Chain]) -> ExperimentDesign:
    def known(key: str, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            if name not in conditions:
                raise table.fail(key, f"unknown condition {name!r} (defined: {', '.join(sorted(conditions))})")
        return names

    def factor(key: str) -> Factor | None:
        if key not in table.table:
            return None
        sub = table.sub(key)
        levels = known(f"{key}.levels", sub.strings("levels"))
        if not levels or REFERENCE_LEVEL in levels:
            raise sub.fail("levels", f"expected non-reference levels ({REFERENCE_LEVEL!r} is implied)")
        return Factor(sub.get("name", str), levels)

    experiment_id = table.get("id", str)
    if not (len(experiment_id) == 3 and experiment_id[0] in "ED" and experiment_id[1:].isdigit()):
        raise table.fail("id", f"expected E01..E21 (paper) or D01..D99 (demonstration), got {experiment_id!r}")
    factor_a, factor_b = factor("factor_a"), factor("factor_b")
    enrol = known("enrol_conditions", table.strings("enrol_conditions", ()))
    test = known("test_conditions", table.strings("test_conditions", ()))
    if (factor_a is None) == (not enrol or not test):
        raise table.fail("factor_a", "expected either factor_a (factorial) or enrol_conditions + test_conditions")
    if factor_b is not None and factor_a is None:
        raise table.fail("factor_b", "factor_b needs factor_a")
    return ExperimentDesign(
        id=experiment_id,
        title=table.get("title", str),
        use=table.choice("use", EXPERIMENT_USES),
        target_trials=table.positive_int("target_trials"),
        nontarget_trials=table.positive_int("nontarget_trials"),
        degrade=cast(Literal["test", "both"], table.choice("degrade", ("test", "both"), "test")),
        factor_a=factor_a,
        factor_b=factor_b,
        enrol_conditions=enrol,
        test_conditions=test,
        subgroup=table.get("subgroup", str, None),
        subgroup_side=cast(Literal["both", "enrol"], table.choice("subgroup_side", ("both", "enrol"), "both")),
    )
