"""Compiled loops behind ``audit.metrics.calibration``: minCllr and minDCF of many weightings of one set of tie groups
at once.

A bootstrap's draws weigh the same trials differently, so the tie groups (the distinct scores, ascending) are found
once and each draw is a row of group weights. Each row runs pool-adjacent-violators on a stack of pools in one
pass over its groups: a group of no weight is left out (it moves no pool and costs nothing), a new pool is merged
with the one before it while that one's target fraction is not below its own (compared as the cross products
``t_a n_b >= t_b n_a``, exact on integer weights), and each pool's LLR is ``log(t N) - log(n T)``, as
``group_llrs`` computes it. minDCF walks the thresholds (each group accepted with those above it, then none) with
running sums of the misses and false alarms.

``pav_blocks`` is the pool-adjacent-violators of one weighted sequence (a record's tie groups, or the steps of
ROC curves laid end to end): Busing's O(n) algorithm (J. Stat. Softw. 102, 2022) with the same arithmetic in the
same order as ``scipy.optimize.isotonic_regression``, so the blocks are that function's, bit for bit (tested),
without importing ``scipy.optimize`` (about 0.15 s CPU of an audit). Compiled once per machine (``cache=True``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numpy.typing import NDArray

_LOG2 = math.log(2.0)


@njit(cache=True)
def _softplus(value):  # type: ignore[no-untyped-def]
    """``log(1 + e^value)``, as numpy's ``logaddexp(0, value)`` computes it (finite at both ends, 0 at -inf)."""
    if value == 0.0:
        return _LOG2
    if value > 0.0:
        return value + math.log1p(math.exp(-value))
    return math.log1p(math.exp(value))


@njit(cache=True)
def _class_totals(targets, nontargets):  # type: ignore[no-untyped-def]
    """The row's target and non-target weight, summed group by group (the order both minima's callers rely on)."""
    total_t, total_n = 0.0, 0.0
    for group in range(targets.size):
        total_t += targets[group]
        total_n += nontargets[group]
    return total_t, total_n


@njit(cache=True)
def _min_cllr_row(targets, nontargets, total_t, total_n, pool_t, pool_n):  # type: ignore[no-untyped-def]
    if not (total_t > 0.0 and total_n > 0.0):
        return np.nan
    top = 0
    for group in range(targets.size):
        t, n = targets[group], nontargets[group]
        if t + n == 0.0:
            continue
        pool_t[top], pool_n[top] = t, n
        top += 1
        while top > 1 and pool_t[top - 2] * pool_n[top - 1] >= pool_t[top - 1] * pool_n[top - 2]:
            pool_t[top - 2] += pool_t[top - 1]
            pool_n[top - 2] += pool_n[top - 1]
            top -= 1
    target_cost, nontarget_cost = 0.0, 0.0
    for pool in range(top):  # a pool of one class has an infinite LLR, which costs its trials nothing
        t, n = pool_t[pool], pool_n[pool]
        if t > 0.0 and n > 0.0:
            llr = math.log(t * total_n) - math.log(n * total_t)
            target_cost += t * _softplus(-llr)
            nontarget_cost += n * _softplus(llr)
    return (target_cost / total_t + nontarget_cost / total_n) / (2.0 * _LOG2)


@njit(cache=True)
def min_cllr_rows(targets, nontargets):  # type: ignore[no-untyped-def]
    """minCllr of each row of tie-group weights (rows x groups, ascending scores); NaN where a class has no
    weight. One thread: a row costs microseconds, less than waking a pool of workers."""
    rows, groups = targets.shape
    out = np.empty(rows)
    pool_t, pool_n = np.empty(groups), np.empty(groups)
    for row in range(rows):
        total_t, total_n = _class_totals(targets[row], nontargets[row])
        out[row] = _min_cllr_row(targets[row], nontargets[row], total_t, total_n, pool_t, pool_n)
    return out


@njit(cache=True)
def _min_dcf_row(targets, nontargets, total_t, total_n, weight_miss, weight_fa, accepted):  # type: ignore[no-untyped-def]
    if not (total_t > 0.0 and total_n > 0.0):
        return np.nan
    groups = targets.size
    accepted[groups] = 0.0
    for group in range(groups - 1, -1, -1):
        accepted[group] = accepted[group + 1] + nontargets[group]
    missed, least = 0.0, np.inf
    for threshold in range(groups + 1):
        if threshold:
            missed += targets[threshold - 1]
        cost = weight_miss * (missed / total_t) + weight_fa * (accepted[threshold] / total_n)
        least = min(least, cost)
    return least / min(weight_miss, weight_fa)


