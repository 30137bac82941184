"""Trial lists: sampled from the utterance table with the run seed and the experiment design only.

Nothing about the encoder or the condition enters the sampler, so the four terms of every contrast and every encoder
score the same pairs. Budgets are exact: a design that asks for more pairs than the corpus has is an error, never a
silently smaller list. Pairs are unordered and distinct; which side is enrolment is a seeded coin flip.

Metadata conditions restrict the enrolment and the test side to a selection of utterances
(``sample_selected_trials``): pairs are then ordered (enrolment from one selection, test from the other), targets
pair the same speaker's different utterances and non-targets different speakers. When both sides select the same
utterances the sampler is the unordered one above, on the selected utterances.

Spoof cells (``add_spoof_trials``) keep the target trials of their genuine list and replace its non-targets by
spoof trials: a genuine enrolment against a file of a spoof folder that imitates the enrolment speaker.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from provenance import derived_id, derived_rng, joined
from schemas import Error, TrialsSchema, csv_file_bytes

__all__ = [
    "ENUMERATION_LIMIT",
    "Selection",
    "SelectionError",
    "SpoofTargetError",
    "TrialBudgetError",
    "TrialList",
    "add_spoof_trials",
    "published_trial_list",
    "sample_selected_trials",
    "sample_trials",
    "seeded_rng",
    "select_pool",
    "selected",
    "selection_label",
]

# Below this many candidate pairs every pair is enumerated; above it pairs are drawn by rejection.
ENUMERATION_LIMIT = 2_000_000

# A metadata selection: ((column, (value, ...)), ...), sorted by column; empty selects every utterance.
Selection = tuple[tuple[str, tuple[str, ...]], ...]


class TrialBudgetError(Error, ValueError):
    """The design asks for more distinct pairs than the (sub)corpus holds."""


class SelectionError(Error, ValueError):
    """A metadata selection names a column the utterance table does not have."""


class SpoofTargetError(Error, ValueError):
    """Spoof files imitate speakers that the genuine corpus does not have (a manifest that names them otherwise)."""


def selection_label(selection: Selection) -> str:
    """``emotion=angry|sad;gender=F``, or ``all`` for the empty selection."""
    return ";".join(f"{column}={'|'.join(values)}" for column, values in selection) or "all"


def selected(pool: pd.DataFrame, selection: Selection) -> np.ndarray:
    """Which utterances of the pool the selection keeps (values compare as strings; missing values never match)."""
    keep = np.ones(len(pool), dtype=bool)
    for column, values in selection:
        if column not in pool.columns:
            raise SelectionError(f"selection column {column!r} is not in the utterance table")
        keep &= pool[column].astype("string").isin(list(values)).fillna(False).to_numpy(bool)
    return keep


def _in_subgroup(pool: pd.DataFrame, subgroup: tuple[str, str] | None) -> tuple[np.ndarray, str | None]:
    """Which utterances lie in ``subgroup=(column, value)`` (all without one), and its label ``column=value``."""
    if subgroup is None:
        return np.ones(len(pool), dtype=bool), None
    column, value = subgroup
    return (pool[column].astype("string") == value).fillna(False).to_numpy(bool), f"{column}={value}"


@dataclass(frozen=True)
class TrialList:
    """A sampled trial list, its CSV bytes and its content-derived id."""

    frame: pd.DataFrame
    csv_bytes: bytes
    trial_list_id: str


def seeded_rng(seed: int, *parts: str) -> np.random.Generator:
    """A generator that depends only on the run seed and the named parts."""
    return derived_rng(joined(str(seed), *parts))


def select_pool(utterances: pd.DataFrame, per_speaker: int | None, seed: int) -> pd.DataFrame:
    """At most ``per_speaker`` utterances of each speaker, chosen with the seed; order is by utt_id."""
    ordered = utterances.sort_values("utt_id", kind="stable")
    if per_speaker is None:
        return ordered.reset_index(drop=True)
    kept = []
    for speaker, group in ordered.groupby("speaker", sort=True):
        rng = seeded_rng(seed, "pool", str(speaker))
        take = min(per_speaker, len(group))
        kept.append(group.iloc[np.sort(rng.choice(len(group), size=take, replace=False))])
    return pd.concat(kept).sort_values("utt_id", kind="stable").reset_index(drop=True)


def _distinct_codes(draw: Callable[[], np.ndarray], n_pairs: int) -> np.ndarray:
    """``n_pairs`` distinct pair codes (sorted): the first ones that repeated calls of ``draw`` produce.

    Rejection sampling for corpora too large to enumerate their pairs, where the budget is a small share of them.
    """
    codes: np.ndarray = np.empty(0, dtype=np.int64)
    while len(codes) < n_pairs:
        merged = np.concatenate([codes, draw()])
        _, first = np.unique(merged, return_index=True)
        codes = merged[np.sort(first)]
    return np.sort(codes[:n_pairs])


def _pair_codes(i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    low, high = np.minimum(i, j), np.maximum(i, j)
    return low.astype(np.int64) * n + high


def _same_speaker_pair_codes(
    speaker_codes: np.ndarray, enrol_positions: np.ndarray, test_positions: np.ndarray, *, ordered: bool
) -> np.ndarray:
    """Codes ``i * n + j`` of every same-speaker pair of different utterances, ascending, built speaker by
    speaker (memory in the number of pairs, not in n squared). Unordered pairs have i < j. Ascending codes are
    the row-major order in which a full enumeration of (i, j) would list them."""
    n = len(speaker_codes)
    test_by_speaker = dict(iter(pd.Series(test_positions, dtype=np.int64).groupby(speaker_codes[test_positions])))
    parts = [np.empty(0, dtype=np.int64)]
    for speaker, enrol in pd.Series(enrol_positions, dtype=np.int64).groupby(speaker_codes[enrol_positions]):
        if speaker not in test_by_speaker:
            continue
        i, j = np.meshgrid(enrol.to_numpy(), test_by_speaker[speaker].to_numpy(), indexing="ij")
        keep = (i < j) if not ordered else (i != j)
        parts.append(i[keep] * n + j[keep])
    return np.sort(np.concatenate(parts))


def _sample_pairs(
    speaker_codes: np.ndarray, n_pairs: int, same_speaker: bool, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``n_pairs`` distinct unordered pairs (i < j) of utterance positions, same or different speaker."""
    n = len(speaker_codes)
    counts = np.bincount(speaker_codes)
    same_pairs = int((counts * (counts - 1) // 2).sum())
    available = same_pairs if same_speaker else n * (n - 1) // 2 - same_pairs
    kind = "target" if same_speaker else "non-target"
    if n_pairs > available:
        raise TrialBudgetError(f"asked for {n_pairs} {kind} trials, the utterances allow {available}")
    if same_speaker and available <= ENUMERATION_LIMIT:
        positions = np.arange(n)
        candidates = _same_speaker_pair_codes(speaker_codes, positions, positions, ordered=False)
        chosen = candidates[np.sort(rng.choice(len(candidates), size=n_pairs, replace=False))]
        return chosen // n, chosen % n
    if available <= ENUMERATION_LIMIT:
        i, j = np.triu_indices(n, k=1)
        keep = speaker_codes[i] != speaker_codes[j]
        i, j = i[keep], j[keep]
        chosen = np.sort(rng.choice(len(i), size=n_pairs, replace=False))
        return i[chosen], j[chosen]

    def draw() -> np.ndarray:
        i = rng.integers(0, n, size=2 * n_pairs)
        j = rng.integers(0, n, size=2 * n_pairs)
        keep = (i != j) & ((speaker_codes[i] == speaker_codes[j]) == same_speaker)
        return _pair_codes(i[keep], j[keep], n)

    codes = _distinct_codes(draw, n_pairs)
    return codes // n, codes % n


def _sample_enrol_side_nontargets(
    speaker_codes: np.ndarray, inside: np.ndarray, n_pairs: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``n_pairs`` distinct ordered non-target pairs whose enrolment side lies inside the subgroup."""
    enrol_candidates = np.flatnonzero(inside)
    counts = np.bincount(speaker_codes)
    available = int((len(speaker_codes) - counts[speaker_codes[enrol_candidates]]).sum())
    if n_pairs > available:
        raise TrialBudgetError(f"asked for {n_pairs} non-target trials, the utterances allow {available}")
    n = len(speaker_codes)
    if available <= ENUMERATION_LIMIT:
        i = np.repeat(enrol_candidates, n)
        j = np.tile(np.arange(n), len(enrol_candidates))
        keep = speaker_codes[i] != speaker_codes[j]
        chosen = np.sort(rng.choice(int(keep.sum()), size=n_pairs, replace=False))
        return i[keep][chosen], j[keep][chosen]

    def draw() -> np.ndarray:
        i = rng.choice(enrol_candidates, size=2 * n_pairs)
        j = rng.integers(0, n, size=2 * n_pairs)
        return (i * n + j)[speaker_codes[i] != speaker_codes[j]]

    codes = _distinct_codes(draw, n_pairs)
    return codes // n, codes % n


def _sample_ordered_pairs(
    speaker_codes: np.ndarray,
    enrol_positions: np.ndarray,
    test_positions: np.ndarray,
    n_pairs: int,
    same_speaker: bool,
    rng: np.random.Generator,
    kind: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``n_pairs`` distinct ordered pairs (enrolment, test) of different utterances, same or different speaker.

    ``kind`` names the trials in a budget error (target or non-target by default)."""
    n_speakers = int(speaker_codes.max()) + 1 if len(speaker_codes) else 0
    enrol_counts = np.bincount(speaker_codes[enrol_positions], minlength=n_speakers)
    test_counts = np.bincount(speaker_codes[test_positions], minlength=n_speakers)
    same_pairs = int((enrol_counts * test_counts).sum()) - len(np.intersect1d(enrol_positions, test_positions))
    all_pairs = len(enrol_positions) * len(test_positions) - len(np.intersect1d(enrol_positions, test_positions))
    available = same_pairs if same_speaker else all_pairs - same_pairs
    if n_pairs > available:
        kind = kind or ("target" if same_speaker else "non-target")
        raise TrialBudgetError(f"asked for {n_pairs} {kind} trials, the selected utterances allow {available}")
    n = len(speaker_codes)
    if same_speaker and available <= ENUMERATION_LIMIT:
        candidates = _same_speaker_pair_codes(speaker_codes, enrol_positions, test_positions, ordered=True)
        chosen = candidates[np.sort(rng.choice(len(candidates), size=n_pairs, replace=False))]
        return chosen // n, chosen % n
    if len(enrol_positions) * len(test_positions) <= ENUMERATION_LIMIT:
        i = np.repeat(enrol_positions, len(test_positions))
        j = np.tile(test_positions, len(enrol_positions))
        keep = (i != j) & ((speaker_codes[i] == speaker_codes[j]) == same_speaker)
        chosen = np.sort(rng.choice(int(keep.sum()), size=n_pairs, replace=False))
        return i[keep][chosen], j[keep][chosen]

    def draw() -> np.ndarray:
        i = rng.choice(enrol_positions, size=2 * n_pairs)
        j = rng.choice(test_positions, size=2 * n_pairs)
        return (i.astype(np.int64) * n + j)[(i != j) & ((speaker_codes[i] == speaker_codes[j]) == same_speaker)]

    codes = _distinct_codes(draw, n_pairs)
    return codes // n, codes % n


def sample_selected_trials(
    utterances: pd.DataFrame,
    *,
    experiment_id: str,
    n_target: int,
    n_nontarget: int,
    seed: int,
    enrol_select: Selection,
    test_select: Selection,
    subgroup: tuple[str, str] | None = None,
    subgroup_side: Literal["both", "enrol"] = "both",
) -> TrialList:
    """A balanced trial list whose enrolment and test sides come from metadata selections.

    The generator is derived from the design (experiment, subgroup, budgets and both selections), so cells of one
    design with the same selections share their list. Without selections this is ``sample_trials``, bit for bit.
    A subgroup restricts the enrolment side, and the test side too unless ``subgroup_side="enrol"``.
    """
    if enrol_select == test_select and (subgroup_side == "both" or not enrol_select):
        kept = selected(utterances, enrol_select)
        return sample_trials(
            utterances[kept],
            experiment_id=experiment_id,
            n_target=n_target,
            n_nontarget=n_nontarget,
            seed=seed,
            subgroup=subgroup,
            subgroup_side=subgroup_side,
            selection=selection_label(enrol_select) if enrol_select else None,
        )
    pool = utterances.sort_values("utt_id", kind="stable").reset_index(drop=True)
    enrol_mask, test_mask = selected(pool, enrol_select), selected(pool, test_select)
    inside, subgroup_label = _in_subgroup(pool, subgroup)
    enrol_mask &= inside
    if subgroup_side == "both":
        test_mask &= inside
    selections = f"enrol:{selection_label(enrol_select)}", f"test:{selection_label(test_select)}"
    budgets = f"{n_target}/{n_nontarget}"
    rng = seeded_rng(seed, "trials", experiment_id, subgroup_label or "all", subgroup_side, budgets, *selections)
    speaker_codes = pd.factorize(pool["speaker"], sort=True)[0]
    enrol_positions, test_positions = np.flatnonzero(enrol_mask), np.flatnonzero(test_mask)
    try:
        target = _sample_ordered_pairs(speaker_codes, enrol_positions, test_positions, n_target, True, rng)
        nontarget = _sample_ordered_pairs(speaker_codes, enrol_positions, test_positions, n_nontarget, False, rng)
    except TrialBudgetError as error:
        where = f"{experiment_id} ({subgroup_label or 'all speakers'}; {', '.join(selections)})"
        raise TrialBudgetError(f"{where}: {error}") from None
    enrol = np.concatenate([target[0], nontarget[0]])
    test = np.concatenate([target[1], nontarget[1]])
    labels = np.concatenate([np.ones(n_target, np.int64), np.zeros(n_nontarget, np.int64)])
    order = rng.permutation(len(enrol))
    return _trial_list(pool, enrol[order], test[order], labels[order], subgroup_label)


def sample_trials(
    utterances: pd.DataFrame,
    *,
    experiment_id: str,
    n_target: int,
    n_nontarget: int,
    seed: int,
    subgroup: tuple[str, str] | None = None,
    subgroup_side: Literal["both", "enrol"] = "both",
    selection: str | None = None,
) -> TrialList:
    """Sample a balanced trial list.

    With ``subgroup=(column, value)`` and ``subgroup_side="both"`` both sides of every trial lie in the subgroup;
    with ``"enrol"`` targets lie in it and non-targets pair a subgroup enrolment with any other speaker's test
    utterance (for subgroups with a single speaker, where within-subgroup non-targets do not exist).
    ``selection`` names the metadata selection the utterances were restricted to (it enters the generator).
    """
    pool = utterances.sort_values("utt_id", kind="stable").reset_index(drop=True)
    inside, subgroup_label = _in_subgroup(pool, subgroup)
    if subgroup is not None and subgroup_side == "both":
        pool, inside = pool[inside].reset_index(drop=True), np.ones(int(inside.sum()), dtype=bool)
    budgets = f"{n_target}/{n_nontarget}"
    selected_by = () if selection is None else (f"select:{selection}",)
    rng = seeded_rng(seed, "trials", experiment_id, subgroup_label or "all", subgroup_side, budgets, *selected_by)
    speaker_codes = pd.factorize(pool["speaker"], sort=True)[0]
    where = f"{experiment_id} ({subgroup_label or 'all speakers'}{'' if selection is None else '; ' + selection})"
    try:
        inside_codes = np.flatnonzero(inside)
        target_i, target_j = _sample_pairs(speaker_codes[inside_codes], n_target, True, rng)
        target = inside_codes[target_i], inside_codes[target_j]
        if subgroup_side == "enrol" and subgroup is not None:
            nontarget = _sample_enrol_side_nontargets(speaker_codes, inside, n_nontarget, rng)
        else:
            nontarget = _sample_pairs(speaker_codes, n_nontarget, False, rng)
    except TrialBudgetError as error:
        raise TrialBudgetError(f"{where}: {error}") from None
    first = np.concatenate([target[0], nontarget[0]])
    second = np.concatenate([target[1], nontarget[1]])
    labels = np.concatenate([np.ones(n_target, np.int64), np.zeros(n_nontarget, np.int64)])
    # Which side enrols is a coin flip, except for enrolment-side subgroups, whose non-targets keep their order.
    swap = rng.random(len(first)) < 0.5
    if subgroup_side == "enrol" and subgroup is not None:
        swap[n_target:] = False
    enrol, test = np.where(swap, second, first), np.where(swap, first, second)
    order = rng.permutation(len(first))
    return _trial_list(pool, enrol[order], test[order], labels[order], subgroup_label)


def published_trial_list(published: pd.DataFrame, utterances: pd.DataFrame) -> TrialList:
    """A published list (``enrol_utt``, ``test_utt``, ``label``: an official list as read) in its own order, each
    side's speaker from ``utterances``; an utterance the table lacks is a ``SelectionError`` naming the first."""
    speakers = dict(zip(utterances["utt_id"], utterances["speaker"], strict=True))
    named = pd.concat([published["enrol_utt"], published["test_utt"]]).drop_duplicates()
    absent = sorted(set(named) - set(speakers))
    if absent:
        raise SelectionError(f"names {len(absent)} utterance(s) the corpus table lacks (first: {absent[0]})")
    frame = pd.DataFrame(
        {
            "enrol_utt": published["enrol_utt"].to_numpy(),
            "test_utt": published["test_utt"].to_numpy(),
            "label": published["label"].to_numpy(np.int64),
            "enrol_speaker": published["enrol_utt"].map(speakers).to_numpy(),
            "test_speaker": published["test_utt"].map(speakers).to_numpy(),
        }
    )
    return numbered_trial_list(frame)


def add_spoof_trials(
    genuine: TrialList,
    pool: pd.DataFrame,
    spoofs: pd.DataFrame,
    *,
    experiment_id: str,
    corpus: str,
    spoof_corpus: str,
    n_spoof: int,
    seed: int,
    enrol_select: Selection,
    spoof_select: Selection,
    subgroup: tuple[str, str] | None = None,
) -> TrialList:
    """The target trials of ``genuine`` and ``n_spoof`` distinct spoof trials, in a seeded order.

    A spoof trial pairs a genuine enrolment of ``pool`` (within the enrolment selection and the subgroup) with a
    file of ``spoofs`` (within the spoof selection) whose ``speaker``, the speaker it imitates, is the enrolment
    speaker. The targets are the genuine list's own, so a spoof cell and its genuine cell score the same target
    pairs; ``test_corpus`` names the corpus of each test utterance.
    """
    pool = pool.sort_values("utt_id", kind="stable").reset_index(drop=True)
    spoof_pool = spoofs.sort_values("utt_id", kind="stable").reset_index(drop=True)
    chosen_spoofs = selected(spoof_pool, spoof_select)
    unknown = sorted(set(spoof_pool["speaker"][chosen_spoofs]) - set(pool["speaker"]))
    if unknown:
        shown = ", ".join(unknown[:3]) + (", ..." if len(unknown) > 3 else "")
        raise SpoofTargetError(
            f"spoof folder {spoof_corpus!r} has files imitating {len(unknown)} speaker(s) that {corpus!r} lacks"
            f" ({shown}): target_speaker must name that corpus's speaker ids"
        )
    inside, subgroup_label = _in_subgroup(pool, subgroup)
    enrol_mask = selected(pool, enrol_select) & inside
    both = pd.concat([pool[["utt_id", "speaker"]], spoof_pool[["utt_id", "speaker"]]], ignore_index=True)
    speaker_codes = pd.factorize(both["speaker"], sort=True)[0]
    selections = f"enrol:{selection_label(enrol_select)}", f"spoofs:{spoof_corpus}:{selection_label(spoof_select)}"
    rng = seeded_rng(seed, "spoof-trials", experiment_id, subgroup_label or "all", str(n_spoof), *selections)
    enrol_positions, spoof_positions = np.flatnonzero(enrol_mask), len(pool) + np.flatnonzero(chosen_spoofs)
    try:
        enrol, test = _sample_ordered_pairs(
            speaker_codes, enrol_positions, spoof_positions, n_spoof, True, rng, "spoof"
        )
    except TrialBudgetError as error:
        where = f"{experiment_id} ({subgroup_label or 'all speakers'}; {selections[1]})"
        raise TrialBudgetError(f"{where}: {error}") from None
    targets = genuine.frame[genuine.frame["label"] == 1].drop(columns="trial_index")
    spoof_trials = pairs_frame(both, enrol, test, np.zeros(len(enrol), np.int64), subgroup_label)
    parts = [targets.assign(trial_kind="target", test_corpus=corpus)]
    parts.append(spoof_trials.assign(trial_kind="spoof", test_corpus=spoof_corpus))
    frame = pd.concat(parts, ignore_index=True)
    return numbered_trial_list(frame.iloc[rng.permutation(len(frame))].reset_index(drop=True))


def pairs_frame(
    pool: pd.DataFrame, enrol: np.ndarray, test: np.ndarray, labels: np.ndarray, subgroup_label: str | None
) -> pd.DataFrame:
    """The trial rows (without ``trial_index``) of the chosen (enrolment, test) positions of ``pool``."""
    frame = pd.DataFrame(
        {
            "enrol_utt": pool["utt_id"].to_numpy()[enrol],
            "test_utt": pool["utt_id"].to_numpy()[test],
            "label": labels,
            "enrol_speaker": pool["speaker"].to_numpy()[enrol],
            "test_speaker": pool["speaker"].to_numpy()[test],
        }
    )
    if subgroup_label is not None:
        frame["subgroup"] = subgroup_label
    return frame


def _trial_list(
    pool: pd.DataFrame, enrol: np.ndarray, test: np.ndarray, labels: np.ndarray, subgroup_label: str | None
) -> TrialList:
    """The validated trial table of the chosen (enrolment, test) positions, its CSV bytes and its id."""
    return numbered_trial_list(pairs_frame(pool, enrol, test, labels, subgroup_label))


def numbered_trial_list(trials: pd.DataFrame) -> TrialList:
    """Number the trials in row order, validate them and derive the list's CSV bytes and id."""
    frame = trials.copy()
    frame.insert(0, "trial_index", np.arange(len(frame), dtype=np.int64))
    TrialsSchema.validate(frame)
    csv_bytes = csv_file_bytes(frame)
    return TrialList(frame, csv_bytes, derived_id(csv_bytes))
