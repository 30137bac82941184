"""The grid bundle: a second paper-scale synthetic bundle, of another shape than the rehearsal's (issue 43 point 2).

``write_paper_bundle`` (``runner.rehearsal``) lets the runner's planner draw one list per condition cell at the
configuration's budgets and writes cosines in float32 precision. This generator reads the same configuration
(``configs/full.toml``: its experiments, cells, subgroups and 12 encoder labels) but draws everything else itself,
as a bundle built by hand might be:

- **one trial list per experiment** (and per subgroup): every cell of an experiment, so all terms of each two-factor
  interaction (the whole grid of ``factor_a x factor_b``, reference levels and complement cells included), and every
  condition of a single-factor design, are scored on that list by all 12 encoders. A spoof cell keeps the
  experiment list's targets, pair for pair, and replaces its non-targets by spoofs of the enrolment speakers (one
  spoof list per experiment and spoof source), as the audit's spoofing-aware metrics require;
- the list's size is the experiment's largest budget (E16: its clean budget), all budgets scaled by one factor so
  that the padded bundle at scale 1 holds about ``GRID_SCORES`` scores;
- up to ``GRID_RECORDS`` records per label, the rest of the configuration's 233 cells padded by replicate draws of
  the mismatch designs (``PADDED``; the condition suffixed ``#rN``), one fresh list per replicate and experiment;
- **float64 scores at full precision** (no float32 rounding, so nearly every score is distinct): an encoder
  quality, additive condition penalties with an interaction term per cell of a grid, scaled per encoder, speaker
  effects on both sides shared by all encoders with a small encoder-specific part, a per-speaker target difficulty
  (so some speakers are goats), an effect per test utterance and trial noise; in a few records a few test files fail
  to decode (NaN, ``test-failed``).

The bundle is written and signed by ``runner.rehearsal.seal_bundle`` (the rehearsal's synthetic corpus tables, the
runner's ``schemas.scores_file_bytes`` Parquet with zstd, ``provenance.BundleWriter``), so ``audit verify --bundle
DIR --key DIR.pub`` checks it like any run's bundle. The same seed gives the same bundle, byte for byte, apart from
the fresh key and its signature. Nothing in it is measured speech.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from runner.rehearsal import FULL_CONFIG, PaperBundle, Planned, RecordScores, seal_bundle, synthetic_pools

GRID_LABELS = 12
GRID_RECORDS = 339  # per encoder label, as the paper's 4,068 records
GRID_SCORES = 12_000_000
PADDED = ("E01", "E03", "E04", "E05", "E06", "E07")  # mismatch designs whose replicate draws pad to GRID_RECORDS
MIN_PER_CLASS = 40  # per class and list: small scales keep both classes and E16's development trials


def _distinct(draw: Any, count: int, what: str, unordered: int | None = None) -> np.ndarray:
    """``count`` distinct pair codes ``i * n + j``, the first that repeated ``draw(k)`` calls give (in drawing
    order); with ``unordered=n`` also no pair whose reverse came first."""
    codes = np.empty(0, dtype=np.int64)
    for _ in range(200):
        if len(codes) >= count:
            return codes[:count]
        merged = np.concatenate([codes, draw(2 * (count - len(codes)) + 16)])
        keys = merged
        if unordered is not None:
            i, j = merged // unordered, merged % unordered
            keys = np.minimum(i, j) * unordered + np.maximum(i, j)
        _, first = np.unique(keys, return_index=True)
        codes = merged[np.sort(first)]
    raise ValueError(f"{what}: could not draw {count} distinct pairs (the population is too small for the budget)")


def draw_pairs(
    speakers: np.ndarray, n_target: int, n_nontarget: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Enrolment and test positions and labels of ``n_target`` target and ``n_nontarget`` non-target trials among
    utterances whose speaker codes are ``speakers`` (grouped: each speaker's utterances contiguous), shuffled.

    A target pairs two different utterances of one speaker, a non-target two speakers; no unordered pair twice."""
    n = len(speakers)
    starts = np.flatnonzero(np.r_[True, speakers[1:] != speakers[:-1]])
    sizes = np.diff(np.r_[starts, n])
    first, size = np.repeat(starts, sizes), np.repeat(sizes, sizes)
    paired = np.flatnonzero(size > 1)

    def targets(k: int) -> np.ndarray:  # an utterance, then another of its speaker's
        i = paired[rng.integers(0, len(paired), k)]
        j = first[i] + (i - first[i] + 1 + rng.integers(0, size[i] - 1)) % size[i]
        return i.astype(np.int64) * n + j

    def nontargets(k: int) -> np.ndarray:
        i, j = rng.integers(0, n, k), rng.integers(0, n, k)
        keep = speakers[i] != speakers[j]
        return i[keep].astype(np.int64) * n + j[keep]

    chosen = [
        _distinct(targets, n_target, "target trials", unordered=n),
        _distinct(nontargets, n_nontarget, "non-target trials", unordered=n),
    ]
    codes = np.concatenate(chosen)
    labels = np.repeat(np.array([1, 0], dtype=np.int64), [n_target, n_nontarget])
    order = rng.permutation(len(codes))
    return codes[order] // n, codes[order] % n, labels[order]


