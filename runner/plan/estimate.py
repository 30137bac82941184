"""What a configuration will cost before any work (``interbias plan``): utterances, trials, records, embeddings,
disk and time, from declared corpus sizes or the corpora themselves, and measured throughputs."""

from __future__ import annotations

import io
import json
import tempfile
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from provenance import read_regular_file
from runner.cache import CachedEmbedding, EmbeddingCache
from runner.design import ExperimentDesign, RunConfig, select_pool
from runner.operators import Outcome, chain_id
from runner.plan.reconciliation import PaperCounts, reconcile, reconciliation_lines
from runner.plan.records import RecordPlan, listed_trials, plan_run
from schemas import InputError, ScoresSchema

__all__ = [
    "SIZE_KEYS",
    "CorpusSize",
    "PlanEstimate",
    "Tally",
    "Throughput",
    "declared_size",
    "estimate_plan",
    "load_bundle_throughput",
    "load_corpus_sizes",
    "load_throughput",
    "measured_size",
]


@dataclass(frozen=True)
class CorpusSize:
    """A corpus's size: declared (published numbers, ``configs/corpus_sizes.toml``) or read from its folder.

    ``subgroups`` maps a metadata column to its number of values (the subgroups an experiment splits into).
    """

    utterances: int
    speakers: int
    mean_duration_s: float
    subgroups: dict[str, int]
    source: str

    def pool(self, per_speaker: int | None) -> int:
        """Utterances in the run's pool: at most ``per_speaker`` of each speaker (an upper bound when declared)."""
        return self.utterances if per_speaker is None else min(self.utterances, self.speakers * per_speaker)


SIZE_KEYS = {"utterances", "speakers", "mean_duration_s", "subgroups", "source"}


