"""The full-registry rehearsal: a signed synthetic bundle planned by the runner from a configuration, audited.

One generator for two uses. ``interbias rehearse configs/full.toml --out DIR`` writes a small bundle (budgets
scaled down, full.toml's own list sharing, so population contrasts are on their populations' lists) and runs
``audit verify`` on it with the key it was signed with: every design, every family, the fixed-threshold and
subgroup analyses run as they would on a real run, without the corpora, the checkpoints or an encoder. The
paper-scale benchmark (``benchmarks/bench_paper_bundle.py``) writes the same kind of bundle at the paper's size.

The records, trial lists and record ids come from the runner's own planner (``runner.plan.plan_run``) on
synthetic utterance pools shaped like the six corpora and two spoof folders of the full configuration, so trial
lists are shared exactly as the design shares them: one list per condition cell for all 12 encoders, one per
population of a population factor, one per gender subgroup of E16, spoof lists built on their genuine list.
``configs/full.toml`` plans 233 cells per encoder label (2,796 records; 18 of them E13's complement cells
``other-than-<stratum>``); the paper has 4,068 records (339 per label), so with ``pad`` the remaining 106 cells per
label are repeated draws (a fresh trial list each, the condition suffixed ``#rN``) of the single-factor designs
E03-E07. Every trial budget is scaled by one factor so that the padded bundle at scale 1 holds about 12 M per-trial
scores; the statistics workload (contrasts, fixed-threshold settings) is the configuration's own.

Scores are cosines in float32 precision (as the runner's float32 embeddings give them) with speaker effects on
both sides (some enrolment and test speakers are harder than others, for every encoder alike), an encoder quality
and a condition penalty; a few trials fail to decode (NaN, ``test-failed``). Nothing in them is measured speech:
the rehearsal checks the path, not the encoders.
The results rows carry the true metrics of those scores (``audit.metrics.point.grouped_metrics``, as the runner does),
and ``provenance.manifest.write_manifest`` signs the bundle with a fresh key written next to it (``B.key``,
``B.pub``). The same seed gives the same bundle, byte for byte, apart from the fresh key and its signature.
"""

from __future__ import annotations

import json
import re
import sys
import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import blake3
import numpy as np
import pandas as pd

from schemas import scores_file_bytes

FULL_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "full.toml"
PAPER_RECORDS = 4068
PAPER_LABELS = 12
PAPER_SCORES = 12_000_000
REPLICATED = ("E03", "E04", "E05", "E06", "E07")  # single-factor designs whose draws pad to the paper's count
MIN_BUDGET = 40  # per class and list: small scales keep both classes and a development split for E16
DEV_SHARE = 0.5  # of the voxceleb1 speakers E16 draws from, declared as development speakers
RUN_ID = "synthetic-rehearsal"
SYNTHETIC_RELEASE = "rehearsal"  # the release every synthetic pool records: no published corpus


@dataclass(frozen=True)
class CorpusShape:
    """A synthetic utterance pool: speakers with speaker-level metadata, utterances with utterance-level metadata."""

    speakers: int
    per_speaker: int
    speaker_columns: dict[str, tuple[str, ...]] = field(default_factory=dict)
    utterance_columns: dict[str, tuple[str, ...]] = field(default_factory=dict)


GENDERS = ("F", "M")
CORPORA = {
    "ravdess": CorpusShape(
        24,
        64,
        {"gender": GENDERS},
        {
            "emotion": ("neutral", "calm", "happy", "sad", "angry", "fearful", "disgust", "surprised"),
            "style": ("speech",),  # the vocal channel E01, E14 and E20 select
        },
    ),
    "torgo": CorpusShape(
        15,
        300,
        {"condition": ("dysarthric", "control"), "gender": GENDERS},
        {
            "session": ("Session1", "Session2", "Session2_3", "Session3"),
            "microphone": ("headMic",),  # one microphone per prompt, and lexical prompts, as full.toml selects
            "style": ("lexical",),
        },
    ),
    "ears": CorpusShape(
        107, 56, {"gender": GENDERS}, {"style": ("regular", "loud", "whisper", "highpitch", "lowpitch", "fast", "slow")}
    ),
    "common_voice": CorpusShape(
        1200,
        20,
        {
            "age_bin": ("teens", "twenties", "thirties", "fourties", "fifties", "sixties", "seventies", "eighties"),
            "gender": GENDERS,
        },
    ),
    "l2_arctic": CorpusShape(
        24, 60, {"l1": ("Arabic", "Mandarin", "Hindi", "Korean", "Spanish", "Vietnamese"), "gender": GENDERS}
    ),
    "voxceleb1": CorpusShape(1251, 20, {"gender": GENDERS, "split": ("dev", "dev", "test")}),
}
SPOOF_FOLDERS = {"tts_spoofs": ("VITS", "YourTTS"), "vc_spoofs": ("FreeVC", "kNN-VC")}  # imitating voxceleb1 speakers


