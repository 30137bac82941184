"""Speaker-cluster draws: two-way multiplicities of the speaker bootstrap, trial codes, percentile intervals."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from audit.metrics import MetricInputError

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
Verdict = Literal["additive within margin", "non-additive", "undetermined"]


class StatisticsInputError(MetricInputError):
    """Inputs on which a statistic is not defined (mismatched lengths, missing terms, overlapping splits)."""


# Speaker-cluster bootstrap of weighted EERs


def cluster_codes(clusters: ArrayLike) -> tuple[IntArray, int]:
    """Integer codes 0..C-1 for per-trial cluster ids (sorted ids, so equal id lists give equal codes)."""
    _, codes = np.unique(np.asarray(clusters), return_inverse=True)
    return codes.astype(np.int64), int(codes.max()) + 1 if codes.size else 0


def draw_cluster_weights(n_clusters: int, n_resamples: int, seed: int) -> FloatArray:
    """(n_resamples, n_clusters) multiplicities: each row draws ``n_clusters`` clusters with replacement."""
    if n_clusters < 2:
        raise StatisticsInputError(f"the bootstrap needs at least 2 speaker clusters, got {n_clusters}")
    if n_resamples < 1:
        raise StatisticsInputError(f"n_resamples must be positive, got {n_resamples}")
    drawn = np.random.default_rng(seed).integers(0, n_clusters, size=(n_resamples, n_clusters))
    drawn += np.arange(n_resamples)[:, None] * n_clusters  # one bincount for all rows
    return np.bincount(drawn.ravel(), minlength=n_resamples * n_clusters).reshape(n_resamples, -1).astype(float)


def pair_codes(
    index: NDArray[Any], enrol: ArrayLike, test: ArrayLike | None, positions: Mapping[str, int] | None = None
) -> tuple[IntArray, IntArray | None]:
    """Speaker codes of each trial in the sorted speaker ``index``: the enrolment speaker, and the partner
    (the test speaker of a trial between two speakers; ``len(index)``, a column of weight 1, for a trial of one
    speaker). ``test`` None: one-way clustering on the enrolment speaker (no partner). ``positions`` (id ->
    position in ``index``, made here when not given) is a hashed lookup: ids are compared as text, and an id
    missing from the index is refused."""
    positions = positions if positions is not None else _positions(index)
    enrol_codes = _codes_of(positions, enrol)
    if test is None:
        return enrol_codes, None
    return enrol_codes, _partners(enrol_codes, _codes_of(positions, test), len(positions))


def coded_pairs(drawn: IntArray, enrol: IntArray, test: IntArray, n_drawn: int) -> tuple[IntArray, IntArray]:
    """``pair_codes`` of trials whose speakers come as codes of names (``text_codes``), ``drawn`` giving each name's
    position among the ``n_drawn`` drawn speakers (``drawn_positions``)."""
    enrol_codes = drawn[enrol]
    return enrol_codes, _partners(enrol_codes, drawn[test], n_drawn)


def _partners(enrol_codes: IntArray, test_codes: IntArray, n_drawn: int) -> IntArray:
    """Each trial's partner: its test speaker, or ``n_drawn`` (a column of weight 1) for a trial of one speaker."""
    return np.where(test_codes == enrol_codes, n_drawn, test_codes)


def drawn_positions(names: NDArray[np.str_], positions: Mapping[str, int], used: IntArray) -> IntArray:
    """Each of ``names``' position among the drawn speakers (``positions``; -1 where not drawn), refusing a name that
    ``used`` (codes of names, in trial order) holds and the draws lack."""
    drawn = np.fromiter((positions.get(name, -1) for name in names.tolist()), dtype=np.int64, count=names.size)
    absent = used[drawn[used] < 0]
    if absent.size:
        raise _not_drawn(str(names[absent[0]]))
    return drawn


def text_codes(*columns: ArrayLike) -> tuple[NDArray[np.str_], list[IntArray]]:
    """Ids compared as text, as codes: the sorted distinct ids (text) of all ``columns`` together, and each column's
    positions among them. Text ids are hashed once (``pandas.factorize``), then only the distinct ones sorted: for a
    list's speakers several times cheaper than text arrays sorted or searched (other ids are each made text).

    >>> names, (enrol, test) = text_codes(np.array(["b", "a"], dtype=object), np.array(["a", 3], dtype=object))
    >>> names.tolist(), enrol.tolist(), test.tolist()
    (['3', 'a', 'b'], [2, 1], [1, 0])
    """
    import pandas as pd

    arrays = [np.asarray(column, dtype=object).ravel() for column in columns]
    every = np.concatenate(arrays) if arrays else np.empty(0, object)
    raw, distinct = pd.factorize(every, use_na_sentinel=False)
    if all(isinstance(id_, str) for id_ in distinct):
        names, merged = np.unique(np.asarray(distinct, dtype=object).astype(str), return_inverse=True)
        codes = merged[raw]
    else:  # factorize joins ids equal as values (1, 1.0, True; None and NaN), not as text: each id made text instead
        names, codes = np.unique(every.astype(str), return_inverse=True)
    codes = codes.astype(np.int64)
    ends = np.cumsum([array.size for array in arrays])
    return names, list(np.split(codes, ends[:-1]))


