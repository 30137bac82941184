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
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from audit.metrics.point import grouped_metrics
from provenance.digests import DigestIndex, bytes_digest, digest_index
from provenance.environment import capture_environment
from provenance.writer import BundleWriter
from runner.beyond_eer import beyond_eer_columns, countermeasure_scores, countermeasure_sides
from runner.cache import CachedEmbedding, EmbeddingCache
from runner.cohort import CLEAN_CHAIN, Cohort, cohort_matrices, split_cohort, trial_cohort_statistics
from runner.config import CorpusChoice, RunConfig, check_dev_speakers, default_cache_root
from runner.corpora.base import CorpusTable, load_corpus
from runner.designs import ChainSpecs
from runner.encoders import EncoderHandle, EncoderSpec
from runner.encoders.base import Dtype
from runner.encoders.deferred import DeferredEncoder, RecordStore
from runner.encoders.device import execution_summary, label_device_class
from runner.encoders.failures import MemoryLog
from runner.encoders.weights import weights_origin
from runner.execution.embedder import Embedder
from runner.execution.jobs import Executor
from runner.execution.local import LocalExecutor
from runner.operators import Chain, NoiseSources, chain_id, chain_status
from runner.plan import RecordPlan, Side, listed_trials, plan_run, run_id_for
from runner.stages import StageLog
from runner.trials import TrialList, select_pool
from schemas.bundle import (
    CM_SCORE_COLUMN,
    CONFIG_FILE,
    ENVIRONMENT_FILE,
    OPERATORS_FILE,
    PROBLEMS_FILE,
    RUN_FILE,
    TIMINGS_FILE,
    UTTERANCES_FILE,
    corpus_folder_name,
    scores_file_bytes,
    scores_name,
    trial_list_name,
)
from schemas.errors import InputError, RunError
from schemas.scores import COHORT_COLUMNS
from schemas.trials import SPEAKER_COUNT_COLUMNS, speaker_counts
from schemas.wording import count

TOOL_VERSION = version("interbias-sv")
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


def _chain_status(entry: CachedEmbedding) -> str:
    """``applied`` / ``fallback`` / ``failed`` for a whole chain realisation, from its operators' outcomes."""
    return chain_status(outcome["status"] for outcome in entry.operator_outcomes)


def _side_status(entry: CachedEmbedding) -> str:
    """A side's status for one encoder: ``failed`` without an embedding (its chain failed, or the encoder could not
    embed it), else its chain's."""
    return "failed" if entry.vector is None else _chain_status(entry)


def _score_record(
    plan: RecordPlan,
    embeddings: dict[tuple[Side, str], CachedEmbedding],
    countermeasure: str | None = None,
    cohort: tuple[Cohort, dict[tuple[str, str], np.ndarray]] | None = None,
) -> pd.DataFrame:
    """Cosine score of every trial of the record, in trial-list order, with its status; with ``countermeasure``
    (its label) the countermeasure's score of each trial's test side too, and with ``cohort`` (the run's and its
    embeddings by corpus and label) each trial's AS-norm cohort statistics."""
    trials, label = plan.trials.frame, plan.encoder.label
    scores = np.full(len(trials), np.nan)
    status = np.full(len(trials), "scored", dtype=object)
    for index, (enrol_side, test_side) in enumerate(zip(plan.enrol_sides(), plan.test_sides(), strict=True)):
        enrol = embeddings[(enrol_side, label)].vector
        test = embeddings[(test_side, label)].vector
        if enrol is None:
            status[index] = "enrol-failed"
        elif test is None:
            status[index] = "test-failed"
        else:
            scores[index] = float(np.dot(enrol, test) / (np.linalg.norm(enrol) * np.linalg.norm(test)))
    frame = pd.DataFrame(
        {
            "trial_index": trials["trial_index"].to_numpy(np.int64),
            "label": trials["label"].to_numpy(np.int8),
            "score": scores,
            "status": status.astype(str),
        }
    )
    if countermeasure is not None:
        frame[CM_SCORE_COLUMN] = countermeasure_scores(plan.test_sides(), embeddings, countermeasure)
    if cohort is not None:
        statistics = trial_cohort_statistics(plan, embeddings, cohort[1], cohort[0].top_n)
        if statistics is not None:
            frame[list(COHORT_COLUMNS)] = statistics
    return frame


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