def _population(pool: pd.DataFrame, experiment: Any, subgroup: tuple[str, str] | None) -> pd.DataFrame:
    """The utterances one experiment's list is drawn from: its ``select`` (and subgroup), grouped by speaker."""
    from runner.design import selected

    keep = selected(pool, experiment.select)
    if subgroup is not None:
        keep &= (pool[subgroup[0]].astype(str) == subgroup[1]).to_numpy()
    return pool[keep].sort_values(["speaker", "utt_id"], kind="stable").reset_index(drop=True)


def genuine_list(population: pd.DataFrame, n_target: int, n_nontarget: int, subgroup: str | None, rng: Any) -> Any:
    """One experiment's list: ``n_target`` targets and ``n_nontarget`` non-targets drawn from ``population``, numbered
    and validated as the runner makes a list (``runner.design``)."""
    from runner.design import numbered_trial_list, pairs_frame

    codes = pd.factorize(population["speaker"])[0]
    enrol, test, labels = draw_pairs(codes, n_target, n_nontarget, rng)
    return numbered_trial_list(pairs_frame(population, enrol, test, labels, subgroup))


def spoof_list(genuine: Any, population: pd.DataFrame, spoofs: pd.DataFrame, source: Any, corpus: str, rng: Any) -> Any:
    """The targets of ``genuine`` (its rows, in its order) and as many spoof trials as it has non-targets: an
    utterance of ``population`` enrolled against a file of the spoof folder (within ``source.select``) that imitates
    its speaker; targets and spoofs shuffled together."""
    from runner.design import numbered_trial_list, pairs_frame, selected

    files = spoofs[selected(spoofs, source.select)].sort_values(["speaker", "utt_id"], kind="stable")
    files = files[files["speaker"].isin(population["speaker"])].reset_index(drop=True)
    enrol_side = population[population["speaker"].isin(files["speaker"])].reset_index(drop=True)
    frame = genuine.frame
    count = int((frame["label"] == 0).sum())
    by_speaker = files.groupby("speaker", sort=False).indices
    speaker_of = enrol_side["speaker"].to_numpy()
    n_files = len(files)

    def draw(k: int) -> np.ndarray:
        enrol = rng.integers(0, len(enrol_side), k)
        choices = [by_speaker[speaker_of[e]] for e in enrol]
        test = np.array([c[rng.integers(0, len(c))] for c in choices], dtype=np.int64)
        return enrol.astype(np.int64) * n_files + test

    chosen = _distinct(draw, count, f"spoof trials of {source.corpus}")
    enrol, test = chosen // n_files, chosen % n_files
    targets = frame.loc[frame["label"] == 1].drop(columns="trial_index")
    both_sides = pd.concat([enrol_side[["utt_id", "speaker"]], files[["utt_id", "speaker"]]], ignore_index=True)
    subgroup = targets["subgroup"].iloc[0] if "subgroup" in targets.columns else None
    spoof_rows = pairs_frame(both_sides, enrol, len(enrol_side) + test, np.zeros(count, dtype=np.int64), subgroup)
    both = pd.concat(
        [
            targets.assign(trial_kind="target", test_corpus=corpus),
            spoof_rows.assign(trial_kind="spoof", test_corpus=source.corpus),
        ],
        ignore_index=True,
    )
    return numbered_trial_list(both.iloc[rng.permutation(len(both))].reset_index(drop=True))


