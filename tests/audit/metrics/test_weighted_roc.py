"""audit.metrics.weighted_roc beyond the EER oracles of test_statistics: weighted sums against a plain loop over the
resampled trials, the weights' memory layout, and codes that would read outside the weights."""

from __future__ import annotations

import numpy as np
import pytest

from audit.metrics import MetricInputError, eer
from audit.metrics.weighted_roc import (
    WeightedRocInputError,
    binned_miss_at_rates,
    binned_sums,
    binned_threshold_positions,
    eer_and_draws,
    miss_at_rates,
    threshold_positions,
    weighted_eer,
    weighted_eers,
    weighted_sums,
    weights_at_thresholds,
)


def _design(rng: np.random.Generator, n: int = 300, speakers: int = 9) -> tuple[np.ndarray, ...]:
    enrol = rng.integers(0, speakers, n)
    labels = rng.integers(0, 2, n)
    partner = np.where(labels == 1, speakers, (enrol + rng.integers(1, speakers, n)) % speakers)  # targets: weight 1
    scores = np.round(rng.normal(labels, 1.0), 2)
    weights = rng.integers(0, 4, size=(25, speakers)).astype(float)
    return enrol, partner, labels, scores, weights


def test_weighted_sums_equal_a_loop_over_the_trials_repeated() -> None:
    rng = np.random.default_rng(3)
    enrol, partner, labels, scores, weights = _design(rng)
    values = np.column_stack([labels, scores, np.ones(labels.size)])
    expected = np.zeros((weights.shape[0], values.shape[1]))
    for row, multiplicity in enumerate(weights):
        with_one = np.append(multiplicity, 1.0)
        for trial in range(labels.size):
            expected[row] += with_one[enrol[trial]] * with_one[partner[trial]] * values[trial]
    assert np.allclose(weighted_sums(weights, enrol, partner, values), expected, rtol=0, atol=1e-9)


def _positions_by_numpy(sums: np.ndarray, n: int, target_far: float | None) -> np.ndarray:
    """The definition in numpy's cumulative sums: FRR the target share below each candidate, FAR the non-target
    share at or above it; the first least |FAR - FRR|, or the first FAR within the target (n when none)."""
    target, nontarget = sums[:n], sums[n:]
    n_target, n_nontarget = target.sum(axis=0), nontarget.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        frr = (np.cumsum(target, axis=0) - target) / n_target
        far = np.cumsum(nontarget[::-1], axis=0)[::-1] / n_nontarget
    if target_far is None:
        chosen = np.argmin(np.abs(far - frr), axis=0)
    else:
        allowed = far <= target_far
        chosen = np.where(allowed.any(axis=0), np.argmax(allowed, axis=0), n)
    return np.where((n_target > 0) & (n_nontarget > 0), chosen, -1)


@pytest.mark.parametrize("target_far", [None, 0.0, 0.1, 0.5])
def test_threshold_positions_are_the_cumulative_sums_definition(target_far: float | None) -> None:
    """Whole weights (ties of |FAR - FRR| among them: the first wins), draws without a class (-1), a target FAR
    that no candidate meets (n), and the non-contiguous columns ``binned_sums`` gives."""
    rng = np.random.default_rng(11)
    n, draws = 40, 300
    sums = rng.integers(0, 3, (2 * n, draws)).astype(float) * (rng.random((2 * n, draws)) < 0.3)
    sums[:n, :5] = 0.0  # no target weight
    sums[n:, 5:9] = 0.0  # no non-target weight
    sums[:, 9] = 0.0
    wide = np.zeros((2 * n, draws + 24))
    wide[:, :draws] = sums
    expected = _positions_by_numpy(sums, n, target_far)
    assert (expected == -1).sum() == 10 and (target_far is None or target_far > 0.0 or (expected == n).any())
    for layout in (sums, wide[:, :draws]):
        np.testing.assert_array_equal(threshold_positions(layout, n, target_far), expected)