def load_corpus_sizes(path: Path) -> dict[str, CorpusSize]:
    """Declared corpus sizes, one ``[NAME]`` table per corpus (a run's corpus name, or its adapter)."""
    path = Path(path)
    try:
        document = tomllib.loads(read_regular_file(path, "a corpus sizes file (TOML)").decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise InputError(str(path), f"not valid TOML: {error}") from None
    sizes = {}
    for name, table in document.items():
        if not isinstance(table, dict):
            raise InputError(str(path), "expected a table of sizes", column=name)
        unknown = sorted(set(table) - SIZE_KEYS)
        if unknown:
            raise InputError(str(path), f"unknown keys {unknown}; expected {sorted(SIZE_KEYS)}", column=name)
        numbers = {key: table.get(key) for key in ("utterances", "speakers", "mean_duration_s")}
        for key, value in numbers.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise InputError(str(path), f"expected a positive number, got {value!r}", column=f"{name}.{key}")
        subgroups = table.get("subgroups", {})
        if not isinstance(subgroups, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in subgroups.values()
        ):
            raise InputError(str(path), "expected { column = number of values }", column=f"{name}.subgroups")
        if not isinstance(table.get("source"), str) or not table["source"].strip():
            raise InputError(str(path), "expected where the numbers come from", column=f"{name}.source")
        sizes[name] = CorpusSize(
            utterances=int(numbers["utterances"]),  # type: ignore[arg-type]
            speakers=int(numbers["speakers"]),  # type: ignore[arg-type]
            mean_duration_s=float(numbers["mean_duration_s"]),  # type: ignore[arg-type]
            subgroups=dict(subgroups),
            source=table["source"],
        )
    return sizes


def declared_size(config: RunConfig, name: str, sizes: Mapping[str, CorpusSize], source: str) -> CorpusSize:
    """The declared size of the run's corpus ``name``: by its name in the run, else by its adapter."""
    adapter = config.corpora[name].adapter
    found = sizes.get(name) or sizes.get(adapter)
    if found is None:
        raise InputError(source, f"no declared size for corpus {name!r} (adapter {adapter!r})")
    return found


def measured_size(table: pd.DataFrame, pool: pd.DataFrame, subgroup_columns: set[str]) -> CorpusSize:
    """The size of a corpus read from its folder (the pool's mean duration, subgroups as in the pool)."""
    return CorpusSize(
        utterances=len(table),
        speakers=int(table["speaker"].nunique()),
        mean_duration_s=float(pool["duration_s"].mean()) if len(pool) else 0.0,
        subgroups={column: int(pool[column].dropna().nunique()) for column in subgroup_columns if column in pool},
        source="read from the corpus folder",
    )


@dataclass(frozen=True)
class Throughput:
    """Measured encoder speeds: seconds of audio embedded per second, per label (``bench_encoders.py --save``)."""

    audio_seconds_per_second: dict[str, float]
    source: str


def load_throughput(path: Path) -> Throughput:
    """Read a ``bench_encoders.py --save`` file: its batched speed per label, and where it was measured."""
    path = Path(path)
    try:
        document = json.loads(read_regular_file(path, "a bench_encoders.py --save file (JSON)").decode("utf-8"))
        speeds = {
            row["label"]: float(row["batched_utt_per_s"]) * float(row["audio_seconds"]) / float(row["utterances"])
            for row in document["encoders"]
        }
        where = f"{document['device']} {document['dtype']}, {document['machine']}, {document['date']}"
    except (ValueError, KeyError, TypeError) as error:
        raise InputError(str(path), f"not a bench_encoders.py --save file ({error!r})") from None
    return Throughput(speeds, f"{path.name}: {where}")


def load_bundle_throughput(bundle: Path) -> Throughput:
    """The throughput a run measured, per label, from its bundle's ``timings.json``: the clean audio seconds it
    embedded over the seconds that took. A label the run embedded nothing for (all cached) gets no figure.

    The file is read as a bundle file (regular, inside the bundle) but its signature is not checked: a plan is an
    estimate, and ``audit verify --bundle`` is where a bundle is trusted."""
    from schemas import TIMINGS_FILE, BundleFileError, parse_timings, read_bundle_file

    bundle = Path(bundle)
    try:
        data = read_bundle_file(bundle, TIMINGS_FILE)
        figures = parse_timings(TIMINGS_FILE, data)
        document = json.loads(data)
    except BundleFileError as error:
        raise InputError(
            str(bundle / error.name), f"{error.problem} (--throughput-from needs a bundle with timings)"
        ) from None
    speeds = {
        label: row["audio_s"] / row["wall_s"]
        for label, row in figures.items()
        if row["audio_s"] > 0 and row["wall_s"] > 0
    }
    where = f"run {document.get('run_id', '?')}, device {document.get('device', '?')}, {document.get('executor', '?')}"
    return Throughput(speeds, f"{bundle.name}/{TIMINGS_FILE}: {where}")


@dataclass
class Tally:
    """The counts of an experiment, or of the whole run."""

    utterances: int = 0
    trial_lists: int = 0
    trials: int = 0
    records: int = 0
    evaluations: int = 0  # scored trials over all records: each record's trial list, once per record
    embeddings_per_label: int = 0
    operator_realisations: int = 0
    audio_seconds_per_label: float = 0.0
    score_bytes: int = 0


@dataclass(frozen=True)
class _SideGroup:
    """The sides one role of one trial list contributes: ``bound`` distinct utterances at most; ``cap`` the
    utterances they can come from when that is not the corpus's pool (an official list: the whole corpus)."""

    key: tuple[Any, ...]
    corpus: str
    chain: str
    bound: int
    cap: int | None = None


class PlanEstimate:
    """Per experiment and in total: utterances, trial lists, trials, records, embeddings, operator realisations,
    disk and time. ``exact`` says whether the corpora were read (exact counts) or sizes declared (upper bounds
    for utterances and embeddings; trial lists, trials and records are exact either way)."""

    def __init__(self, exact: bool, sizes: dict[str, CorpusSize], pools: dict[str, int]) -> None:
        self.exact = exact
        self.sizes = sizes
        self.pools = pools
        self.experiments: dict[str, Tally] = {}
        self.total = Tally()
        self.labels: dict[str, dict[str, Any]] = {}
        self.reconciliation: dict[str, Any] | None = None  # beside the paper's counts (``reconcile_with``)

    def reconcile_with(self, counts: PaperCounts) -> None:
        """Set the reconciliation of this plan's records and trial evaluations with the paper's ``counts``."""
        self.reconciliation = reconcile(
            counts, {name: (tally.records, tally.evaluations) for name, tally in self.experiments.items()}
        )

    def label_totals(self) -> dict[str, Any]:
        """Over every label: audio hours to embed, compute hours where a throughput is known, the cache's size."""
        known = [row["hours"] for row in self.labels.values() if row["hours"] is not None]
        caches = [row["cache_bytes"] for row in self.labels.values()]
        return {
            "labels": len(self.labels),
            "audio_label_hours": sum(row["audio_hours"] for row in self.labels.values()),
            "compute_hours": sum(known),
            "labels_without_throughput": [label for label, row in self.labels.items() if row["hours"] is None],
            "cache_bytes": None if None in caches else sum(caches),
        }

    def as_dict(self) -> dict[str, Any]:
        """The estimate as JSON-ready data (``interbias plan --json``)."""
        return {
            "mode": "corpora read" if self.exact else "declared sizes (utterances and embeddings are upper bounds)",
            "corpora": {name: {**asdict(size), "pool": self.pools[name]} for name, size in sorted(self.sizes.items())},
            "experiments": {name: asdict(tally) for name, tally in self.experiments.items()},
            "total": asdict(self.total),
            "labels": self.labels,
            "label_totals": self.label_totals(),
            **({"reconciliation": self.reconciliation} if self.reconciliation is not None else {}),
        }

    def lines(self) -> list[str]:
        """The estimate as a readable table."""
        bound = "" if self.exact else "<="
        mode = "from the corpora" if self.exact else "from declared sizes: utterances and embeddings are upper bounds"
        out = [f"plan ({mode})"]
        header = f"  {'experiment':<10} {'utterances':>12} {'lists':>6} {'trials':>9} {'records':>8}"
        out.append(f"{header} {'embeddings/label':>17} {'operator runs':>14} {'audio h/label':>14} {'scores':>9}")
        rows = [*self.experiments.items(), ("total", self.total)]
        for name, t in rows:
            out.append(
                f"  {name:<10} {bound + format(t.utterances, ','):>12} {t.trial_lists:>6,} {t.trials:>9,} "
                f"{t.records:>8,} {bound + format(t.embeddings_per_label, ','):>17} "
                f"{bound + format(t.operator_realisations, ','):>14} "
                f"{bound + format(t.audio_seconds_per_label / 3600, ',.1f'):>14} {_size(t.score_bytes):>9}"
            )
        out.append(f"  {'label':<22} {'dim':>5} {'cache':>9} {'audio s/s':>10} {'time':>10}  throughput from")
        for label, row in self.labels.items():
            cache = "?" if row["cache_bytes"] is None else _size(row["cache_bytes"])
            speed = "?" if row["audio_seconds_per_second"] is None else f"{row['audio_seconds_per_second']:.1f}"
            hours = "no figure" if row["hours"] is None else f"{bound}{row['hours']:,.1f} h"
            out.append(
                f"  {label:<22} {row['dim'] or '?':>5} {cache:>9} {speed:>10} {hours:>10}  "
                f"{row['throughput_source'] or '-'}"
            )
        totals = self.label_totals()
        missing = totals["labels_without_throughput"]
        compute = f"{bound}{totals['compute_hours']:,.1f} h of compute" + (
            f" for the {totals['labels'] - len(missing)} labels with a throughput" if missing else ""
        )
        cache = "?" if totals["cache_bytes"] is None else bound + _size(totals["cache_bytes"])
        audio = f"{bound}{totals['audio_label_hours']:,.1f} label-hours of audio to embed"
        out.append(f"  all {totals['labels']} labels: {audio}, {compute}, embedding cache {cache}")
        for name, size in sorted(self.sizes.items()):
            out.append(f"  corpus {name}: {size.utterances:,} utterances, {size.speakers:,} speakers ({size.source})")
        if self.reconciliation is not None:
            out += reconciliation_lines(self.reconciliation)
        return out


def _size(n_bytes: int) -> str:
    """Decimal units: 1.2 MB is 1,200,000 bytes."""
    units = ("B", "kB", "MB", "GB", "TB")
    value, step = float(n_bytes), 0
    while value >= 1000 and step < len(units) - 1:
        value, step = value / 1000, step + 1
    return f"{value:.0f} B" if step == 0 else f"{value:.1f} {units[step]}"


def _score_file_bytes(rows: int) -> int:
    """Bytes of a score file of ``rows`` trials, written as the pipeline writes them (parquet, zstd)."""
    rng = np.random.default_rng(rows)
    frame = pd.DataFrame(
        {
            "trial_index": np.arange(rows, dtype=np.int64),
            "label": (rng.random(rows) < 0.2).astype(np.int8),
            "score": rng.uniform(-1, 1, rows),
            "status": np.full(rows, "scored"),
        }
    )
    ScoresSchema.validate(frame)
    buffer = io.BytesIO()
    table = pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata({"run_id": "0" * 16})
    pq.write_table(table, buffer, compression="zstd")
    return buffer.tell()


def _cache_entry_bytes(dim: int) -> int:
    """Bytes of one embedding cache entry of a ``dim``-dimensional vector, written by the cache itself."""
    outcomes = [Outcome.applied("pink noise mixed in", snr_db=10.0, realised_snr_db=10.0).as_dict()]
    with tempfile.TemporaryDirectory(prefix="interbias-plan-") as folder:
        cache = EmbeddingCache(Path(folder))
        cache.put("0" * 40, CachedEmbedding(np.zeros(dim, dtype=np.float32), outcomes))
        return cache.path("0" * 40).stat().st_size


def _groups_of(
    config: RunConfig, experiment: ExperimentDesign, n_subgroups: int, corpus_utterances: int
) -> tuple[list[_SideGroup], dict[tuple[Any, ...], int], list[int]]:
    """Declared mode: the side groups of an experiment (trial lists x roles), the size of each of its trial lists
    and the trials of each of its cells (per subgroup, in cell order). An official list's sides are bounded by the
    utterances it can name (VoxCeleb1-O: the test split's), not by the run's pool."""
    from runner.corpora.voxceleb1 import OFFICIAL_LISTS

    listed = OFFICIAL_LISTS.get(experiment.trial_list or "")
    cap = None if listed is None else min(listed.utterances_at_most, corpus_utterances)
    groups: list[_SideGroup] = []
    sizes: dict[tuple[Any, ...], int] = {}
    cell_trials: list[int] = []
    for subgroup in range(n_subgroups):
        for cell in config.experiment_cells(experiment):
            n_target, n_nontarget = experiment.budget(cell.condition)
            n = n_target + n_nontarget
            list_key: tuple[Any, ...] = (experiment.id, "listed")
            if listed is None:
                list_key = (experiment.id, subgroup, cell.enrol_select, cell.test_select, cell.spoof, n_target)
            sizes[list_key] = n
            cell_trials.append(n)
            side = min(n, cap) if cap is not None else n
            enrol, test = chain_id(list(cell.enrol_chain)), chain_id(list(cell.test_chain))
            groups.append(_SideGroup((list_key, "enrol", enrol), experiment.corpus, enrol, side, cap))
            if cell.spoof is None:
                groups.append(_SideGroup((list_key, "test", test), experiment.corpus, test, side, cap))
            else:
                targets = _SideGroup((list_key, "target", test), experiment.corpus, test, n_target)
                spoofs = _SideGroup((list_key, "spoof", test), cell.spoof.corpus, test, n_nontarget)
                groups += [targets, spoofs]
    return groups, sizes, cell_trials


def _bounded_sides(groups: list[_SideGroup], pools: Mapping[str, int]) -> dict[tuple[str, str], int]:
    """(corpus, chain) -> distinct utterances at most: the sum of its groups' bounds, capped by the pool (or by
    the larger cap of an official list's groups)."""
    sums: dict[tuple[str, str], int] = {}
    caps: dict[tuple[str, str], int] = {}
    for group in {(*g.key, g.corpus): g for g in groups}.values():
        key = (group.corpus, group.chain)
        sums[key] = sums.get(key, 0) + group.bound
        caps[key] = max(caps.get(key, pools[group.corpus]), group.cap or 0)
    return {key: min(total, caps[key]) for key, total in sums.items()}


def _tally_sides(
    tally: Tally, sides: Mapping[tuple[str, str], float], seconds: Mapping[tuple[str, str], float]
) -> None:
    clean = chain_id([])
    tally.embeddings_per_label = int(sum(sides.values()))
    tally.operator_realisations = int(sum(n for (_, chain), n in sides.items() if chain != clean))
    tally.audio_seconds_per_label = float(sum(seconds.values()))


def _exact_counts(
    sides: Mapping[tuple[str, str], set[str]], tables: Mapping[str, pd.DataFrame]
) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], float]]:
    """Exact mode: distinct utterances per (corpus, chain) and their seconds of audio (from the corpus tables)."""
    durations = {name: table.set_index("utt_id")["duration_s"] for name, table in tables.items()}
    counts = {key: float(len(utts)) for key, utts in sides.items()}
    seconds = {key: float(durations[key[0]].loc[sorted(utts)].sum()) for key, utts in sides.items()}
    return counts, seconds