def _list_size(experiment: Any, factor: float) -> tuple[int, int]:
    """(targets, non-targets) of an experiment's one list: its largest budget, scaled."""
    target, nontarget = max(
        [(experiment.target_trials, experiment.nontarget_trials), *((t, n) for _, t, n in experiment.budgets)],
        key=sum,
    )
    return max(MIN_PER_CLASS, round(target * factor)), max(MIN_PER_CLASS, round(nontarget * factor))


def _groups(experiment: Any, pool: pd.DataFrame, source: str) -> list[tuple[str, str] | None]:
    from runner.plan import subgroup_values

    if experiment.subgroup is None:
        return [None]
    return [(experiment.subgroup, value) for value in subgroup_values(pool, experiment.subgroup, source)]


def _layout(config: Any, pools: dict[str, pd.DataFrame], records_per_label: int | None) -> list[tuple[Any, ...]]:
    """Every list to draw, as (experiment, subgroup, replicate, its cells), the replicates of ``PADDED`` appended
    until ``records_per_label`` cells per label (none without it)."""
    layout = []
    for experiment in config.experiments:
        for group in _groups(experiment, pools[experiment.corpus], str(config.source)):
            layout.append((experiment, group, 1, config.experiment_cells(experiment)))
    missing = 0 if records_per_label is None else records_per_label - sum(len(cells) for *_, cells in layout)
    padded = [(e, config.experiment_cells(e)) for e in config.experiments if e.id in PADDED]
    replicate = 2
    while missing > 0 and padded:
        for experiment, cells in padded:
            if missing <= 0:
                break
            layout.append((experiment, None, replicate, cells[:missing]))
            missing -= len(cells[:missing])
        replicate += 1
    return layout


def plan_grid(
    config: Any, pools: dict[str, pd.DataFrame], layout: list[tuple[Any, ...]], factor: float, seed: int
) -> list[Planned]:
    """The records of ``layout``: one genuine list per entry (a spoof list per spoof source on it), every cell of
    the entry scored on it by every encoder."""
    from runner.plan import RecordPlan, record_id_for

    rng = np.random.default_rng(seed)
    planned = []
    for experiment, group, replicate, cells in layout:
        population = _population(pools[experiment.corpus], experiment, group)
        subgroup = f"{group[0]}={group[1]}" if group else None
        n_target, n_nontarget = _list_size(experiment, factor)
        genuine = genuine_list(population, n_target, n_nontarget, subgroup, rng)
        spoofed: dict[Any, Any] = {}
        for cell in cells:
            trials = genuine
            if cell.spoof is not None:
                if cell.spoof not in spoofed:
                    spoofed[cell.spoof] = spoof_list(
                        genuine, population, pools[cell.spoof.corpus], cell.spoof, experiment.corpus, rng
                    )
                trials = spoofed[cell.spoof]
            condition = cell.condition if replicate == 1 else f"{cell.condition}#r{replicate}"
            for encoder in config.encoders:
                record_id = record_id_for(experiment.id, encoder.label, condition, subgroup)
                plan = RecordPlan(record_id, experiment, cell, encoder, trials, subgroup)
                planned.append(Planned(record_id, plan, condition, trials))
    return planned


def _grid_factor(layout: list[tuple[Any, ...]]) -> float:
    """One factor on every list size so that the layout of the whole configuration, padded, holds about
    GRID_SCORES scores over GRID_LABELS labels (a subset of its labels or designs keeps the same list sizes)."""
    per_label = sum(sum(_list_size(experiment, 1.0)) * len(cells) for experiment, _, _, cells in layout)
    return GRID_SCORES / (per_label * GRID_LABELS)