@pytest.mark.parametrize(("resamples", "target_far"), [(1, None), (64, 0.1), (100, None), (130, 0.0), (70, 0.5)])
def test_binned_threshold_positions_are_those_of_the_binned_sums(resamples: int, target_far: float | None) -> None:
    """The loop that walks each tile along the trials grouped by candidate gives the positions of the sums it no
    longer makes, and of the cumulative-sums definition: candidates without trials, a draw without weight (-1), a
    target FAR that no candidate meets (n), rows within a tile, a whole tile and a padded last tile."""
    rng = np.random.default_rng(resamples)
    enrol, partner, labels, _, _ = _design(rng)
    n = 60  # more candidates than the trials fill
    bins = rng.integers(0, n, labels.size) + np.where(labels == 1, 0, n)
    weights = rng.integers(0, 4, (resamples, 9)).astype(float)
    weights[0] = 0.0  # a draw without weight
    got = binned_threshold_positions(weights, enrol, partner, bins, n, target_far)  # first: no freed array to reuse
    sums = binned_sums(weights, enrol, partner, bins, 2 * n)
    expected = _positions_by_numpy(sums, n, target_far)
    np.testing.assert_array_equal(threshold_positions(sums, n, target_far), expected)
    np.testing.assert_array_equal(got, expected)


