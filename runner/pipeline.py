"""The run: plan, embed (cached), score, and write the artefact bundle of DESIGN.md section 3.

A straight line: load the corpora, ready the encoders (each loads on its first forward pass: an unchanged rerun
loads none), plan the records, compute every needed (utterance, chain) embedding once per encoder (cached by
content digest), score each record's trials by cosine, compute the metrics with ``audit.metrics.point`` and write the
bundle through ``provenance.writer.BundleWriter`` (atomic files, the statement over the bytes written). A killed
run resumes: cached embeddings are not recomputed and every file is written again from what this invocation
computed, so the final bytes are the same and nothing found in the folder is signed.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from provenance import BundleWriter, DigestIndex, capture_environment, digest_index
from runner.cache import EmbeddingCache
from runner.corpora import CorpusTable
from runner.design import RunConfig, TrialList, check_dev_speakers, default_cache_root, select_pool
from runner.encoders import (
    DeferredEncoder,
    Dtype,
    EncoderHandle,
    EncoderSpec,
    MemoryLog,
    RecordStore,
    execution_summary,
    label_device_class,
    weights_origin,
)
from runner.execution import Embedder, Executor, LocalExecutor, ThreadPolicy
from runner.operators import NoiseSources, chain_id
from runner.plan import RecordPlan, corpus_digest, listed_trials, load_corpora, plan_run, run_id_for
from runner.scoring import (
    CLEAN_CHAIN,
    cohort_matrices,
    countermeasure_sides,
    operator_report,
    results_table,
    score_record,
    split_cohort,
    unscorable_reason,
)
from runner.stages import StageLog
from schemas import (
    CM_SCORE_COLUMN,
    COHORT_COLUMNS,
    CONFIG_FILE,
    ENVIRONMENT_FILE,
    OPERATORS_FILE,
    PROBLEMS_FILE,
    RUN_FILE,
    TIMINGS_FILE,
    UTTERANCES_FILE,
    RunError,
    corpus_folder_name,
    count,
    scores_file_bytes,
    scores_name,
    tool_version,
    trial_list_name,
)

DIGEST_INDEX_FILE = "digests.json"
CHECKPOINT_RECORDS_FOLDER = "checkpoints"


@dataclass
class RunSummary:
    """What a run did, for the CLI, the README figures and the tests."""

    out: Path
    run_id: str
    n_records: int
    n_trial_lists: int
    n_trials: int
    n_utterances: int
    forward_passes: int = 0
    embeddings_cached: int = 0
    cache_rejected: int = 0
    files_hashed: int = 0
    digests_reused: int = 0
    operator_counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what the run could not compute, and why (e.g. a calibration)


def _write_run_file(
    writer: BundleWriter,
    run_id: str,
    rejected: Counter[str] | None = None,
    unscorable: dict[str, str] | None = None,
) -> None:
    """run.json: the run id (a resumed run checks it); once the embeddings are done, the cache entries this
    invocation rejected (did not verify) and recomputed, by reason; and the records that could not be scored."""
    record: dict[str, Any] = {"run_id": run_id, "config": CONFIG_FILE}
    if rejected is not None:
        record["cache_rejected"] = {"total": sum(rejected.values()), "reasons": dict(sorted(rejected.items()))}
    if unscorable:
        record["unscorable_records"] = {"total": len(unscorable), "records": dict(sorted(unscorable.items()))}
    writer.write_json(RUN_FILE, record)


def _portable(command_line: list[str], folders: dict[str, Path]) -> list[str]:
    """The command line without any machine's folders: each of ``folders`` (placeholder -> folder, such as
    ``$OUT`` -> the --out folder) as its placeholder, any other absolute path (the program, the configuration,
    the key) as its name."""
    placeholders = {str(path): name for name, folder in folders.items() for path in (folder, folder.resolve())}

    def portable(value: str) -> str:
        if value in placeholders:
            return placeholders[value]
        return Path(value).name if os.path.isabs(value) else value

    written = []
    for argument in command_line:
        flag, equals, value = argument.partition("=")
        written.append(f"{flag}={portable(value)}" if equals and flag.startswith("--") else portable(argument))
    return written


@dataclass(frozen=True)
class RunOptions:
    """How a configuration is run (none of it changes what the run computes, except ``dtype``, which is part of
    every embedding's cache key): where the cache is, how the bundle is signed and described, where and how the
    embeddings are computed."""

    cache_root: Path | None = None  # default: $INTERBIAS_CACHE
    signing_key: Path | None = None  # ed25519 private key (PEM); unsigned without
    image_digest: str | None = None  # the container image's digest, recorded in environment.json
    command_line: list[str] | None = None  # recorded without machine folders; default: sys.argv
    progress: bool = True  # progress bars on a terminal, else a line per stage on stderr
    device: str = "cpu"
    dtype: Dtype = "fp32"  # the torch encoders' precision (--dtype)
    workers: int = 2  # operator processes of the default executor (0: in-process)
    encoder_factory: Callable[[EncoderSpec, str], EncoderHandle] | None = None  # default: EncoderSpec.load
    executor: Executor | None = None  # default: LocalExecutor(workers)
    threads: ThreadPolicy | None = None  # the encoders' torch threads; default: ThreadPolicy.for_this_machine()


def run(config: RunConfig, out: Path, options: RunOptions | None = None) -> RunSummary:
    """Run the configuration and write its bundle into ``out``; the embeddings are computed by the options'
    executor (default: this machine, with ``workers`` operator processes), everything else here.

    The cache folder holds the embeddings and the digest index of the input files (corpus audio, music,
    checkpoints), so that an unchanged rerun reads no input file twice; the index is saved even when the run
    fails, since the digests it learnt stay true.
    """
    options = options or RunOptions()
    cache_root = options.cache_root or default_cache_root()
    index = DigestIndex.open(cache_root / DIGEST_INDEX_FILE)
    with digest_index(index):
        try:
            summary = _run(config, out, cache_root, options)
        except BaseException:
            with contextlib.suppress(OSError):  # the run's own failure is the one to report
                index.save()
            raise
    index.save()
    summary.digests_reused, summary.files_hashed = index.hits, index.hashed
    return summary


def _run(config: RunConfig, out: Path, cache_root: Path, options: RunOptions) -> RunSummary:
    device, dtype = options.device, options.dtype
    policy = options.threads or ThreadPolicy.for_this_machine()
    threads = policy.apply()  # before any encoder imports torch
    stages = StageLog.for_run(6, options.progress)
    corpora = load_corpora(config)  # the corpus folders are only read
    pools = {
        name: select_pool(table.frame, config.corpora[name].utterances_per_speaker, config.seed)
        for name, table in corpora.items()
    }
    check_dev_speakers(config, {str(speaker) for pool in pools.values() for speaker in pool["speaker"].unique()})
    trial_pools, cohort = split_cohort(config, pools)
    stages.done("corpora", f"{sum(len(pool) for pool in pools.values())} utterances from {len(corpora)} corpora")
    load = policy.loader(options.encoder_factory or (lambda spec, on: spec.load(device=on, dtype=dtype)))
    store = RecordStore(cache_root / CHECKPOINT_RECORDS_FOLDER)
    encoders = {spec.label: DeferredEncoder(spec, device, load, store, dtype) for spec in config.encoders}
    checkpoint_digests = [encoders[spec.label].checkpoint.checkpoint_blake3 for spec in config.encoders]
    cm = config.countermeasure
    if cm is not None:
        encoders[cm.spec.label] = DeferredEncoder(cm.spec, device, load, store)
        checkpoint_digests.append(encoders[cm.spec.label].checkpoint.checkpoint_blake3)
    stages.done("encoders", f"{len(encoders)} ready (each loaded on its first forward pass, if any)")
    run_id = run_id_for(config, corpus_digest(corpora), checkpoint_digests, tool_version())
    tables = {name: table.frame for name, table in corpora.items()}
    plans = plan_run(config, trial_pools, listed_trials(config, tables))
    writer = BundleWriter.resume(out, run_id)
    trial_lists = _write_plan(writer, config, corpora, plans, run_id)
    n_trials = sum(len(t.frame) for t in trial_lists.values())
    stages.done(
        "plan", f"{count(len(plans), 'record')}, {count(len(trial_lists), 'trial list')}, {count(n_trials, 'trial')}"
    )

    chains = {chain_id(list(specs)): specs for plan in plans for specs in (plan.cell.enrol_chain, plan.cell.test_chain)}
    sides = {side for plan in plans for side in (*plan.enrol_sides(), *plan.test_sides())}
    if cohort is not None:
        chains.setdefault(CLEAN_CHAIN, ())
        sides |= cohort.all_sides()
    sources = {
        name: NoiseSources(
            utterances=writer.layout.corpus_folder(name, len(corpora) == 1) / UTTERANCES_FILE,
            audio_root=config.corpora[name].root,
            music_dir=config.corpora[name].music,
        )
        for name in corpora
    }
    cache = EmbeddingCache(cache_root / "embeddings")
    executor = options.executor or LocalExecutor(options.workers)
    run_class = executor.device_class(device)
    models = [*config.encoders, *([cm.spec] if cm is not None else [])]
    device_classes = {spec.label: label_device_class(spec.kind, run_class) for spec in models}
    only = {cm.spec.label: countermeasure_sides(plans, cm.experiments)} if cm is not None else None
    embedder = Embedder(config, tables, encoders, cache, sources, executor, device_classes, only)
    embeddings = embedder.embed_all(chains, sides, stages)
    stages.done("embeddings", f"{executor.forward_passes} computed, {embedder.cached} from cache")

    operators = operator_report(config, plans, chains, embeddings, sources)
    failures = sum(chain["failed"] for chain in operators["chains"].values())
    failures += sum(encoder["failed"] for encoder in operators["encoders"].values())
    if failures and config.failure_policy == "fail-run":
        writer.write_json(OPERATORS_FILE, operators)
        _write_run_file(writer, run_id, cache.rejected)
        raise RunError(
            f"{failures} operator or encoder failure(s) under the fail-run policy; see {out / OPERATORS_FILE}"
        )
    matrices = cohort_matrices(cohort, embeddings, [spec.label for spec in config.encoders]) if cohort else None
    score_frames = [
        score_record(
            plan,
            embeddings,
            cm.spec.label if cm and plan.experiment.id in cm.experiments else None,
            (cohort, matrices) if cohort is not None and matrices is not None else None,
        )
        for plan in plans
    ]
    scores_blake3 = _write_scores(writer, plans, score_frames, run_id)
    _refuseunscorable_reason(writer, plans, score_frames, operators, run_id, cache.rejected)
    stages.done("scores", f"{len(score_frames)} records, {sum(len(frame) for frame in score_frames)} trials scored")

    checkpoints = _checkpoint_records(config, encoders)
    results, notes = results_table(config, plans, score_frames, trial_lists, checkpoints, scores_blake3, run_id)
    _write_run_file(writer, run_id, cache.rejected)
    environment = capture_environment(
        seeds={"run": config.seed},
        command_line=_portable(options.command_line or sys.argv, {"$OUT": out, "$CACHE": cache_root}),
        image_digest=options.image_digest,
        device=device,
        dtype=dtype,
        execution={
            label: {**summary, "device_class": device_classes[label]}
            for label, summary in execution_summary(
                {label: encoder.checkpoint.runtime for label, encoder in encoders.items()}
            ).items()
        },
    )
    writer.write_json(ENVIRONMENT_FILE, {**environment, "executor": executor.describe(), "threads": threads})
    writer.write_json(TIMINGS_FILE, _timings(run_id, device, stages, embedder, executor))
    writer.seal(
        results=results,
        checkpoints=checkpoints,
        operators=operators,
        run_config=config.raw,
        signing_key=options.signing_key,
    )
    stages.done(
        "bundle", f"{len(results)} results rows, manifest {'signed' if options.signing_key else 'unsigned'} -> {out}"
    )
    return RunSummary(
        out=out,
        run_id=run_id,
        n_records=len(plans),
        n_trial_lists=len(trial_lists),
        n_trials=n_trials,
        n_utterances=sum(len(pool) for pool in pools.values()),
        forward_passes=executor.forward_passes,
        embeddings_cached=embedder.cached,
        cache_rejected=sum(cache.rejected.values()),
        operator_counts={
            status: sum(chain[status] for chain in operators["chains"].values())
            for status in ("applied", "failed", "fallback")
        },
        notes=notes,
    )


def _write_plan(
    writer: BundleWriter, config: RunConfig, corpora: dict[str, CorpusTable], plans: list[RecordPlan], run_id: str
) -> dict[str, TrialList]:
    """The run marker, the configuration, each corpus's tables and every trial list; the trial lists by id."""
    _write_run_file(writer, run_id)
    writer.write(CONFIG_FILE, config.source.read_bytes())
    for name, table in corpora.items():
        folder = corpus_folder_name(name, len(corpora) == 1)
        writer.write(f"{folder}/{UTTERANCES_FILE}", table.utterances_csv())
        writer.write(f"{folder}/{PROBLEMS_FILE}", table.problems_csv())
    trial_lists = {plan.trials.trial_list_id: plan.trials for plan in plans}
    for trial_list_id, trials in sorted(trial_lists.items()):
        writer.write(trial_list_name(trial_list_id), trials.csv_bytes)
    return trial_lists


def _write_scores(
    writer: BundleWriter, plans: list[RecordPlan], frames: list[pd.DataFrame], run_id: str
) -> dict[str, str]:
    """Every record's score file; the BLAKE3 of each, by record id."""
    return {
        plan.record_id: writer.write(
            scores_name(plan.record_id),
            scores_file_bytes(
                frame["label"].to_numpy(),
                frame["score"].to_numpy(),
                frame["status"].to_numpy(),
                run_id,
                frame[CM_SCORE_COLUMN].to_numpy() if CM_SCORE_COLUMN in frame else None,
                frame[list(COHORT_COLUMNS)].to_numpy() if COHORT_COLUMNS[0] in frame else None,
            ),
        ).blake3
        for plan, frame in zip(plans, frames, strict=True)
    }


def _refuseunscorable_reason(
    writer: BundleWriter,
    plans: list[RecordPlan],
    frames: list[pd.DataFrame],
    operators: dict[str, Any],
    run_id: str,
    rejected: Counter[str],
) -> None:
    """A RunError when some record cannot give its metrics, after writing which ones and why: no results table
    is signed over records that have no result."""
    unscorable = {
        plan.record_id: reason
        for plan, frame in zip(plans, frames, strict=True)
        if (reason := unscorable_reason(frame)) is not None
    }
    if unscorable:
        writer.write_json(OPERATORS_FILE, operators)
        _write_run_file(writer, run_id, rejected, unscorable)
        first, reason = next(iter(unscorable.items()))
        root = writer.layout.root
        raise RunError(
            f"{len(unscorable)} of {len(plans)} records cannot be scored (first: {first}: {reason}); "
            f"see {root / OPERATORS_FILE} and {root / RUN_FILE}, fix the input and rerun"
        )


def _checkpoint_records(config: RunConfig, encoders: dict[str, DeferredEncoder]) -> dict[str, Any]:
    """checkpoints.json: each label's checkpoint record and where its weights come from."""
    specs = [*config.encoders, *([config.countermeasure.spec] if config.countermeasure else [])]
    pins = {spec.label: spec.weights for spec in specs}
    return {
        label: {**encoder.checkpoint.as_dict(), "weights": weights_origin(encoder.checkpoint, pins[label])}
        for label, encoder in encoders.items()
    }


def _timings(run_id: str, device: str, stages: StageLog, embedder: Embedder, executor: Executor) -> dict[str, Any]:
    """timings.json: wall and CPU seconds of each stage before the bundle is written, and per label the sides this
    run embedded (cached ones excluded), their clean audio seconds, the seconds spent embedding them and the
    throughput they give (audio seconds per second, the figure ``interbias plan --throughput-from`` reads)."""
    encoders = {}
    for label in embedder.encoders:
        done = embedder.embedded.get(label, {"sides": 0, "audio_s": 0.0})
        spent = executor.label_seconds.get(label, {"wall_s": 0.0, "cpu_s": None})
        wall = spent["wall_s"] or 0.0
        encoders[label] = {
            "sides": int(done["sides"]),
            "audio_s": round(done["audio_s"], 3),
            "wall_s": round(wall, 3),
            "cpu_s": None if spent["cpu_s"] is None else round(spent["cpu_s"], 3),
            "audio_seconds_per_second": round(done["audio_s"] / wall, 3) if done["sides"] and wall > 0 else None,
            "memory": executor.memory.get(label, MemoryLog()).as_dict(),
        }
    return {
        "run_id": run_id,
        "device": device,
        "executor": executor.describe()["name"],
        "cpu_s_counts": "this process and its operator worker processes once ended (not Ray workers or actors)",
        "stages": stages.seconds,
        "not_timed": "the bundle stage, which writes and signs this file",
        "encoders": encoders,
    }