def _positions(index: NDArray[Any]) -> dict[str, int]:
    return {str(speaker): position for position, speaker in enumerate(np.asarray(index).tolist())}


def _codes_of(positions: Mapping[str, int], ids: ArrayLike) -> IntArray:
    array = np.asarray(ids)
    keys = array.tolist() if array.dtype.kind in "UO" else array.astype(str).tolist()
    try:
        return np.fromiter(map(positions.__getitem__, keys), dtype=np.int64, count=len(keys))
    except (KeyError, TypeError):
        pass
    try:  # objects other than text (e.g. numbers) are compared as their text
        return np.fromiter(map(positions.__getitem__, map(str, keys)), dtype=np.int64, count=len(keys))
    except KeyError as error:
        raise _not_drawn(error.args[0]) from None


def _not_drawn(speaker: str) -> StatisticsInputError:
    return StatisticsInputError(f"speaker {speaker!r} is not among the drawn speakers")


def percentile_interval(draws: FloatArray, level: float) -> dict[str, Any]:
    """Percentile interval of the defined draws, with how many draws were undefined (NaN)."""
    defined = draws[np.isfinite(draws)]
    tail = (1.0 - level) / 2.0
    if defined.size == 0:
        return {"low": None, "high": None, "n_undefined": int(draws.size)}
    low, high = np.quantile(defined, [tail, 1.0 - tail])
    return {"low": float(low), "high": float(high), "n_undefined": int(draws.size - defined.size)}


def bias_corrected_interval(draws: FloatArray, estimate: float, level: float) -> dict[str, Any]:
    """Bias-corrected percentile interval (Efron's BC) of the defined draws around ``estimate``.

    ``z0 = Phi^-1(share of draws below the estimate)`` (a draw equal to it counts half; the share is kept within
    half a draw of 0 and 1) measures how far the draws sit from the estimate; the interval is the draws'
    ``Phi(2 z0 -+ z)`` quantiles. When the estimator is biased and the resamples reproduce its bias (the convex
    hull EER's finite-sample optimism: the hull of noisy points lies above the population's curve), the draws sit
    on the far side of the estimate and the percentile interval is shifted away from the truth by twice the
    bias; BC moves it back. Draws centred on the estimate give the percentile interval.

    Example:
        Draws centred on the estimate give the percentile interval; draws all above it move the interval down:

        >>> draws = np.linspace(0.0, 1.0, 1001)
        >>> centred = bias_corrected_interval(draws, 0.5, 0.9)
        >>> round(centred["low"], 3), round(centred["high"], 3)
        (0.05, 0.95)
        >>> shifted = bias_corrected_interval(draws, 0.4, 0.9)
        >>> round(shifted["low"], 3), round(shifted["high"], 3)
        (0.016, 0.873)
    """
    defined = draws[np.isfinite(draws)]
    if defined.size == 0 or not np.isfinite(estimate):
        return percentile_interval(draws, level)
    below = (np.count_nonzero(defined < estimate) + 0.5 * np.count_nonzero(defined == estimate)) / defined.size
    low, high = np.quantile(defined, _bias_corrected_levels(below, defined.size, level))
    return {"low": float(low), "high": float(high), "n_undefined": int(draws.size - defined.size)}


def bias_corrected_rows(
    ordered: FloatArray, estimates: FloatArray, level: float, n_defined: IntArray | None = None
) -> FloatArray:
    """``bias_corrected_interval``'s bounds (rows x 2) of each row's first ``n_defined`` draws (``sorted_quantiles``:
    ascending, NaN after them) around its finite estimate: the same floats, from draws sorted once for every row (a
    setting's encoders)."""
    n = np.full(ordered.shape[0], ordered.shape[1]) if n_defined is None else n_defined
    below = (
        np.count_nonzero(ordered < estimates[:, None], axis=1)
        + 0.5 * np.count_nonzero(ordered == estimates[:, None], axis=1)
    ) / n
    return sorted_quantiles(ordered, np.stack(_bias_corrected_levels(below, n, level), axis=1), n)