def _unscorable(frame: pd.DataFrame) -> str | None:
    """Why a record's scored trials cannot give its metrics (both classes and two distinct finite scores are
    needed), or None when they can."""
    scored = frame[frame["status"] == "scored"]
    missing = [kind for kind, label in (("target", 1), ("non-target", 0)) if not (scored["label"] == label).any()]
    if missing:
        unscored = len(frame) - len(scored)
        return f"no scored {' or '.join(missing)} trials ({unscored} of {len(frame)} trials lost to operator failures)"
    if not np.isfinite(scored["score"].to_numpy()).all():
        return "non-finite scores (an encoder returned a zero or non-finite embedding)"
    if scored["score"].nunique() < 2:
        return "every scored trial has the same score"
    return None


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


def _operator_report(
    config: RunConfig,
    plans: list[RecordPlan],
    specs: dict[str, ChainSpecs],
    embeddings: dict[tuple[Side, str], CachedEmbedding],
    sources: dict[str, NoiseSources],
) -> dict[str, Any]:
    """operators.json: each chain's description (synthetic or real material, its digests, codec versions) and
    outcome counts per chain (over utterances), per encoder the sides it could not embed and why (over utterances
    and chains), and per record the outcome of its sides for its encoder (a side counts as failed when its chain
    failed or its encoder could not embed it).

    In a run of several corpora a chain is reported per corpus (``CORPUS:CHAIN_ID``), since its material (babble)
    and its outcomes belong to that corpus, and ``sources`` is keyed by corpus."""
    single = len(sources) == 1

    def key(corpus: str, identifier: str) -> str:
        return identifier if single else f"{corpus}:{identifier}"

    chains: dict[str, dict[str, Any]] = {}
    counted: set[Side] = set()
    encoder_failures: dict[str, Counter[str]] = {spec.label: Counter() for spec in config.encoders}
    for (side, label), entry in embeddings.items():
        if (reason := entry.encoder_failure) is not None:
            encoder_failures[label][reason] += 1
        if side in counted:
            continue
        counted.add(side)
        status = _chain_status(entry)
        chain = chains.setdefault(
            key(side.corpus, side.chain_id),
            {"applied": 0, "failed": 0, "fallback": 0, "reasons": Counter(), "corpus": side.corpus},
        )
        chain.setdefault("spec", list(specs[side.chain_id]))
        chain[status] += 1
        for outcome in entry.operator_outcomes:
            if outcome["status"] != "applied":
                chain["reasons"][outcome["reason"]] += 1
    records = {}
    for plan in plans:
        sides = set(plan.enrol_sides()) | set(plan.test_sides())
        counts = Counter(_side_status(embeddings[(side, plan.encoder.label)]) for side in sides)
        records[plan.record_id] = {
            "chains": sorted({key(side.corpus, side.chain_id) for side in sides}),
            **{status: counts.get(status, 0) for status in ("applied", "failed", "fallback")},
        }
    for chain in chains.values():
        chain["reasons"] = dict(sorted(chain["reasons"].items()))
        bound = sources[chain.pop("corpus")]
        chain["description"] = Chain.from_specs(chain["spec"], sources=bound).describe()
    return {
        "policy": config.failure_policy,
        "sources": next(iter(sources.values())).describe()
        if single
        else {name: bound.describe() for name, bound in sorted(sources.items())},
        "chains": dict(sorted(chains.items())),
        "encoders": {
            label: {"failed": sum(reasons.values()), "reasons": dict(sorted(reasons.items()))}
            for label, reasons in sorted(encoder_failures.items())
        },
        "records": records,
    }


def _results_row(plan: RecordPlan, metrics: dict[str, float], extra: dict[str, Any]) -> dict[str, Any]:
    design, cell = plan.experiment, plan.cell
    factorial = design.factor_a is not None
    return {
        "record_id": plan.record_id,
        "experiment": design.id,
        "model": plan.encoder.label,
        "model_family": plan.encoder.family,
        "corpus": extra["corpus"],
        "condition": cell.condition,
        "factor_a": design.factor_a.name if design.factor_a else None,
        "level_a": cell.level_a if factorial else None,
        "factor_b": design.factor_b.name if design.factor_b else None,
        "level_b": cell.level_b if design.factor_b else None,
        "enrol_condition": cell.enrol_condition,
        "test_condition": cell.test_condition,
        "subgroup": plan.subgroup,
        **({"complement_of": cell.complement_of} if cell.complement_of is not None else {}),
        "eer": metrics[f"eer_{extra['eer_method']}"],
        **metrics,
        **{key: value for key, value in extra.items() if key not in ("corpus",)},
    }