def synthetic_pool(name: str, shape: CorpusShape) -> pd.DataFrame:
    """The utterance table of one synthetic corpus (schema columns, metadata cycled evenly over speakers)."""
    speaker = np.repeat(np.arange(shape.speakers), shape.per_speaker)
    within = np.tile(np.arange(shape.per_speaker), shape.speakers)
    utt_id = [f"{name}-s{s:04d}-u{u:03d}" for s, u in zip(speaker, within, strict=True)]
    frame = pd.DataFrame(
        {
            "utt_id": utt_id,
            "speaker": [f"{name}-s{s:04d}" for s in speaker],
            "path": [f"{u}.wav" for u in utt_id],
            "duration_s": 3.0,
            "sample_rate": 16000,
            "blake3": [blake3.blake3(u.encode()).hexdigest() for u in utt_id],
            "source_package": f"{name} (synthetic)",
            "source_version": SYNTHETIC_RELEASE,
        }
    )
    for column, values in shape.speaker_columns.items():
        frame[column] = np.asarray(values)[speaker % len(values)]
    for column, values in shape.utterance_columns.items():
        frame[column] = np.asarray(values)[within % len(values)]
    return frame


def spoof_pool(name: str, systems: Sequence[str], genuine: pd.DataFrame) -> pd.DataFrame:
    """Two files per genuine speaker, each imitating that speaker, made by the folder's systems in turn."""
    speakers = np.repeat(np.sort(genuine["speaker"].unique()), 2)
    utt_id = [f"{name}-{i:05d}" for i in range(len(speakers))]
    return pd.DataFrame(
        {
            "utt_id": utt_id,
            "speaker": speakers,
            "path": [f"{u}.wav" for u in utt_id],
            "duration_s": 3.0,
            "sample_rate": 16000,
            "blake3": [blake3.blake3(u.encode()).hexdigest() for u in utt_id],
            "source_package": f"{name} (synthetic)",
            "source_version": SYNTHETIC_RELEASE,
            "spoof_system": np.asarray(systems)[np.arange(len(speakers)) % len(systems)],
            "spoof_system_version": "synthetic",
        }
    )


def synthetic_pools() -> dict[str, pd.DataFrame]:
    """Every synthetic corpus of ``CORPORA`` and spoof folder of ``SPOOF_FOLDERS`` (imitating VoxCeleb1's speakers),
    by name: the utterances a synthetic bundle's lists are drawn from."""
    genuine = {name: synthetic_pool(name, shape) for name, shape in CORPORA.items()}
    spoofs = {name: spoof_pool(name, systems, genuine["voxceleb1"]) for name, systems in SPOOF_FOLDERS.items()}
    return genuine | spoofs


@dataclass(frozen=True)
class Planned:
    """One record to write: the runner's plan, the row's condition (replicates renamed) and its trial list."""

    record_id: str
    plan: Any  # runner.plan.RecordPlan
    condition: str
    trials: Any  # runner.trials.TrialList


def _budget_factor(config: Any, records_per_label: int) -> float:
    """One factor on every budget so that the full paper-scale bundle holds about PAPER_SCORES scores."""
    per_cell = []
    for experiment in config.experiments:
        groups = 2 if experiment.subgroup else 1
        per_cell += [sum(experiment.budget(cell.condition)) for cell in config.experiment_cells(experiment)] * groups
    padding = [
        e.target_trials + e.nontarget_trials
        for e in config.experiments
        if e.id in REPLICATED
        for _ in e.test_conditions
    ]
    extra = records_per_label - len(per_cell)
    total = sum(per_cell) + sum(padding[i % len(padding)] for i in range(max(extra, 0)))
    return PAPER_SCORES / (total * PAPER_LABELS)