def test_miss_at_rates_interpolate_each_draws_det_between_its_thresholds() -> None:
    """Oracle: each draw's DET from the definition (a threshold accepts a bin and those above it; false-alarm and
    miss rate of every threshold), read by numpy.interp at each rate; a draw without non-target weight is NaN."""
    rng = np.random.default_rng(11)
    n_bins, draws = 40, 7
    sums = rng.uniform(0.1, 2.0, size=(2 * n_bins, draws))  # every bin weighed: the false-alarm rate falls strictly
    sums[n_bins:, 3] = 0.0
    p_fa = np.array([0.0, 0.013, 0.1, 0.37, 0.5, 0.9])
    expected = np.full((draws, p_fa.size), np.nan)
    for draw in range(draws):
        targets, nontargets = sums[:n_bins, draw], sums[n_bins:, draw]
        if nontargets.sum() == 0:
            continue
        false_alarm = [nontargets[k:].sum() / nontargets.sum() for k in range(n_bins + 1)]
        miss = [targets[:k].sum() / targets.sum() for k in range(n_bins + 1)]
        expected[draw] = np.interp(p_fa, false_alarm[::-1], miss[::-1])
    got = miss_at_rates(p_fa, sums, n_bins)
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    assert np.allclose(got, expected, rtol=0, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("resamples", [1, 64, 100, 130])  # within a tile, a tile, a padded last tile
def test_weights_at_thresholds_read_the_cumulative_binned_sums(resamples: int) -> None:
    """Each resample's rejected target weight and accepted non-target weight at its own threshold are the
    cumulative ``binned_sums`` of each class read at its position, and the class totals their sums; and a trial
    repeated by its weight, counted by hand, gives the same (positions below, within and above the bins)."""
    rng = np.random.default_rng(resamples)
    enrol, partner, labels, _, _ = _design(rng)
    n = 12
    bins = rng.integers(0, n, labels.size)
    weights = rng.integers(0, 4, (resamples, 9)).astype(float)
    weights[0] = 0.0
    positions = rng.integers(-1, n + 1, resamples)
    got = weights_at_thresholds(weights, enrol, partner, labels, bins, positions)
    sums = binned_sums(weights, enrol, partner, bins + np.where(labels == 1, 0, n), 2 * n)
    rows = np.arange(resamples)
    below = np.vstack([np.cumsum(sums[:n], axis=0), sums[:n].sum(axis=0)])[positions.clip(-1, n - 1), rows]
    below[positions < 0] = 0.0
    above = np.vstack([np.cumsum(sums[n:][::-1], axis=0)[::-1], np.zeros((1, resamples))])[
        (positions + 1).clip(0, n), rows
    ]
    expected = (below, sums[:n].sum(axis=0), above, sums[n:].sum(axis=0))
    for part, wanted in zip(got, expected, strict=True):
        np.testing.assert_array_equal(part, wanted)
    weight = weights[:, enrol] * np.c_[weights, np.ones(resamples)][:, partner]  # resamples x trials (partner 9: 1)
    by_hand = (
        (weight * ((labels == 1) & (bins[None, :] <= positions[:, None]))).sum(axis=1),
        (weight * (labels == 1)).sum(axis=1),
        (weight * ((labels == 0) & (bins[None, :] > positions[:, None]))).sum(axis=1),
        (weight * (labels == 0)).sum(axis=1),
    )
    for part, wanted in zip(got, by_hand, strict=True):
        np.testing.assert_array_equal(part, wanted)


def _miss_by_numpy(p_fa: np.ndarray, sums: np.ndarray, n_bins: int) -> np.ndarray:
    """The NumPy formulation ``miss_at_rates`` repeats, draw by draw: cumulative sums down the bins, each class's
    rates divided by its total, the rising false-alarm rates and the rates sought moved up by twice the draw's rank
    among the valid draws, ``numpy.searchsorted(side="right")``, then linear interpolation."""
    out, rank = np.full((sums.shape[1], p_fa.size), np.nan), 0
    totals_t, totals_n = sums[:n_bins].sum(axis=0), sums[n_bins:].sum(axis=0)
    for draw in range(sums.shape[1]):
        n_target, n_nontarget = totals_t[draw], totals_n[draw]
        if not (n_target > 0.0 and n_nontarget > 0.0):
            continue
        offset = 2.0 * rank
        rank += 1
        missed = np.r_[0.0, np.cumsum(sums[:n_bins, draw])]  # below each threshold
        accepted = np.r_[np.cumsum(sums[n_bins:, draw][::-1])[::-1], 0.0]  # at and above it
        rising_fa = accepted[::-1] / n_nontarget + offset
        for j, wanted in enumerate(p_fa + offset):
            right = min(int(np.searchsorted(rising_fa, wanted, side="right")), n_bins)
            left = right - 1
            x0, x1 = rising_fa[left], rising_fa[right]
            y0, y1 = missed[n_bins - left] / n_target, missed[n_bins - right] / n_target
            out[draw, j] = y0 + (wanted - x0) * (y1 - y0) / (x1 - x0) if x1 > x0 else y0
    return out


@pytest.mark.parametrize("seed", range(4))
def test_miss_at_rates_search_as_numpy_searchsorted_bit_for_bit(seed: int) -> None:
    """Every rate searched at once, a level at a time, finds numpy.searchsorted's points: the same bits as the
    NumPy formulation on whole weights with empty bins (flat stretches), rates that fall exactly on a point, the
    ends (0 and past the last point), draws without weight in a class, fractional weights; and the binned loop
    gives the same bits from the trials."""
    rng = np.random.default_rng(seed)
    n_bins, draws = int(rng.integers(1, 60)), 70
    sums = rng.integers(0, 3, (2 * n_bins, draws)).astype(float) * (rng.random((2 * n_bins, draws)) < 0.5)
    sums[:, :3] = rng.uniform(0.0, 2.0, (2 * n_bins, 3))
    sums[n_bins:, 3] = 0.0
    sums[:n_bins, 4] = 0.0
    n_nontarget = sums[n_bins:].sum(axis=0)
    on_points = [k / n_nontarget[10] for k in range(int(n_nontarget[10]) + 1)] if n_nontarget[10] else [0.5]
    p_fa = np.unique(np.r_[0.0, 0.013, 0.37, 0.9999, on_points])
    expected = _miss_by_numpy(p_fa, sums, n_bins)
    assert np.array_equal(miss_at_rates(p_fa, sums, n_bins).view(np.int64), expected.view(np.int64))
    enrol, partner, labels, _, _ = _design(rng)
    bins = rng.integers(0, n_bins, labels.size) + np.where(labels == 1, 0, n_bins)
    weights = rng.integers(0, 4, (draws, 9)).astype(float)
    binned = binned_sums(weights, enrol, partner, bins, 2 * n_bins)
    expected = _miss_by_numpy(p_fa, binned, n_bins)
    got = binned_miss_at_rates(p_fa, weights, enrol, partner, bins, n_bins)
    assert np.array_equal(got.view(np.int64), expected.view(np.int64))


@pytest.mark.parametrize("resamples", [1, 64, 100, 130])  # within a tile, a tile, a padded last tile
def test_binned_miss_at_rates_are_miss_at_rates_of_binned_sums_bit_for_bit(resamples: int) -> None:
    """The one-tile-at-a-time loop gives the bits of the two steps it fuses, integer and fractional weights alike."""
    rng = np.random.default_rng(resamples)
    enrol, partner, labels, _, _ = _design(rng)
    n_bins = 40
    bins = rng.integers(0, n_bins, labels.size) + np.where(labels == 1, 0, n_bins)
    p_fa = np.array([0.0, 0.013, 0.1, 0.37, 0.5])
    for weights in (rng.integers(0, 4, (resamples, 9)).astype(float), rng.uniform(0.0, 2.0, (resamples, 9))):
        weights[0] = 0.0  # a draw without weight: NaN in both
        expected = miss_at_rates(p_fa, binned_sums(weights, enrol, partner, bins, 2 * n_bins), n_bins)
        got = binned_miss_at_rates(p_fa, weights, enrol, partner, bins, n_bins)
        assert np.array_equal(got.view(np.int64), expected.view(np.int64))


def test_the_weights_layout_does_not_change_a_draw() -> None:
    rng = np.random.default_rng(4)
    enrol, partner, labels, scores, weights = _design(rng)
    for method in ("interp", "legacy", "rocch"):
        c_order = weighted_eer(scores, labels, enrol, weights, method, partner)  # type: ignore[arg-type]
        f_order = weighted_eer(scores, labels, enrol, np.asfortranarray(weights), method, partner)  # type: ignore[arg-type]
        assert np.array_equal(c_order, f_order, equal_nan=True)


@pytest.mark.parametrize(
    ("enrol", "partner", "match"),
    [
        ([0, 9], [1, 2], "speaker codes must lie in 0..8"),  # an enrolment code past the weights
        ([0, -1], [1, 2], "speaker codes"),
        ([0, 1], [1, 10], "partners up to 9"),  # 9 is the weight-1 partner; 10 is outside
        ([0, 1], [1], "2 enrolment codes but 1 partner codes"),
    ],
)
def test_codes_outside_the_weights_are_refused_before_the_compiled_loops(
    enrol: list[int], partner: list[int], match: str
) -> None:
    with pytest.raises(WeightedRocInputError, match=match):
        weighted_eer([0.1, 0.9], [0, 1], enrol, np.ones((3, 9)), "rocch", partner)


def test_scores_that_are_not_finite_are_refused() -> None:
    with pytest.raises(WeightedRocInputError, match="finite"):
        weighted_eer([0.1, np.nan], [0, 1], [0, 1], np.ones((3, 2)))


def test_constant_scores_give_the_chance_edge_in_every_method() -> None:
    weights = np.array([[1.0, 2.0, 0.0], [3.0, 1.0, 1.0]])
    for method in ("interp", "legacy", "rocch"):
        draws = weighted_eer(np.zeros(6), [1, 0, 1, 0, 1, 0], [0, 1, 2, 0, 1, 2], weights, method)  # type: ignore[arg-type]
        assert np.array_equal(draws, [0.5, 0.5])


def test_counts_whose_products_pass_2_53_are_exact() -> None:
    """Weights of 4e5 over 1,000 trials: about 2e8 per class, their products (4e16) past float64's exact integers
    (2**53); a weight shared by every trial leaves each EER that of the trials unweighted (``point.eer``)."""
    scores = np.random.default_rng(3).normal(size=1000)
    labels = np.arange(1000) % 2
    scores[labels == 1] += 1.0
    draws = weighted_eers(scores, labels, np.zeros(1000, dtype=int), np.full((2, 1), 4e5))
    for method, values in draws.items():
        assert np.array_equal(values, np.full(2, eer(scores, labels, method)))


def test_weights_whose_counts_int64_products_cannot_hold_are_refused() -> None:
    # weights of 1e7 over 1,000 trials: a total weight of 1e10, past WEIGHT_LIMIT (2**31)
    with pytest.raises(WeightedRocInputError, match="2\\*\\*63"):
        weighted_eer(np.arange(1000.0), np.arange(1000) % 2, np.zeros(1000, dtype=int), np.full((2, 1), 1e7), "rocch")


def test_a_compilation_is_announced_before_and_after_with_its_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first run on a machine compiles for about half a minute: a reviewer is told, on stderr, not left
    waiting; a run that loads the kernels from numba's cache says nothing."""
    from audit.metrics import roc_kernels
    from audit.metrics.weighted_roc import prepare_kernels

    prepare_kernels(lambda line: None)  # compiled into numba's cache now, or loaded from it (whatever ran before)
    lines: list[str] = []
    assert prepare_kernels(lines.append) is None and lines == []
    assert roc_kernels.cached_on_this_machine()
    monkeypatch.setattr(roc_kernels, "cached_on_this_machine", lambda: False)
    seconds = prepare_kernels(lines.append)
    assert seconds is not None and len(lines) == 2
    assert lines[0].startswith("compiling the bootstrap's numba kernels: the first run on this machine")
    assert lines[1] == f"compiled the bootstrap's numba kernels in {seconds:.1f} s"


def _long_design(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Enrolment and partner codes, labels and scores of 40 to 3,000 trials, with ties or none, and the speakers."""
    n, speakers = int(rng.choice([40, 400, 3000])), int(rng.integers(3, 30))
    enrol = rng.integers(0, speakers, n)
    labels = (rng.random(n) < rng.choice([0.05, 0.3, 0.5])).astype(int)
    labels[:2] = [0, 1]
    partner = np.where(labels == 1, speakers, (enrol + rng.integers(1, speakers, n)) % speakers)
    scores = np.round(rng.normal(labels * rng.choice([0.5, 2.0]), 1.0), int(rng.choice([0, 1, 6])))
    return enrol, partner, labels, scores, speakers


@pytest.mark.parametrize("seed", range(6))
def test_the_bracketed_loops_give_the_per_threshold_loops_eers(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Long lists go to the bracketed loops (windows of brackets, int64 counts): on lists cut into many brackets of
    a few trials, with ties or none, one-way or two-way, their EERs are those of the per-threshold loops, bit for
    bit, and those are the EERs of the trials repeated (``test_statistics``)."""
    import audit.metrics.weighted_roc as weighted_roc

    rng = np.random.default_rng(seed)
    enrol, partner, labels, scores, speakers = _long_design(rng)
    weights = rng.integers(0, 4, size=(int(rng.choice([7, 70])), speakers)).astype(float)
    per_threshold = weighted_eers(scores, labels, enrol, weights, None if seed % 2 else partner)
    monkeypatch.setattr(weighted_roc, "PER_THRESHOLD_UNITS", 0)
    monkeypatch.setattr(weighted_roc, "BRACKET_TRIALS", int(rng.choice([1, 4, 16])))
    bracketed = weighted_eers(scores, labels, enrol, weights, None if seed % 2 else partner)
    for method in ("interp", "legacy", "rocch"):
        assert np.array_equal(bracketed[method], per_threshold[method], equal_nan=True), method  # type: ignore[index]


@pytest.mark.parametrize("width", [64, 32, 8])
def test_every_block_width_gives_the_bracketed_loops_eers(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-threshold loops sum a whole tile at a width fixed when they compile (64 rows) and narrower blocks at
    a width read at run time: either gives the bracketed loops' EERs bit for bit, in int32 and in float64 sums."""
    import audit.metrics.roc_kernels as roc_kernels
    import audit.metrics.weighted_roc as weighted_roc

    assert roc_kernels.UNROLLED == weighted_roc.TILE
    rng = np.random.default_rng(width)
    enrol, partner, labels, scores, speakers = _long_design(rng)
    weights = rng.integers(0, 4, size=(70, speakers)).astype(float)
    with monkeypatch.context() as bracketed_only:
        bracketed_only.setattr(weighted_roc, "PER_THRESHOLD_UNITS", 0)
        bracketed = weighted_eers(scores, labels, enrol, weights, partner)
    monkeypatch.setattr(weighted_roc, "_block", lambda n_units: width)
    for sums in ("int32", "float64"):
        if sums == "float64":
            _float64_sums(monkeypatch)
        per_threshold = weighted_eers(scores, labels, enrol, weights, partner)
        for method in ("interp", "legacy", "rocch"):
            assert np.array_equal(per_threshold[method], bracketed[method], equal_nan=True), (sums, method)  # type: ignore[index]


@pytest.mark.parametrize("seed", range(4))
def test_rocch_units_skip_only_points_under_the_hull(seed: int) -> None:
    """ROCCH's units end only where a hull vertex can be (a run of non-targets joins the next unit): its EERs are
    those of the same loops given every threshold as a unit, bit for bit, with ties, weights of 0 and runs of one
    class at either end."""
    import dataclasses

    import audit.metrics.weighted_roc as weighted_roc

    rng = np.random.default_rng(seed)
    n, speakers = int(rng.choice([30, 300, 2000])), int(rng.integers(3, 30))
    enrol = rng.integers(0, speakers, n)
    labels = rng.random(n) < rng.choice([0.05, 0.3, 0.7])
    labels[:2] = [False, True]
    partner = np.where(labels, speakers, (enrol + rng.integers(1, speakers, n)) % speakers)
    scores = np.round(rng.normal(labels * rng.choice([0.0, 1.0, 3.0]), 1.0), int(rng.choice([0, 1, 6])))
    resampled = weighted_roc.ResampleWeights.of(rng.integers(0, 3, size=(70, speakers)).astype(float))
    trials = weighted_roc.SortedTrials.of(scores, labels)
    assert trials.unit_end.size < trials.group_end.size
    enrol, partner = np.ascontiguousarray(enrol[trials.order]), np.ascontiguousarray(partner[trials.order])
    every_point = dataclasses.replace(trials, unit_end=trials.group_end)
    assert np.array_equal(
        weighted_roc._per_threshold(resampled, enrol, partner, trials, "rocch"),
        weighted_roc._per_threshold(resampled, enrol, partner, every_point, "rocch"),
        equal_nan=True,
    )


def test_the_thresholds_and_rocch_units_are_cut_as_their_definition_says() -> None:
    """``SortedTrials``' compiled cut (``record_kernels.sorted_ends``) against the definition written in NumPy: a
    threshold ends where the sorted score changes; a unit ends at a threshold holding a target that holds both
    classes or is followed by one of another kind, and at the last threshold. Empty, one-trial and one-class lists,
    ties of every width."""
    from audit.metrics.weighted_roc import SortedTrials

    rng = np.random.default_rng(5)
    for case in range(2000):
        n = int(rng.integers(0, 6)) if case % 4 == 0 else int(rng.integers(6, 3000))
        labels = rng.random(n) < rng.uniform(0.0, 1.0)
        scores = rng.integers(0, 3, n).astype(float) if case % 7 == 0 else np.round(rng.normal(labels, 1.0), 1)
        trials = SortedTrials.of(scores, labels)
        ordered = scores[trials.order]
        assert np.all(np.diff(ordered) <= 0) and np.array_equal(trials.labels, labels[trials.order])
        group_end = np.append(np.flatnonzero(ordered[1:] != ordered[:-1]) + 1, n)
        starts = np.concatenate(([0], group_end[:-1]))
        targets = np.array([trials.labels[a:b].sum() for a, b in zip(starts, group_end, strict=True)], dtype=int)
        kind = np.where(targets == 0, 0, np.where(targets == group_end - starts, 1, 2))
        closes = np.append(((kind[:-1] == 2) | (kind[1:] != kind[:-1])) & (kind[:-1] != 0), True)
        assert np.array_equal(trials.group_end, group_end), case
        assert np.array_equal(trials.unit_end, group_end[closes]), case


def _float64_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-threshold loops sum every weight in float64 from here on."""
    import audit.metrics.weighted_roc as weighted_roc

    monkeypatch.setattr(weighted_roc.ResampleWeights, "small", None)


@pytest.mark.parametrize("seed", range(6))
def test_int_sums_of_small_whole_weights_give_the_float64_eers(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole weights of 0..127 are summed as int8 tiles in int32, their unit sums kept in int32: the same EERs, bit
    for bit, as the float64 sums, in every method, with ties and weights of 0 to 127, one-way or two-way; weights that
    are not whole, below 0 or above 127 keep float64."""
    import audit.metrics.weighted_roc as weighted_roc

    rng = np.random.default_rng(seed)
    enrol, partner, labels, scores, speakers = _long_design(rng)
    weights = rng.integers(0, int(rng.choice([4, 128])), size=(int(rng.choice([7, 70])), speakers)).astype(float)
    weights[0, 0] = 127
    resampled = weighted_roc.ResampleWeights.of(weights)
    assert resampled.small is not None
    small = weighted_eers(scores, labels, enrol, resampled, None if seed % 2 else partner)
    for other in (weights + 0.5, -weights, weights + 1.0):
        assert weighted_roc.ResampleWeights.of(other).small is None
    _float64_sums(monkeypatch)
    double = weighted_eers(scores, labels, enrol, weights, None if seed % 2 else partner)
    for method in ("interp", "legacy", "rocch"):
        assert np.array_equal(small[method], double[method], equal_nan=True), method  # type: ignore[index]


@pytest.mark.parametrize("two_way", [False, True])
def test_int_sums_at_the_per_threshold_loops_edge(two_way: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A row weighing every trial 127 x 127 (two-way) or 127 x 1: on the longest list the per-threshold loops take
    (sums up to 2**26.5, past float32's exact 2**24) the int32 sums, kept in int32 unit sums, give the float64 sums'
    EERs bit for bit; a weight of 128 takes the float64 sums, one trial more the bracketed loops."""
    import audit.metrics.roc_kernels as roc_kernels

    summed: list[object] = []
    kernel = roc_kernels.eer_of_rows
    monkeypatch.setattr(
        roc_kernels,
        "eer_of_rows",
        lambda tiles, *rest: (summed.append((tiles.dtype, rest[6].dtype)), kernel(tiles, *rest))[1],
    )
    rng = np.random.default_rng(int(two_way))
    edge = int(np.sqrt(2.0**53)) // 127**2
    assert (127**2 * edge) ** 2 < 2**53 <= (127**2 * (edge + 1)) ** 2
    weights = rng.integers(0, 8, size=(7, 4)).astype(float)
    weights[0] = 127
    labels = (rng.random(edge + 1) < 0.3).astype(int)
    enrol = rng.integers(0, 4, edge + 1)
    partner = (enrol + rng.integers(1, 4, edge + 1)) % 4 if two_way else None
    scores = np.round(rng.normal(labels, 1.0), 2)
    first = (scores[:edge], labels[:edge], enrol[:edge], weights, None if partner is None else partner[:edge])
    small = weighted_eers(*first)
    weighted_eers(scores, labels, enrol, weights, partner)  # the bracketed loops
    short = (
        scores[:999],
        labels[:999],
        enrol[:999],
        weights + (weights == 127),
        None if partner is None else partner[:999],
    )
    weighted_eers(*short)
    assert summed == [(np.int8, np.int32)] * 3 + [(np.float64, np.float64)] * 3
    _float64_sums(monkeypatch)
    double = weighted_eers(*first)
    for method in ("interp", "legacy", "rocch"):
        assert np.array_equal(small[method], double[method], equal_nan=True), method  # type: ignore[index]


@pytest.mark.parametrize("seed", range(4))
def test_the_hull_in_int32_gives_the_float64_hull_up_to_its_limit(seed: int) -> None:
    """The ROCCH hull's passes in int32 give the float64 passes' EERs bit for bit on int32 unit sums, up to rows whose
    counts' product is just below 2**31 (46,340 targets and as many non-targets), with ties along the edge and rows
    without weight in a class; ``eer_of_rows`` takes them only where every row of a block stays below."""
    import audit.metrics.roc_kernels as roc_kernels

    rng = np.random.default_rng(seed)
    units, rows = int(rng.choice([3, 40, 700])), 64
    steps = rng.integers(0, int(rng.choice([2, 9, 300])), size=(2, units, rows)) * (rng.random((2, units, rows)) < 0.6)
    steps[:, :, 6] = 1  # one straight diagonal, its points on the edge
    tps, fps = np.cumsum(steps, axis=1)
    largest = 46340 * np.ones(rows)  # 46340**2 < 2**31 <= 46341**2
    largest[7:] = rng.integers(1, 46341, size=rows - 7)
    for sums in (tps, fps):  # scaled up to the row's total, which every row reaches at its last unit
        sums *= np.floor(largest / np.maximum(sums[-1], 1)).astype(sums.dtype)
        sums[-1] = largest
        sums[:] = np.minimum.accumulate(sums[::-1], axis=0)[::-1]
    tps[:, 5] = 0  # and one row without targets
    tps, fps = tps.astype(np.int32), fps.astype(np.int32)
    n_target, n_nontarget = tps[-1].astype(float), fps[-1].astype(float)
    assert (n_target * n_nontarget).max() < 2**31
    narrow, wide = np.full(rows, np.nan), np.full(rows, np.nan)
    roc_kernels._hull_eers(tps, fps, n_target, n_nontarget, narrow, np.int32(0))
    roc_kernels._hull_eers(tps, fps, n_target, n_nontarget, wide, 0.0)
    assert np.array_equal(narrow, wide, equal_nan=True)
    assert np.isnan(narrow[5]) and np.isfinite(np.delete(narrow, 5)).all()


def test_eer_and_draws_give_eer_bit_for_bit_and_weighted_eers_draws() -> None:
    """The point EER from the draws' sort equals ``eer`` exactly (``==``) in every method, on records of 3 to 3,000
    trials with ties (scores rounded to 0-3 decimals), constant scores, a lone target or non-target, and one class
    (refused by both); the draws are ``weighted_eer``'s."""
    rng = np.random.default_rng(43)
    speakers = 7
    weights = rng.integers(0, 3, size=(4, speakers)).astype(float)
    compared = refused = 0
    for record in range(300):
        n = int(np.exp(rng.uniform(np.log(3), np.log(3000))))
        labels = rng.random(n) < rng.uniform(0.05, 0.95)
        if record % 25 == 0:
            labels[:] = record % 50 == 0  # one class
        elif record % 25 == 1:
            labels[:] = False
            labels[rng.integers(n)] = True  # a lone target
        elif record % 25 == 2:
            labels[:] = True
            labels[rng.integers(n)] = False  # a lone non-target
        scores = np.round(rng.normal(labels * rng.uniform(-1, 3), 1.0), int(rng.integers(0, 4)))
        if record % 25 == 3:
            scores[:] = 0.25
        enrol = rng.integers(0, speakers, n)
        for method in ("interp", "legacy", "rocch"):
            if labels.all() or not labels.any():
                with pytest.raises(MetricInputError):
                    eer(scores, labels, method)
                with pytest.raises(MetricInputError):
                    eer_and_draws(scores, labels, method, enrol, None, weights)
                refused += 1
                continue
            point, draws = eer_and_draws(scores, labels, method, enrol, None, weights)
            assert point == eer(scores, labels, method), (record, method)
            assert np.array_equal(draws, weighted_eer(scores, labels, enrol, weights, method), equal_nan=True)
            compared += 1
    assert (compared, refused) == (3 * 264, 3 * 36)  # one class: 12 records made so, 24 drawn so


@pytest.mark.parametrize("shape", ["few values", "runs of equal steps", "float32 rounded", "lone points"])
def test_the_compiled_point_eer_is_eers_float_for_float(shape: str) -> None:
    """``eer_and_draws``' point EER comes from the compiled ``record_eer``; ``eer`` (NumPy: ``roc_curve``'s kept
    points, PAV, the edges' crossings) is its oracle, compared with ``==`` and the sign of zero, in every method, on
    shapes where the variants part: a few score values (wide ties, collinear hull points), runs of equal steps (the
    points ``roc_curve`` drops), float32-rounded cosines and records of two or three trials."""
    rng = np.random.default_rng(["few values", "runs of equal steps", "float32 rounded", "lone points"].index(shape))
    compared = 0
    for _ in range(400):
        n = int(rng.integers(2, 4)) if shape == "lone points" else int(np.exp(rng.uniform(np.log(4), np.log(4000))))
        labels = rng.random(n) < rng.uniform(0.05, 0.95)
        labels[:2] = (True, False)
        rng.shuffle(labels)
        if shape == "few values":
            scores = rng.integers(0, int(rng.integers(2, 7)), n) + labels * rng.integers(0, 2)
        elif shape == "runs of equal steps":
            scores = np.repeat(rng.normal(size=n), 3)[:n] + 0.5 * labels
            labels = np.tile([True, False, False], n)[:n] if rng.random() < 0.5 else labels
            labels[:2] = (True, False)
        elif shape == "float32 rounded":
            scores = np.round(rng.normal(labels * 2.0, 1.0), 3).astype(np.float32).astype(np.float64)
        else:
            scores = rng.normal(size=n)
        for method in ("interp", "legacy", "rocch"):
            point, _ = eer_and_draws(scores.astype(float), labels, method, np.zeros(n, int), None, np.ones((1, 1)))
            expected = eer(scores, labels, method)
            assert point == expected and np.signbit(point) == np.signbit(expected), (method, point, expected)
            compared += 1
    assert compared == 1200


def test_eer_and_draws_refuse_an_unknown_method_as_eer_does() -> None:
    """A method ``eer`` does not know is refused with ``eer``'s error, before the draws' own checks, so a call site
    that took its point EER from ``eer`` reports the same reason."""
    arguments = ([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
    with pytest.raises(MetricInputError) as expected:
        eer(*arguments, "bogus")  # type: ignore[arg-type]
    with pytest.raises(MetricInputError) as found:
        eer_and_draws(*arguments, "bogus", np.array([0, 1, 0, 1]), None, np.ones((1, 2)))  # type: ignore[arg-type]
    assert type(found.value) is type(expected.value) and str(found.value) == str(expected.value)