def _bias_corrected_levels(below: Any, n_defined: Any, level: float) -> tuple[Any, Any]:
    """BC's two quantile levels ``Phi(2 z0 -+ z)`` from the share of the ``n_defined`` draws below the estimate (a
    float and a count, or arrays of them: element by element the same floats)."""
    from scipy.special import ndtr, ndtri  # the normal CDF and its inverse, without importing scipy.stats

    half_draw = 0.5 / n_defined
    z0 = ndtri(np.minimum(np.maximum(below, half_draw), 1.0 - half_draw))
    z = float(ndtri(0.5 + level / 2.0))
    return ndtr(2.0 * z0 - z), ndtr(2.0 * z0 + z)


def sorted_quantiles(ordered: FloatArray, q: ArrayLike, n_defined: IntArray | None = None) -> FloatArray:
    """``np.quantile`` (its default, 'linear') of each row's first ``n_defined`` draws (default: all; at least one),
    given each row ascending over them (NaN after them), at ``q`` (k levels for every row, or rows x k): rows x k,
    computed as numpy computes it on those draws (the same floats: tested), so that rows sorted once serve other
    order statistics too and each row may have its own levels and its own undefined draws."""
    n = np.full(ordered.shape[0], ordered.shape[1]) if n_defined is None else n_defined
    top = (n - 1)[:, None]
    virtual = top * np.asarray(q, dtype=float)
    previous = np.floor(virtual)
    last = virtual >= top  # numpy takes the largest, its index -1 entering gamma (which matters to a signed zero)
    gamma = virtual - np.where(last, -1.0, previous)
    a = np.take_along_axis(ordered, np.where(last, top, previous).astype(np.intp), axis=1)
    b = np.take_along_axis(ordered, np.where(last, top, previous + 1).astype(np.intp), axis=1)
    difference = b - a
    result: FloatArray = np.where(gamma >= 0.5, b - difference * (1 - gamma), a + difference * gamma)
    return result


def basic_interval(
    draws: FloatArray, estimate: float, level: float, bounds: tuple[float, float] = (-np.inf, np.inf)
) -> dict[str, Any]:
    """Basic (reflected) bootstrap interval around a bias-corrected estimate (Davison and Hinkley, "Bootstrap methods
    and their application", 1997, eq. 5.6 and section 2.2.1): ``[2 t - q_high, 2 t - q_low]`` of the defined draws,
    and ``2 t - mean`` of them as the estimate, each kept within ``bounds`` (the metric's range). For an estimator
    whose resamples reproduce its bias at full strength: a minimum fitted on the trials it scores (PAV's minCllr,
    minDCF's best threshold) is optimistic in the sample and more so in a resample, which scores duplicated trials
    with a map fitted to them, so the draws sit beyond the estimate by about the bias and the percentile interval
    (and BC, whose correction saturates) misses the truth; reflecting them puts it back. ``in_sample``: the
    estimate as computed.

    Example:
        Draws below an estimate of 0.5 by 0.1 on average: the estimate corrected to 0.6, the interval reflected:

        >>> interval = basic_interval(np.linspace(0.3, 0.5, 201), 0.5, 0.9)
        >>> [round(interval[key], 3) for key in ("estimate", "low", "high", "in_sample")]
        [0.6, 0.51, 0.69, 0.5]
    """
    defined = draws[np.isfinite(draws)]
    if defined.size == 0 or not np.isfinite(estimate):
        return {"estimate": float(estimate), **percentile_interval(draws, level), "in_sample": float(estimate)}
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(defined, [tail, 1.0 - tail])
    lowest, highest = bounds
    return {
        "estimate": float(np.clip(basic_estimate(defined, estimate), lowest, highest)),
        "low": float(np.clip(2.0 * estimate - high, lowest, highest)),
        "high": float(np.clip(2.0 * estimate - low, lowest, highest)),
        "n_undefined": int(draws.size - defined.size),
        "in_sample": float(estimate),
    }


def basic_estimate(draws: FloatArray, estimate: float) -> float:
    """The basic bootstrap's bias-corrected estimate, ``2 t - mean`` of the defined draws (``basic_interval``'s
    before its bounds), without the interval's quantiles for a caller that needs only the estimate; ``estimate``
    itself when no draw is defined or it is not finite.

    >>> round(basic_estimate(np.linspace(0.3, 0.5, 201), 0.5), 3)  # basic_interval's example, unbounded
    0.6
    """
    defined = draws[np.isfinite(draws)]
    if defined.size == 0 or not np.isfinite(estimate):
        return float(estimate)
    return float(2.0 * estimate - defined.mean())