def _scaled(experiment: Any, factor: float) -> Any:
    def scaled(n: int) -> int:
        return max(MIN_BUDGET, round(n * factor))

    return replace(
        experiment,
        target_trials=scaled(experiment.target_trials),
        nontarget_trials=scaled(experiment.nontarget_trials),
        budgets=tuple((name, scaled(target), scaled(nontarget)) for name, target, nontarget in experiment.budgets),
    )


def _listed(config: Any, pools: dict[str, pd.DataFrame], seed: int) -> dict[str, Any]:
    """A stand-in for the official list of each experiment that scores one: a balanced draw of its (scaled)
    published size from the synthetic pool, since no published list names synthetic utterances."""
    from runner.design.trials import sample_trials

    return {
        e.id: sample_trials(
            pools[e.corpus], experiment_id=e.id, n_target=e.target_trials, n_nontarget=e.nontarget_trials, seed=seed
        )
        for e in config.experiments
        if e.trial_list is not None
    }


def plan_records(
    config: Any, pools: dict[str, pd.DataFrame], *, pad_to: int | None, seed: int, same_list_contrasts: bool
) -> list[Planned]:
    """The runner's plan, then replicate draws of the REPLICATED designs until ``pad_to`` cells per label.

    With ``same_list_contrasts`` every cell of a two-factor design (per subgroup) is scored on its reference
    cell's list, so every contrast is a same-list contrast whose bootstrap statistics the audit computes.
    """
    from runner.design.trials import sample_selected_trials
    from runner.plan import plan_run, record_id_for

    reference: dict[tuple[str, str | None], Any] = {}
    plans = []
    for p in plan_run(config, pools, _listed(config, pools, seed)):
        trials = p.trials
        if same_list_contrasts and p.experiment.factor_b is not None:
            trials = reference.setdefault((p.experiment.id, p.subgroup), p.trials)  # cells come reference first
        plans.append(Planned(p.record_id, p, p.cell.condition, trials))
    n_labels = len(config.encoders)
    missing = 0 if pad_to is None else pad_to - len(plans) // n_labels
    cells = [(e, c) for e in config.experiments if e.id in REPLICATED for c in config.experiment_cells(e)]
    lists: dict[tuple[Any, ...], Any] = {}
    template = {(p.plan.experiment.id, p.plan.cell.condition): p.plan for p in plans}
    for index in range(max(missing, 0) if cells else 0):
        experiment, cell = cells[index % len(cells)]
        replicate = 2 + index // len(cells)
        key = (replicate, experiment.id, cell.enrol_select, cell.test_select)
        if key not in lists:
            lists[key] = sample_selected_trials(
                pools[experiment.corpus],
                experiment_id=experiment.id,
                n_target=experiment.target_trials,
                n_nontarget=experiment.nontarget_trials,
                seed=seed + replicate,
                enrol_select=cell.enrol_select,
                test_select=cell.test_select,
            )
        condition = f"{cell.condition}#r{replicate}"
        plan = template[(experiment.id, cell.condition)]
        for encoder in config.encoders:
            record_id = record_id_for(experiment.id, encoder.label, condition, None)
            plans.append(Planned(record_id, replace(plan, encoder=encoder), condition, lists[key]))
    return plans