def run(
    config: RunConfig,
    out: Path,
    *,
    cache_root: Path | None = None,
    signing_key: Path | None = None,
    image_digest: str | None = None,
    command_line: list[str] | None = None,
    progress: bool = True,
    device: str = "cpu",
    dtype: Dtype = "fp32",
    workers: int = 2,
    encoder_factory: Callable[[EncoderSpec, str], EncoderHandle] | None = None,
    executor: Executor | None = None,
) -> RunSummary:
    """Run the configuration and write its bundle into ``out``; the embeddings are computed by ``executor``
    (default: this machine, with ``workers`` operator processes), everything else here. ``dtype`` is the torch
    encoders' precision (``--dtype``; encoders without a reduced-precision path record it and run in their own).

    The cache folder holds the embeddings and the digest index of the input files (corpus audio, music,
    checkpoints), so that an unchanged rerun reads no input file twice; the index is saved even when the run
    fails, since the digests it learnt stay true.
    """
    cache_root = cache_root or default_cache_root()
    index = DigestIndex.open(cache_root / DIGEST_INDEX_FILE)
    with digest_index(index):
        try:
            summary = _run(
                config,
                out,
                cache_root=cache_root,
                signing_key=signing_key,
                image_digest=image_digest,
                command_line=command_line,
                progress=progress,
                device=device,
                dtype=dtype,
                workers=workers,
                encoder_factory=encoder_factory,
                executor=executor,
            )
        except BaseException:
            with contextlib.suppress(OSError):  # the run's own failure is the one to report
                index.save()
            raise
    index.save()
    summary.digests_reused, summary.files_hashed = index.hits, index.hashed
    return summary


def _run(
    config: RunConfig,
    out: Path,
    *,
    cache_root: Path,
    signing_key: Path | None,
    image_digest: str | None,
    command_line: list[str] | None,
    progress: bool,
    device: str,
    dtype: Dtype,
    workers: int,
    encoder_factory: Callable[[EncoderSpec, str], EncoderHandle] | None,
    executor: Executor | None,
) -> RunSummary:
    stages = StageLog.for_run(6, progress)
    corpora = _load_corpora(config)  # the corpus folders are only read
    pools = {
        name: select_pool(table.frame, config.corpora[name].utterances_per_speaker, config.seed)
        for name, table in corpora.items()
    }
    check_dev_speakers(config, {str(speaker) for pool in pools.values() for speaker in pool["speaker"].unique()})
    trial_pools, cohort = split_cohort(config, pools)
    stages.done("corpora", f"{sum(len(pool) for pool in pools.values())} utterances from {len(corpora)} corpora")
    load = encoder_factory or (lambda spec, on: spec.load(device=on, dtype=dtype))
    store = RecordStore(cache_root / CHECKPOINT_RECORDS_FOLDER)
    encoders = {spec.label: DeferredEncoder(spec, device, load, store, dtype) for spec in config.encoders}
    checkpoint_digests = [encoders[spec.label].checkpoint.checkpoint_blake3 for spec in config.encoders]
    cm = config.countermeasure
    if cm is not None:
        encoders[cm.spec.label] = DeferredEncoder(cm.spec, device, load, store)
        checkpoint_digests.append(encoders[cm.spec.label].checkpoint.checkpoint_blake3)
    stages.done("encoders", f"{len(encoders)} ready (each loaded on its first forward pass, if any)")
    run_id = run_id_for(config, _corpus_digest(corpora), checkpoint_digests, TOOL_VERSION)
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
    executor = executor or LocalExecutor(workers)
    run_class = executor.device_class(device)
    models = [*config.encoders, *([cm.spec] if cm is not None else [])]
    device_classes = {spec.label: label_device_class(spec.kind, run_class) for spec in models}
    only = {cm.spec.label: countermeasure_sides(plans, cm.experiments)} if cm is not None else None
    embedder = Embedder(config, tables, encoders, cache, sources, executor, device_classes, only)
    embeddings = embedder.embed_all(chains, sides, stages)
    stages.done("embeddings", f"{executor.forward_passes} computed, {embedder.cached} from cache")

    operators = _operator_report(config, plans, chains, embeddings, sources)
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
        _score_record(
            plan,
            embeddings,
            cm.spec.label if cm and plan.experiment.id in cm.experiments else None,
            (cohort, matrices) if cohort is not None and matrices is not None else None,
        )
        for plan in plans
    ]
    scores_blake3 = _write_scores(writer, plans, score_frames, run_id)
    _refuse_unscorable(writer, plans, score_frames, operators, run_id, cache.rejected)
    stages.done("scores", f"{len(score_frames)} records, {sum(len(frame) for frame in score_frames)} trials scored")

    checkpoints = _checkpoint_records(config, encoders)
    results = _results(config, plans, score_frames, trial_lists, checkpoints, scores_blake3, run_id)
    _write_run_file(writer, run_id, cache.rejected)
    environment = capture_environment(
        seeds={"run": config.seed},
        command_line=_portable(command_line or sys.argv, {"$OUT": out, "$CACHE": cache_root}),
        image_digest=image_digest,
        device=device,
        dtype=dtype,
        execution={
            label: {**summary, "device_class": device_classes[label]}
            for label, summary in execution_summary(
                {label: encoder.checkpoint.runtime for label, encoder in encoders.items()}
            ).items()
        },
    )
    writer.write_json(ENVIRONMENT_FILE, {**environment, "executor": executor.describe()})
    writer.write_json(TIMINGS_FILE, _timings(run_id, device, stages, embedder, executor))
    writer.seal(
        results=results, checkpoints=checkpoints, operators=operators, run_config=config.raw, signing_key=signing_key
    )
    stages.done("bundle", f"{len(results)} results rows, manifest {'signed' if signing_key else 'unsigned'} -> {out}")
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


