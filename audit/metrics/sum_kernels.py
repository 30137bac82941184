"""Compiled sums of weighted trials behind ``audit.metrics.weighted_roc``, and what a draw's sums per score bin give.

Weights come in the tiles ``roc_kernels`` describes (``weights[tile, speaker, row]``, a last speaker of weight 1): a
trial weighs ``weights[., enrol, row] * weights[., partner, row]``. ``weighted_sums`` sums columns of values with those
weights, ``binned_sums`` sums them per score bin; from a draw's binned sums, ``miss_at_rates`` gives its DET miss rates
(``binned_miss_at_rates`` without holding the bins x draws sums) and ``threshold_positions`` its development threshold
(``binned_threshold_positions`` without the sums), and ``weights_at_thresholds`` the weight on each side of a draw's
own threshold.

Compiled once per machine (``cache=True``), and loaded only when a bootstrap runs.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

import audit.metrics.kernel_threads  # noqa: F401  (the threading layer, chosen before a parallel loop runs)


@njit(cache=True, parallel=True)
def weighted_sums(weights, enrol, partner, values):
    """(columns x tiles x tile rows): each column of ``values`` (trials x columns) summed with each row's trial
    weights."""
    tiles, block = weights.shape[0], weights.shape[2]
    out = np.zeros((values.shape[1], tiles, block))
    for tile in prange(tiles):
        tile_weights = weights[tile]
        for trial in range(enrol.size):
            enrolled, partnered = tile_weights[enrol[trial]], tile_weights[partner[trial]]
            for column in range(values.shape[1]):
                value = values[trial, column]
                if value != 0.0:
                    sums = out[column, tile]
                    for row in range(block):
                        sums[row] += value * enrolled[row] * partnered[row]
    return out


@njit(cache=True, parallel=True)
def binned_sums(weights, enrol, partner, bins, n_bins):
    """(bins x tiles x tile rows): each bin's trial weights summed per row; a trial falls in one bin (``bins``)."""
    tiles, block = weights.shape[0], weights.shape[2]
    out = np.zeros((n_bins, tiles, block))
    for tile in prange(tiles):
        tile_weights = weights[tile]
        for trial in range(enrol.size):
            enrolled, partnered = tile_weights[enrol[trial]], tile_weights[partner[trial]]
            sums = out[bins[trial], tile]
            for row in range(block):
                sums[row] += enrolled[row] * partnered[row]
    return out


@njit(cache=True)
def threshold_positions(sums, n, target_far, out):
    """``out`` (draws): per draw, the position among ``n`` ascending candidate thresholds of the first with the
    least |FAR - FRR| (``target_far`` < 0), or of the first whose FAR does not exceed ``target_far`` (``n`` when
    none); -1 for a draw without weight in a class. ``sums`` (2n x draws): each candidate's target weight (rows
    0..n-1) and non-target weight (n..2n-1); FRR at a candidate is the target weight below it, FAR the non-target
    weight at or above it. One pass along the rows, all draws at once: sums of whole weights are exact, so the
    running sums are the cumulative sums numpy makes in several passes over temporaries of this size."""
    draws = sums.shape[1]
    total_t, total_n = np.zeros(draws), np.zeros(draws)
    for candidate in range(n):
        for draw in range(draws):
            total_t[draw] += sums[candidate, draw]
            total_n[draw] += sums[n + candidate, draw]
    below_t, below_n, least = np.zeros(draws), np.zeros(draws), np.full(draws, np.inf)
    out[:] = 0 if target_far < 0.0 else n
    for candidate in range(n):
        _judge(candidate, n, target_far, below_t, below_n, total_t, total_n, least, out)
        for draw in range(draws):
            below_t[draw] += sums[candidate, draw]
            below_n[draw] += sums[n + candidate, draw]
    _unjudged(total_t, total_n, out)