def _trial_arrays(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Speaker codes of both sides, labels, spoof mask and the number of speakers of one trial list."""
    codes, uniques = pd.factorize(pd.concat([frame["enrol_speaker"], frame["test_speaker"]], ignore_index=True))
    n = len(frame)
    spoof = (frame["trial_kind"] == "spoof").to_numpy() if "trial_kind" in frame.columns else np.zeros(n, bool)
    return codes[:n], codes[n:], frame["label"].to_numpy(np.int8), spoof, len(uniques)


@dataclass(frozen=True)
class RecordScores:
    """One record's per-trial scores in trial-list order; ``scored`` is False where the test file failed."""

    labels: np.ndarray
    scores: np.ndarray
    scored: np.ndarray

    def parquet_bytes(self) -> bytes:
        """The scores file as the runner writes it; the trials that failed to decode as ``test-failed``."""
        status = np.where(self.scored, "scored", "test-failed")
        return scores_file_bytes(self.labels, self.scores, status, RUN_ID)


def draw_scores(planned: list[Planned], seed: int) -> list[RecordScores]:
    """Per-trial scores of every record: encoder quality, condition penalty, speaker effects on both sides."""
    rng = np.random.default_rng(seed)
    labels_in_order = list(dict.fromkeys(p.plan.encoder.label for p in planned))
    quality = dict(zip(labels_in_order, rng.uniform(1.8, 3.6, len(labels_in_order)), strict=True))
    penalties: dict[tuple[str, str], float] = {}
    speaker_effects: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    arrays: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]] = {}
    drawn = []
    for item in planned:
        list_id = item.trials.trial_list_id
        if list_id not in arrays:
            arrays[list_id] = _trial_arrays(item.trials.frame)
            n_speakers = arrays[list_id][4]
            speaker_effects[list_id] = (rng.normal(0, 0.4, n_speakers), rng.normal(0, 0.4, n_speakers))
        enrol, test, labels, spoof, _ = arrays[list_id]
        base = item.plan.cell.condition
        penalty = penalties.setdefault(
            (item.plan.experiment.id, base), 0.0 if base in ("clean", "clean->clean") else float(rng.uniform(0, 1.2))
        )
        separation = max(quality[item.plan.encoder.label] - penalty + rng.normal(0, 0.1), 0.3)
        enrol_effect, test_effect = speaker_effects[list_id]
        raw = (
            separation * labels
            + 0.6 * separation * spoof
            + enrol_effect[enrol]
            + test_effect[test]
            + rng.standard_normal(len(labels))
        )
        # A cosine in float32 precision, as the runner's float32 embeddings give it (stored as float64).
        scores = np.tanh(raw / 8).astype(np.float32).astype(np.float64)
        scored = np.ones(len(labels), dtype=bool)
        if rng.random() < 0.2:  # a few test files fail to decode in some records: every trial of theirs unscored
            chosen = rng.choice(len(labels), size=max(1, len(labels) // 2000), replace=False)
            test_utts = item.trials.frame["test_utt"].to_numpy()
            scored = ~np.isin(test_utts, test_utts[chosen])
            scores[~scored] = np.nan
        drawn.append(RecordScores(labels, scores, scored))
    return drawn


def _operators(planned: list[Planned], records_scores: list[RecordScores]) -> dict[str, Any]:
    """operators.json: every chain applied to every side that uses it, per chain; per record, the test sides that
    failed to decode (those of its unscored trials) counted as failed, the others as applied."""
    from runner.operators import chain_id

    chains: dict[str, dict[str, Any]] = {}
    records: dict[str, dict[str, Any]] = {}
    sides: dict[tuple[str, str], int] = {}
    for item, record in zip(planned, records_scores, strict=True):
        plan, frame = item.plan, item.trials.frame
        corpus = plan.experiment.corpus
        test_corpus = frame["test_corpus"].iloc[0] if "test_corpus" in frame.columns else corpus
        keys = []
        for specs, column, where in (
            (plan.cell.enrol_chain, "enrol_utt", corpus),
            (plan.cell.test_chain, "test_utt", test_corpus),
        ):
            key = f"{where}:{chain_id(list(specs))}"
            chain = chains.setdefault(
                key, {"spec": list(specs), "applied": 0, "failed": 0, "fallback": 0, "reasons": {}}
            )
            count_key = (key, item.trials.trial_list_id + column)
            if count_key not in sides:
                sides[count_key] = int(frame[column].nunique())
                chain["applied"] += sides[count_key]
            keys.append((key, sides[count_key]))
        failed = len(np.unique(frame["test_utt"].to_numpy()[~record.scored]))
        records[item.record_id] = {
            "chains": sorted({key for key, _ in keys}),
            "applied": sum(count for _, count in keys) - failed,
            "failed": failed,
            "fallback": 0,
        }
    return {"policy": "drop-trial", "chains": dict(sorted(chains.items())), "records": records}


def _subgroup_population(config: Any, pool: pd.DataFrame) -> pd.DataFrame:
    """The utterances of ``pool`` the subgroup-gap designs draw from (their own ``select``: full.toml's E16 the
    test split), where the development speakers must lie."""
    from runner.design.trials import selected

    selections = {e.select for e in config.experiments if e.subgroup is not None} or {()}
    keep = np.zeros(len(pool), dtype=bool)
    for selection in selections:
        keep |= selected(pool, selection)
    return pool[keep]


def _config_text(config_path: Path, dev_speakers: list[str], held_out_levels: list[str]) -> str:
    """The configuration with [analysis] declaring the synthetic corpus's development speakers and the held-out
    levels of the experiments rehearsed, in place of the configuration's own lists (a rehearsal of some experiments
    must not declare what only the others have)."""
    text = config_path.read_text(encoding="utf-8")
    for key in ("dev_speakers", "held_out_levels"):
        text = re.sub(rf"(?ms)^{key} = \[.*?\]\n", "", text, count=1)
    declared = {"dev_speakers": dev_speakers, "held_out_levels": held_out_levels}
    lines = "".join(f"{key} = [{', '.join(json.dumps(name) for name in names)}]\n" for key, names in declared.items())
    return text.replace("[analysis]\n", f"[analysis]\n{lines}", 1)


@dataclass(frozen=True)
class PaperBundle:
    """What was written: the bundle, its key pair (outside it) and its size."""

    root: Path
    private_key: Path
    public_key: Path
    n_records: int
    n_trial_lists: int
    n_scores: int
    seconds: float


def _check_shapes(config: Any) -> None:
    """Every corpus the configuration's experiments read has a synthetic shape here; else one input error."""
    from schemas import InputError

    used = [name for name in config.corpora if config.experiments_using(name)]
    unknown = [name for name in used if name not in CORPORA and name not in SPOOF_FOLDERS]
    if unknown:
        known = ", ".join([*CORPORA, *SPOOF_FOLDERS])
        raise InputError(
            str(config.source), f"no rehearsal shape for corpora {', '.join(unknown)} (the rehearsal knows {known})"
        )


def write_paper_bundle(
    out: Path,
    *,
    config_path: Path = FULL_CONFIG,
    scale: float = 1.0,
    labels: int = PAPER_LABELS,
    experiments: Sequence[str] | None = None,
    pad: bool = True,
    same_list_contrasts: bool = True,
    seed: int = 7,
) -> PaperBundle:
    """Write the bundle of ``config_path`` into ``out`` (created; must not exist) and its keys at ``out.key`` /
    ``out.pub``.

    ``scale`` multiplies every trial budget (1.0 with ``pad``: about 12 M scores in all), ``labels`` keeps the
    first encoder labels of the configuration, ``experiments`` a subset of its designs; ``pad`` adds the replicate
    draws that bring the full design to the paper's 339 cells per label. ``same_list_contrasts`` (the workload
    issue 11 measured: 384 same-list contrasts) scores every cell of a two-factor design on one list; without it
    the lists are exactly the configuration's, where a population factor (age, emotion, session) pairs each
    level's terms on that population's list and the audit analyses them as population contrasts.
    """
    from provenance import BundleWriter
    from runner.design import load_config, placeholder_roots

    started = time.perf_counter()
    out = Path(out)
    with placeholder_roots("/nonexistent/paper-bundle"):
        config = load_config(config_path)
    _check_shapes(config)
    writer = BundleWriter.create(out)
    factor = _budget_factor(config, PAPER_RECORDS // PAPER_LABELS) * scale
    chosen = [e for e in config.experiments if experiments is None or e.id in experiments]
    config = replace(
        config, seed=seed, encoders=config.encoders[:labels], experiments=tuple(_scaled(e, factor) for e in chosen)
    )
    pools = synthetic_pools()
    planned = plan_records(
        config,
        pools,
        pad_to=PAPER_RECORDS // PAPER_LABELS if pad else None,
        seed=seed,
        same_list_contrasts=same_list_contrasts,
    )
    return seal_bundle(writer, config, Path(config_path), pools, planned, draw_scores(planned, seed), started)


def seal_bundle(
    writer: Any,
    config: Any,
    config_path: Path,
    pools: dict[str, pd.DataFrame],
    planned: list[Planned],
    records: list[RecordScores],
    started: float,
) -> PaperBundle:
    """Write the planned records into ``writer`` (a ``provenance.BundleWriter``) and sign the bundle: the corpus
    tables the lists name, the trial lists, each record's scores file, ``results.csv`` with the true metrics of
    those scores, the configuration (``[analysis]`` declaring the synthetic development speakers and the held-out
    levels rehearsed), the environment, checkpoints and operators; the keys at ``out.key`` / ``out.pub``.

    Any generator of synthetic records (``write_paper_bundle``, ``runner.grid``) seals its bundle here, so every
    bundle is written and signed as the runner writes them."""
    from audit.metrics import grouped_metrics
    from provenance import generate_keypair
    from schemas import (
        CONFIG_FILE,
        ENVIRONMENT_FILE,
        UTTERANCES_FILE,
        corpus_folder_name,
        scores_name,
        speaker_counts,
        trial_list_name,
    )

    out, seed = writer.layout.root, config.seed
    used = {p.plan.experiment.corpus for p in planned}
    for item in planned:
        if "test_corpus" in item.trials.frame.columns:
            used |= set(item.trials.frame["test_corpus"])
    for name in sorted(used):
        writer.write_csv(f"{corpus_folder_name(name, single=False)}/{UTTERANCES_FILE}", pools[name])
    trial_lists = {item.trials.trial_list_id: item.trials for item in planned}
    for list_id, trials in trial_lists.items():
        writer.write(trial_list_name(list_id), trials.csv_bytes)

    digests = [
        writer.write(scores_name(item.record_id), record.parquet_bytes()).blake3
        for item, record in zip(planned, records, strict=True)
    ]
    scored = np.concatenate([record.scored for record in records])
    metrics = grouped_metrics(
        np.concatenate([record.scores for record in records])[scored],
        np.concatenate([record.labels for record in records])[scored],
        np.repeat(np.arange(len(records)), [len(record.labels) for record in records])[scored],
        len(records),
        p_target=config.p_target,
        c_miss=config.c_miss,
        c_fa=config.c_fa,
    )
    checkpoints = {
        spec.label: {
            "kind": spec.kind,
            "class": "synthetic",
            "checkpoint_blake3": blake3.blake3(f"synthetic-{spec.label}".encode()).hexdigest(),
            "weights": {"origin": "rehearsal", "weights": "no encoder ran: the scores are simulated"},
        }
        for spec in config.encoders
    }
    rows = []
    speakers = {list_id: speaker_counts(trials.frame) for list_id, trials in trial_lists.items()}
    for index, (item, record, digest) in enumerate(zip(planned, records, digests, strict=True)):
        design, cell = item.plan.experiment, item.plan.cell
        values = {name: metric[index].item() for name, metric in metrics.items()}
        rows.append(
            {
                "record_id": item.record_id,
                "experiment": design.id,
                "model": item.plan.encoder.label,
                "model_family": item.plan.encoder.family,
                "corpus": design.corpus,
                "condition": item.condition,
                "factor_a": design.factor_a.name if design.factor_a else None,
                "level_a": cell.level_a if design.factor_a else None,
                "factor_b": design.factor_b.name if design.factor_b else None,
                "level_b": cell.level_b if design.factor_b else None,
                "enrol_condition": cell.enrol_condition,
                "test_condition": cell.test_condition,
                "subgroup": item.plan.subgroup,
                **({"complement_of": cell.complement_of} if cell.complement_of is not None else {}),
                "eer": values[f"eer_{config.eer_method}"],
                **values,
                "eer_method": config.eer_method,
                "n_unscored": int((~record.scored).sum()),
                "p_target": config.p_target,
                "c_miss": config.c_miss,
                "c_fa": config.c_fa,
                "checkpoint_blake3": checkpoints[item.plan.encoder.label]["checkpoint_blake3"],
                "trial_list_id": item.trials.trial_list_id,
                "scores_blake3": digest,
                "run_id": RUN_ID,
                "seed": seed,
                **speakers[item.trials.trial_list_id],
            }
        )
    writer.write_json(ENVIRONMENT_FILE, {"python": {"version": sys.version.split()[0]}, "seeds": {"run": seed}})
    # Development speakers only from a corpus the bundle holds (an E13-only bundle has no VoxCeleb to set aside).
    voxceleb = (
        np.sort(_subgroup_population(config, pools["voxceleb1"])["speaker"].unique())
        if "voxceleb1" in used
        else np.array([])
    )
    dev_speakers = voxceleb[: round(DEV_SHARE * len(voxceleb))].tolist()
    levels = {level for p in planned for f in (p.plan.experiment.factor_a, p.plan.experiment.factor_b) if f
              for level in f.levels}  # fmt: skip
    text = _config_text(config_path, dev_speakers, [lv for lv in config.analysis.held_out_levels if lv in levels])
    writer.write(CONFIG_FILE, text.encode("utf-8"))
    private_key, public_key = out.with_name(out.name + ".key"), out.with_name(out.name + ".pub")
    generate_keypair(private_key, public_key)
    writer.seal(
        results=pd.DataFrame(rows),
        checkpoints=checkpoints,
        operators=_operators(planned, records),
        run_config=tomllib.loads(text),
        signing_key=private_key,
    )
    return PaperBundle(
        out,
        private_key,
        public_key,
        n_records=len(planned),
        n_trial_lists=len(trial_lists),
        n_scores=sum(len(record.labels) for record in records),
        seconds=time.perf_counter() - started,
    )


@dataclass(frozen=True)
class Rehearsal:
    """A rehearsal: the bundle written, the audit's report of it and its exit code."""

    bundle: PaperBundle
    report: dict[str, Any]
    exit_code: int
    audit_seconds: float

    def lines(self) -> list[str]:
        """What was rehearsed and what the audit found, for the terminal."""
        bundle, report = self.bundle, self.report
        statistics = report.get("statistics") or {}
        families = statistics.get("families") or {}
        contrasts = sum(family["n_contrasts"] for family in families.values())
        population = sum(family["n_population_contrasts"] for family in families.values())
        errors = sum(flag["severity"] == "error" for flag in report["flags"])
        return [
            f"rehearsal bundle {bundle.root}: {bundle.n_records} records, {bundle.n_trial_lists} trial lists, "
            f"{bundle.n_scores:,} synthetic scores (no corpus, checkpoint or encoder read) in {bundle.seconds:.1f} s",
            f"statistics: {len(families)} families, {contrasts} contrasts ({population} population contrasts), "
            f"{len(statistics.get('fixed_threshold') or [])} fixed-threshold settings, "
            f"{len(statistics.get('subgroup_gaps') or [])} subgroup gaps",
            f"audit verify: {report['verdict'].upper()} ({errors} error flags) in {self.audit_seconds:.1f} s; "
            f"report {bundle.root / 'report'}; public key {bundle.public_key}",
        ]


def rehearse(
    config_path: Path,
    out: Path,
    *,
    scale: float = 0.01,
    labels: int = PAPER_LABELS,
    experiments: Sequence[str] | None = None,
    pad: bool = False,
    same_list_contrasts: bool = False,
    seed: int = 7,
) -> Rehearsal:
    """Write the synthetic bundle of ``config_path`` into ``out`` (which must not exist) and audit it as a reviewer
    would: ``audit verify out/results.csv --bundle out --key out.pub --out out/report``. Defaults: the
    configuration's own cells and list sharing (population contrasts included) at 1 % of the paper's budgets."""
    from audit import AuditRequest, exit_code, verify
    from reports import finish_report
    from schemas import InputError

    out = Path(out)
    if out.exists() or out.is_symlink():
        raise InputError(str(out), "--out exists; a rehearsal writes a new folder (remove it or choose another)")
    if scale <= 0:
        raise InputError("--scale", f"expected a positive budget multiplier, got {scale}")
    bundle = write_paper_bundle(
        out,
        config_path=config_path,
        scale=scale,
        labels=labels,
        experiments=experiments,
        pad=pad,
        same_list_contrasts=same_list_contrasts,
        seed=seed,
    )
    started = time.perf_counter()
    report = verify(AuditRequest(out / "results.csv", bundle=out, key=bundle.public_key))
    finish_report(report, out / "report")
    return Rehearsal(bundle, report, exit_code(report), time.perf_counter() - started)
