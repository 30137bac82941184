"""Compiled loops behind ``audit.metrics.calibration``: minCllr and minDCF of many weightings of one set of tie groups
at once.

A bootstrap's draws weigh the same trials differently, so the tie groups (the distinct scores, ascending) are found
once and each draw is a row of group weights. Each row runs pool-adjacent-violators on a stack of pools in one
pass over its groups: a group of no weight is left out (it moves no pool and costs nothing), a new pool is merged
with the one before it while that one's target fraction is not below its own (compared as the cross products
``t_a n_b >= t_b n_a``, exact on integer weights), and each pool's LLR is ``log(t N) - log(n T)``, as
``group_llrs`` computes it. minDCF walks the thresholds (each group accepted with those above it, then none) with
running sums of the misses and false alarms. Compiled once per machine (``cache=True``), imported only when draws
are measured.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

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
    draws x groups arrays between them."""
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
        total_t, total_n = _class_totals(target_weights, nontarget_weights)  # once for both minima
        min_cllr[row] = _min_cllr_row(target_weights, nontarget_weights, total_t, total_n, pool_t, pool_n)
        min_dcf[row] = _min_dcf_row(
            target_weights, nontarget_weights, total_t, total_n, weight_miss, weight_fa, accepted
        )
    return min_cllr, min_dcf


ENTRY_KERNELS = (min_cllr_rows, min_dcf_rows, minima_of_draws)  # those called from outside: their cache is checked