def draw_grid_scores(planned: list[Planned], seed: int) -> list[RecordScores]:
    """Per-trial float64 scores of every record (see the module's docstring for the model)."""
    rng = np.random.default_rng(seed + 1)
    labels_in_order = list(dict.fromkeys(p.plan.encoder.label for p in planned))
    quality = dict(zip(labels_in_order, rng.uniform(2.8, 4.8, len(labels_in_order)), strict=True))
    sensitivity = dict(zip(labels_in_order, rng.uniform(0.6, 1.4, len(labels_in_order)), strict=True))
    main_effects: dict[tuple[str, str | None], float] = {}
    interactions: dict[tuple[str, str], float] = {}
    speakers: dict[str, tuple[np.ndarray, ...]] = {}
    drawn = []
    for item in planned:
        frame, list_id = item.trials.frame, item.trials.trial_list_id
        if list_id not in speakers:
            codes, uniques = pd.factorize(pd.concat([frame["enrol_speaker"], frame["test_speaker"]]))
            test_utt = pd.factorize(frame["test_utt"])[0]
            k = len(uniques)
            spoof = (frame["trial_kind"] == "spoof").to_numpy() if "trial_kind" in frame.columns else None
            speakers[list_id] = (
                codes[: len(frame)],
                codes[len(frame) :],
                test_utt,
                rng.normal(0, 0.5, k),  # enrolment speaker effect, all encoders
                rng.normal(0, 0.5, k),  # test speaker effect
                rng.normal(0, 0.6, k),  # target difficulty of a speaker (goats below zero)
                rng.normal(0, 0.3, test_utt.max() + 1),  # test utterance effect
                frame["label"].to_numpy(np.int8),
                np.zeros(len(frame), bool) if spoof is None else spoof,
            )
        enrol, test, utt, enrol_effect, test_effect, difficulty, utt_effect, labels, spoof = speakers[list_id]
        experiment, cell, label = item.plan.experiment.id, item.plan.cell, item.plan.encoder.label
        levels = (cell.level_a, cell.level_b) if cell.level_a is not None else (cell.condition.split("#")[0],)
        varied = [level for level in levels if level not in (None, "none", "clean", "clean->clean")]
        penalty = sum(main_effects.setdefault((experiment, level), float(rng.uniform(0, 0.8))) for level in varied)
        if len(varied) == 2:  # a cell of a grid away from both reference levels: an interaction term
            penalty += interactions.setdefault((experiment, item.condition), float(rng.normal(0, 0.25)))
        separation = max(quality[label] - sensitivity[label] * penalty + rng.normal(0, 0.1), 0.3)
        own = rng.normal(0, 0.15, len(enrol_effect))  # this encoder's part of the speaker effects
        raw = (
            (separation + difficulty[enrol]) * labels
            + 0.7 * separation * spoof
            + enrol_effect[enrol]
            + test_effect[test]
            + own[test]
            + utt_effect[utt]
            + rng.standard_normal(len(labels))
        )
        scores = np.tanh(raw / 6)  # float64, full precision
        scored = np.ones(len(labels), dtype=bool)
        if rng.random() < 0.1:  # a few test files fail to decode in some records: every trial of theirs unscored
            failed = rng.choice(utt.max() + 1, size=max(1, (utt.max() + 1) // 500), replace=False)
            scored = ~np.isin(utt, failed)
            scores[~scored] = np.nan
        drawn.append(RecordScores(labels, scores, scored))
    return drawn


def write_grid_bundle(
    out: Path,
    *,
    config_path: Path = FULL_CONFIG,
    scale: float = 1.0,
    labels: int = GRID_LABELS,
    experiments: Sequence[str] | None = None,
    pad: bool = True,
    seed: int = 11,
) -> PaperBundle:
    """Write the grid bundle of ``config_path`` into ``out`` (created; must not exist), its keys at ``out.key`` /
    ``out.pub``.

    ``scale`` multiplies every list size (1.0 with ``pad``: about 12 M scores in all), ``labels`` keeps the first
    encoder labels of the configuration, ``experiments`` a subset of its designs; ``pad`` adds the replicate lists
    that bring the full design to ``GRID_RECORDS`` records per label."""
    from provenance import BundleWriter
    from runner.design import load_config, placeholder_roots

    started = time.perf_counter()
    out = Path(out)
    with placeholder_roots("/nonexistent/grid-bundle"):
        config = load_config(config_path)
    writer = BundleWriter.create(out)
    pools = synthetic_pools()
    factor = _grid_factor(_layout(config, pools, GRID_RECORDS)) * scale
    chosen = tuple(e for e in config.experiments if experiments is None or e.id in experiments)
    config = replace(config, seed=seed, encoders=config.encoders[:labels], experiments=chosen)
    layout = _layout(config, pools, GRID_RECORDS if pad else None)
    planned = plan_grid(config, pools, layout, factor, seed)
    return seal_bundle(writer, config, Path(config_path), pools, planned, draw_grid_scores(planned, seed), started)