@njit(cache=True, parallel=True)
def binned_threshold_positions(weights, rows, enrol, partner, bounds, target_far, out):
    """``threshold_positions`` of ``binned_sums``' sums, the same positions, without the sums (2n bins x resamples,
    tens of MB for a long list): per tile of ``weights``, its rows' class totals, then the candidates in ascending
    order, each judged before its bins' weight joins the running sums. The trials come grouped by bin (``bounds``:
    bin k's trials lie at ``bounds[k]..bounds[k + 1]``; bins 0..n-1 the candidates' targets, n..2n-1 their
    non-targets). Whole weights: every sum is exact in any order, so the totals and running sums are those
    ``threshold_positions`` reads. ``out``: the ``rows`` resamples' positions (the last tile's rows past them are
    padding)."""
    tiles, block = weights.shape[0], weights.shape[2]
    n = (bounds.size - 1) // 2
    for tile in prange(tiles):
        tile_weights = weights[tile]
        total_t, total_n, binned = np.empty(block), np.empty(block), np.empty(block)
        _bin_weight(tile_weights, enrol, partner, bounds[0], bounds[n], total_t)
        _bin_weight(tile_weights, enrol, partner, bounds[n], bounds[2 * n], total_n)
        below_t, below_n, least = np.zeros(block), np.zeros(block), np.full(block, np.inf)
        positions = np.full(block, 0 if target_far < 0.0 else n)
        for candidate in range(n):
            _judge(candidate, n, target_far, below_t, below_n, total_t, total_n, least, positions)
            _bin_weight(tile_weights, enrol, partner, bounds[candidate], bounds[candidate + 1], binned)
            for row in range(block):
                below_t[row] += binned[row]
            _bin_weight(tile_weights, enrol, partner, bounds[n + candidate], bounds[n + candidate + 1], binned)
            for row in range(block):
                below_n[row] += binned[row]
        _unjudged(total_t, total_n, positions)
        first = tile * block
        for row in range(min(block, rows - first)):
            out[first + row] = positions[row]


@njit(cache=True, parallel=True)
def weights_at_thresholds(weights, rows, enrol, partner, targets, bins, positions, out):
    """``out`` (4 x ``rows``): per resample, at its own threshold (``positions``, one a resample, padded to whole
    tiles), the weight of its target trials at or below it (a trial's ``bins`` at most the position), of all its
    target trials, of its non-target trials above it, and of all its non-target trials. Whole weights: the sums are
    exact in any order."""
    tiles, block = weights.shape[0], weights.shape[2]
    for tile in prange(tiles):
        tile_weights = weights[tile]
        first = tile * block
        position = positions[first : first + block]
        below_t, total_t, above_n, total_n = np.zeros(block), np.zeros(block), np.zeros(block), np.zeros(block)
        for trial in range(enrol.size):
            enrolled, partnered, at = tile_weights[enrol[trial]], tile_weights[partner[trial]], bins[trial]
            if targets[trial]:
                for row in range(block):
                    weight = enrolled[row] * partnered[row]
                    total_t[row] += weight
                    below_t[row] += weight if at <= position[row] else 0.0
            else:
                for row in range(block):
                    weight = enrolled[row] * partnered[row]
                    total_n[row] += weight
                    above_n[row] += weight if at > position[row] else 0.0
        for row in range(min(block, rows - first)):
            out[0, first + row], out[1, first + row] = below_t[row], total_t[row]
            out[2, first + row], out[3, first + row] = above_n[row], total_n[row]


@njit(cache=True)
def _judge(candidate, n, target_far, below_t, below_n, total_t, total_n, least, out):
    """Each draw's verdict on one of ``n`` candidates from the weight below it and the totals: the candidate of the
    least |FAR - FRR| so far (``target_far`` < 0; ``least`` holds the gaps), else the first whose FAR does not
    exceed ``target_far`` (``n`` until one does)."""
    for draw in range(out.size):
        if total_t[draw] > 0.0 and total_n[draw] > 0.0:
            frr = below_t[draw] / total_t[draw]
            far = (total_n[draw] - below_n[draw]) / total_n[draw]
            if target_far < 0.0:
                gap = abs(far - frr)
                if gap < least[draw]:
                    least[draw], out[draw] = gap, candidate
            elif out[draw] == n and far <= target_far:
                out[draw] = candidate