def _refuse_unscorable(
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
        if (reason := _unscorable(frame)) is not None
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


def _results(
    config: RunConfig,
    plans: list[RecordPlan],
    frames: list[pd.DataFrame],
    trial_lists: dict[str, TrialList],
    checkpoints: dict[str, Any],
    scores_blake3: dict[str, str],
    run_id: str,
) -> pd.DataFrame:
    """results.csv: one row per record, its metrics computed from its scored trials and its provenance."""
    metrics = _grouped(frames, config)
    speakers = {list_id: speaker_counts(trials.frame) for list_id, trials in trial_lists.items()}
    rows = []
    for index, (plan, frame) in enumerate(zip(plans, frames, strict=True)):
        record_metrics = {key: values[index].item() for key, values in metrics.items()}
        extra = {
            "corpus": plan.experiment.corpus,
            "eer_method": config.eer_method,
            "n_unscored": int((frame["status"] != "scored").sum()),
            "p_target": config.p_target,
            "c_miss": config.c_miss,
            "c_fa": config.c_fa,
            "checkpoint_blake3": checkpoints[plan.encoder.label]["checkpoint_blake3"],
            "trial_list_id": plan.trials.trial_list_id,
            "scores_blake3": scores_blake3[plan.record_id],
            "run_id": run_id,
            "seed": config.seed,
            **speakers[plan.trials.trial_list_id],
        }
        rows.append(_results_row(plan, record_metrics, extra))
    beyond = beyond_eer_columns(config, plans, frames, rows)
    results = pd.DataFrame([row | beyond[row["record_id"]] for row in rows])
    for column in ("n_target", "n_nontarget", "n_unscored", "seed", *SPEAKER_COUNT_COLUMNS):
        results[column] = results[column].astype("int64")
    return results


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


def _used_corpora(config: RunConfig) -> dict[str, CorpusChoice]:
    """The corpora some experiment reads (spoof folders included)."""
    return {name: choice for name, choice in config.corpora.items() if config.experiments_using(name)}


def _load_corpora(config: RunConfig) -> dict[str, CorpusTable]:
    """Every corpus the experiments use; missing folders are one InputError naming each folder to provide."""
    missing = []
    for name, choice in _used_corpora(config).items():
        if not choice.root.is_dir():
            needed = ", ".join(config.experiments_using(name))
            build = ", built by `interbias corpus build --out FOLDER`" if choice.adapter == "asterisk" else ""
            missing.append(f"{choice.root} (the {choice.adapter} corpus{build}, [corpora.{name}], for {needed})")
    if missing:
        raise InputError(str(config.source), f"corpus folder not found; provide {'; '.join(missing)}")
    return {
        name: load_corpus(choice.adapter, choice.root, choice.release, f"{config.source} (corpus {name}, release)")
        for name, choice in _used_corpora(config).items()
    }


def _corpus_digest(corpora: dict[str, CorpusTable]) -> str:
    """The BLAKE3 of the utterance table (one corpus), or of the named tables' digests (several)."""
    digests = {name: bytes_digest(table.utterances_csv()).blake3 for name, table in sorted(corpora.items())}
    if len(digests) == 1:
        return next(iter(digests.values()))
    return bytes_digest("\n".join(f"{name}={digest}" for name, digest in digests.items()).encode()).blake3


def _grouped(frames: list[pd.DataFrame], config: RunConfig) -> dict[str, np.ndarray]:
    """All metrics of all records in one vectorised pass over the scored trials."""
    scores = np.concatenate([frame["score"].to_numpy() for frame in frames])
    labels = np.concatenate([frame["label"].to_numpy() for frame in frames])
    scored = np.concatenate([(frame["status"] == "scored").to_numpy() for frame in frames])
    index = np.repeat(np.arange(len(frames)), [len(frame) for frame in frames])
    return grouped_metrics(
        scores[scored],
        labels[scored],
        index[scored],
        len(frames),
        p_target=config.p_target,
        c_miss=config.c_miss,
        c_fa=config.c_fa,
    )