@njit(cache=True)
def min_dcf_rows(targets, nontargets, weight_miss, weight_fa):  # type: ignore[no-untyped-def]
    """Normalised minDCF of each row of tie-group weights (rows x groups, ascending scores), accepting each group
    and those above it or none; NaN where a class has no weight."""
    rows, groups = targets.shape
    out = np.empty(rows)
    accepted = np.empty(groups + 1)
    for row in range(rows):
        total_t, total_n = _class_totals(targets[row], nontargets[row])
        out[row] = _min_dcf_row(targets[row], nontargets[row], total_t, total_n, weight_miss, weight_fa, accepted)
    return out


@njit(cache=True)
def minima_of_draws(multiplicities, enrol, partner, group, targets, n_groups, weight_miss, weight_fa):  # type: ignore[no-untyped-def]
    """minCllr and minDCF of every draw (rows of ``multiplicities``, draws x speakers) in one pass per draw: its
    target and non-target weight per tie group (a trial weighs its enrolment speaker's multiplicity times its
    partner's), then PAV (``min_cllr_rows``' row) and the thresholds (``min_dcf_rows``' row) on them, without the
    draws x groups arrays between them. The groups a draw gives no weight are dropped first (about half of them in
    a draw of a few speakers): PAV skips them, and a threshold beside one costs what the next threshold costs, to
    the bit (its running sums add 0), so the minima are those of every group."""
    rows = multiplicities.shape[0]
    min_cllr, min_dcf = np.empty(rows), np.empty(rows)
    target_weights, nontarget_weights = np.empty(n_groups), np.empty(n_groups)
    pool_t, pool_n, accepted = np.empty(n_groups), np.empty(n_groups), np.empty(n_groups + 1)
    for row in range(rows):
        target_weights[:] = 0.0
        nontarget_weights[:] = 0.0
        for trial in range(group.size):
            weight = multiplicities[row, enrol[trial]] * multiplicities[row, partner[trial]]
            if targets[trial]:
                target_weights[group[trial]] += weight
            else:
                nontarget_weights[group[trial]] += weight
        weighed = 0
        for index in range(n_groups):  # the weighed groups moved to the front, in order
            if target_weights[index] + nontarget_weights[index] != 0.0:
                target_weights[weighed] = target_weights[index]
                nontarget_weights[weighed] = nontarget_weights[index]
                weighed += 1
        targets_of, nontargets_of = target_weights[:weighed], nontarget_weights[:weighed]
        total_t, total_n = _class_totals(targets_of, nontargets_of)  # once for both minima
        min_cllr[row] = _min_cllr_row(targets_of, nontargets_of, total_t, total_n, pool_t, pool_n)
        min_dcf[row] = _min_dcf_row(targets_of, nontargets_of, total_t, total_n, weight_miss, weight_fa, accepted)
    return min_cllr, min_dcf


@njit(cache=True)
def _pav_blocks(values, weights):  # type: ignore[no-untyped-def]
    """The start of each block of the non-decreasing weighted least-squares fit of ``values`` (positive
    ``weights``), then ``values.size``; ``values`` and ``weights`` are overwritten by the blocks' means and
    weights."""
    n = values.size
    blocks = np.empty(n + 1, np.int64)
    blocks[0] = 0
    if n == 0:
        return blocks
    blocks[1] = 1
    block, previous_mean, previous_weight = 0, values[0], weights[0]
    item = 1
    while item < n:
        block += 1
        mean, weight = values[item], weights[item]
        if previous_mean >= mean:  # a violator: pooled with the block before, then with any it now violates
            block -= 1
            total = previous_weight * previous_mean + weight * mean
            weight += previous_weight
            mean = total / weight
            while item < n - 1 and mean >= values[item + 1]:
                item += 1
                total += weights[item] * values[item]
                weight += weights[item]
                mean = total / weight
            while block > 0 and values[block - 1] >= mean:
                block -= 1
                total += weights[block] * values[block]
                weight += weights[block]
                mean = total / weight
        values[block] = previous_mean = mean
        weights[block] = previous_weight = weight
        blocks[block + 1] = item + 1
        item += 1
    return blocks[: block + 2]


def pav_blocks(values: NDArray[np.float64], weights: NDArray[np.float64], increasing: bool) -> NDArray[np.int64]:
    """``scipy.optimize.isotonic_regression(values, weights=weights, increasing=increasing).blocks``: where each
    block of the monotone fit starts, then ``values.size`` (positive ``weights``; the inputs are not changed)."""
    order = slice(None) if increasing else slice(None, None, -1)
    blocks: NDArray[np.int64] = _pav_blocks(
        np.array(values[order], dtype=np.float64), np.array(weights[order], dtype=np.float64)
    )
    return blocks if increasing else blocks[-1] - blocks[::-1]


# Those called from outside (``_pav_blocks`` through ``pav_blocks``): their cache is checked.
ENTRY_KERNELS = (min_cllr_rows, min_dcf_rows, minima_of_draws, _pav_blocks)