@njit(cache=True)
def _unjudged(total_t, total_n, out):
    """-1 for each draw without weight in a class."""
    for draw in range(out.size):
        if not (total_t[draw] > 0.0 and total_n[draw] > 0.0):
            out[draw] = -1


MISS_CHUNK = 64  # draws whose cumulative sums are made together, along the bins' contiguous rows


@njit(cache=True)
def miss_at_rates(p_fa, sums, n_bins, total_t, total_n, out):
    """``out`` (draws x rates): each draw's DET miss rate at each false-alarm rate of ``p_fa``, from the target
    (``sums[:n_bins]``) and non-target (``sums[n_bins:]``) weight of each bin (bins x draws, ascending score), by
    linear interpolation between thresholds; rows of a draw without weight in a class are left as they are.

    The arithmetic of the NumPy formulation it replaced, operation for operation, so the values are the same bits:
    cumulative sums down the bins, each class's rates divided by its total, and every draw's rising false-alarm
    rates (and the rates sought) moved up by twice its rank among the valid draws, as one sorted array held them.
    The sums are made for ``MISS_CHUNK`` draws at a time (``_miss_of_columns``), along the bins' contiguous rows; a
    rate is divided out only where the search reads it.
    """
    n_draws = sums.shape[1]
    missed = np.empty((n_bins + 1, MISS_CHUNK))  # target weight below each threshold
    accepted = np.empty((n_bins + 1, MISS_CHUNK))  # non-target weight at and above it
    running = np.empty(MISS_CHUNK)
    rank = 0
    for first in range(0, n_draws, MISS_CHUNK):
        last = min(first + MISS_CHUNK, n_draws)
        rank = _miss_of_columns(
            p_fa, sums[:, first:last], n_bins, total_t[first:last], total_n[first:last], rank, missed, accepted,
            running, out[first:last],
        )  # fmt: skip


@njit(cache=True)
def binned_miss_at_rates(weights, rows, enrol, partner, bounds, p_fa, out):
    """``miss_at_rates`` of ``binned_sums``' sums, the same bits, one tile of ``weights`` at a time and without the
    sums: the trials come grouped by bin (``bounds``: bin k's trials lie at ``bounds[k]..bounds[k + 1]``, in their
    order; bins 0..n_bins-1 the targets', n_bins..2 n_bins-1 the non-targets'), so each bin's weight is summed as
    ``binned_sums`` sums it and added straight into the running sums ``miss_at_rates`` makes (the target weight
    below each threshold, the non-target weight at and above it) and the class totals, in the same order: the bins x
    resamples sums of a curve (a few MB, zeroed and scattered into for every tile) are never held. ``rows``: the
    resamples (the last tile's rows past them are padding)."""
    tiles, block = weights.shape[0], weights.shape[2]
    n_bins = (bounds.size - 1) // 2
    total_t, total_n, binned = np.empty(block), np.empty(block), np.empty(block)
    missed, accepted = np.empty((n_bins + 1, block)), np.empty((n_bins + 1, block))
    rank = 0
    for tile in range(tiles):
        tile_weights = weights[tile]
        missed[0, :] = 0.0
        total_n[:] = 0.0
        for k in range(n_bins):
            _bin_weight(tile_weights, enrol, partner, bounds[k], bounds[k + 1], binned)
            for row in range(block):
                missed[k + 1, row] = missed[k, row] + binned[row]
            _bin_weight(tile_weights, enrol, partner, bounds[n_bins + k], bounds[n_bins + k + 1], binned)
            for row in range(block):
                accepted[k, row] = binned[row]  # the bin's own weight until the pass down makes it a tail sum
                total_n[row] += binned[row]
        accepted[n_bins, :] = 0.0
        for k in range(n_bins - 1, -1, -1):
            for row in range(block):
                accepted[k, row] = accepted[k + 1, row] + accepted[k, row]
        total_t[:] = missed[n_bins]
        first = tile * block
        width = min(block, rows - first)
        rank = _rates_of_columns(
            p_fa, n_bins, total_t[:width], total_n[:width], rank, missed, accepted, out[first : first + width]
        )