def _declared_seconds(
    bounded: Mapping[tuple[str, str], int], sizes: Mapping[str, CorpusSize]
) -> dict[tuple[str, str], float]:
    """Declared mode: seconds of audio of the bounded sides at each corpus's mean utterance duration."""
    return {key: n * sizes[key[0]].mean_duration_s for key, n in bounded.items()}


def _experiment_corpora(config: RunConfig, experiment: ExperimentDesign) -> list[str]:
    spoofs = {cell.spoof.corpus for cell in config.experiment_cells(experiment) if cell.spoof is not None}
    return [experiment.corpus, *sorted(spoofs)]


def estimate_plan(
    config: RunConfig,
    sizes: Mapping[str, CorpusSize] | None = None,
    tables: Mapping[str, pd.DataFrame] | None = None,
    throughput: Throughput | None = None,
) -> PlanEstimate:
    """What ``config`` will cost: from the corpora's utterance ``tables`` when given (exact: the run's own trial
    lists are drawn), else from declared ``sizes``.

    Embeddings are per label (every label embeds every side); an operator realisation is a side under a
    non-empty chain, made once and embedded by every label. Disk: score files as the pipeline writes them, and
    embedding cache entries as the cache writes them, measured on files of the same sizes here. Time per label:
    its audio to embed over its measured speed (``throughput``); no figure is invented for a label without one.
    """
    source = str(config.source)
    used = sorted({name for e in config.experiments for name in _experiment_corpora(config, e)})
    pools = None
    if tables is not None:
        pools = {
            name: select_pool(tables[name], config.corpora[name].utterances_per_speaker, config.seed) for name in used
        }
        subgroup_columns = {e.subgroup for e in config.experiments if e.subgroup is not None}
        corpus_sizes = {name: measured_size(tables[name], pools[name], subgroup_columns) for name in used}
        pool_counts = {name: len(pools[name]) for name in used}
    else:
        declared = sizes or {}
        corpus_sizes = {name: declared_size(config, name, declared, source) for name in used}
        pool_counts = {name: corpus_sizes[name].pool(config.corpora[name].utterances_per_speaker) for name in used}
    estimate = PlanEstimate(pools is not None, corpus_sizes, pool_counts)
    n_encoders = len(config.encoders)
    all_groups: list[_SideGroup] = []
    all_sides: dict[tuple[str, str], set[str]] = {}
    rows_by_experiment: dict[str, list[int]] = {}
    plans_by_experiment: dict[str, list[RecordPlan]] = {}
    if pools is not None:
        for plan in plan_run(config, pools, listed_trials(config, tables or {})):
            plans_by_experiment.setdefault(plan.experiment.id, []).append(plan)
    for experiment in config.experiments:
        tally = Tally(utterances=sum(pool_counts[name] for name in _experiment_corpora(config, experiment)))
        if pools is not None:
            plans = plans_by_experiment.get(experiment.id, [])
            lists = {plan.trials.trial_list_id: len(plan.trials.frame) for plan in plans}
            tally.trial_lists, tally.trials = len(lists), sum(lists.values())
            tally.records = len(plans)
            rows_by_experiment[experiment.id] = [len(plan.trials.frame) for plan in plans]
            sides: dict[tuple[str, str], set[str]] = {}
            for plan in plans:
                for side in plan.enrol_sides() + plan.test_sides():
                    sides.setdefault((side.corpus, side.chain_id), set()).add(side.utt_id)
                    all_sides.setdefault((side.corpus, side.chain_id), set()).add(side.utt_id)
            _tally_sides(tally, *_exact_counts(sides, tables or {}))
        else:
            n_subgroups = 1
            if experiment.subgroup is not None:
                n_subgroups = corpus_sizes[experiment.corpus].subgroups.get(experiment.subgroup, 0)
                if not n_subgroups:
                    raise InputError(
                        source,
                        f"experiments {experiment.id}: the declared size of {experiment.corpus!r} gives no number "
                        f"of {experiment.subgroup!r} subgroups",
                    )
            corpus_utterances = corpus_sizes[experiment.corpus].utterances
            groups, list_sizes, cell_trials = _groups_of(config, experiment, n_subgroups, corpus_utterances)
            all_groups += groups
            tally.trial_lists, tally.trials = len(list_sizes), sum(list_sizes.values())
            tally.records = len(cell_trials) * n_encoders
            rows_by_experiment[experiment.id] = [n for n in cell_trials for _ in range(n_encoders)]
            bounded = _bounded_sides(groups, pool_counts)
            _tally_sides(tally, bounded, _declared_seconds(bounded, corpus_sizes))
        estimate.experiments[experiment.id] = tally
    total = estimate.total
    for tally in estimate.experiments.values():
        total.trial_lists += tally.trial_lists
        total.trials += tally.trials
        total.records += tally.records
    total.utterances = sum(pool_counts.values())
    if pools is not None:
        _tally_sides(total, *_exact_counts(all_sides, tables or {}))
    else:
        bounded = _bounded_sides(all_groups, pool_counts)
        _tally_sides(total, bounded, _declared_seconds(bounded, corpus_sizes))
    sizes_of_files = {
        rows: _score_file_bytes(rows) for rows in sorted({r for v in rows_by_experiment.values() for r in v})
    }
    for experiment_id, tally in estimate.experiments.items():
        tally.score_bytes = sum(sizes_of_files[rows] for rows in rows_by_experiment[experiment_id])
        tally.evaluations = sum(rows_by_experiment[experiment_id])
        total.score_bytes += tally.score_bytes
        total.evaluations += tally.evaluations
    for spec in config.encoders:
        speed = throughput.audio_seconds_per_second.get(spec.label) if throughput is not None else None
        estimate.labels[spec.label] = {
            "embeddings": total.embeddings_per_label,
            "audio_hours": total.audio_seconds_per_label / 3600,
            "dim": spec.dim,
            "cache_bytes": None if spec.dim is None else total.embeddings_per_label * _cache_entry_bytes(spec.dim),
            "audio_seconds_per_second": speed,
            "hours": None if not speed else total.audio_seconds_per_label / speed / 3600,
            "throughput_source": throughput.source if throughput is not None and speed else None,
        }
    return estimate