@njit(cache=True)
def _bin_weight(tile_weights, enrol, partner, start, end, out):
    """``out`` (the tile's rows): the weight of trials ``start..end``, summed in their order from 0."""
    out[:] = 0.0
    for trial in range(start, end):
        enrolled, partnered = tile_weights[enrol[trial]], tile_weights[partner[trial]]
        for row in range(out.size):
            out[row] += enrolled[row] * partnered[row]


@njit(cache=True)
def _miss_of_columns(p_fa, sums, n_bins, total_t, total_n, rank, missed, accepted, running, out):
    """``miss_at_rates``' rows ``out`` of the draws whose bin weights are the columns of ``sums`` (2 n_bins x draws,
    as many as ``missed``, ``accepted`` and ``running`` hold), ``rank`` valid draws before them; the rank after
    them."""
    width = sums.shape[1]
    running[:] = 0.0
    missed[0, :] = 0.0
    for k in range(n_bins):  # threshold k + 1 accepts bins k + 1 and above: bins 0..k are missed
        for c in range(width):
            running[c] += sums[k, c]
            missed[k + 1, c] = running[c]
    running[:] = 0.0
    accepted[n_bins, :] = 0.0
    for k in range(n_bins - 1, -1, -1):  # threshold k accepts bins k and above
        for c in range(width):
            running[c] += sums[n_bins + k, c]
            accepted[k, c] = running[c]
    return _rates_of_columns(p_fa, n_bins, total_t, total_n, rank, missed, accepted, out)


@njit(cache=True)
def _rates_of_columns(p_fa, n_bins, total_t, total_n, rank, missed, accepted, out):
    """The miss rates ``out`` of the draws in the first columns of ``missed`` (the target weight below each
    threshold) and ``accepted`` (the non-target weight at and above it), one a row of ``out``, ``rank`` valid draws
    before them; the rank after them."""
    wanted, found = np.empty(p_fa.size), np.empty(p_fa.size, np.int64)
    for c in range(out.shape[0]):
        n_target, n_nontarget = total_t[c], total_n[c]
        if not (n_target > 0.0 and n_nontarget > 0.0):
            continue
        offset = 2.0 * rank
        rank += 1
        # Every rate's search at once, a level at a time: the searches' loads and divisions overlap, where one
        # search waits on each of its own. Each finds what numpy.searchsorted(side="right") finds in rising order
        # (i = n_bins - k): how many points lie at or below the rate sought.
        for j in range(p_fa.size):
            wanted[j] = p_fa[j] + offset
            found[j] = 0
        size = n_bins + 1
        while size > 1:
            half = size // 2
            for j in range(p_fa.size):
                probe = found[j] + half
                found[j] = probe if accepted[n_bins - probe, c] / n_nontarget + offset <= wanted[j] else found[j]
            size -= half
        for j in range(p_fa.size):
            low = found[j] + 1 if accepted[n_bins - found[j], c] / n_nontarget + offset <= wanted[j] else found[j]
            right = min(low, n_bins)
            left = right - 1
            x0 = accepted[n_bins - left, c] / n_nontarget + offset
            x1 = accepted[n_bins - right, c] / n_nontarget + offset
            y0, y1 = missed[n_bins - left, c] / n_target, missed[n_bins - right, c] / n_target
            out[c, j] = y0 + (wanted[j] - x0) * (y1 - y0) / (x1 - x0) if x1 > x0 else y0
    return rank


# Those called from outside: their cache is checked (``roc_kernels.cached_on_this_machine``).
ENTRY_KERNELS = (
    weighted_sums,
    binned_sums,
    threshold_positions,
    binned_threshold_positions,
    weights_at_thresholds,
    miss_at_rates,
    binned_miss_at_rates,
)
