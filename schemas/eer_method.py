"""The EER variants the toolkit computes: one vocabulary for the configurations, the results schema, the metrics,
the bootstrap and the reports (DESIGN.md section 4 defines each)."""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "EER_METHODS",
    "EerMethod",
]


class EerMethod(StrEnum):
    """How the EER is read off the empirical ROC; each member is its own spelling in files (``"rocch"``)."""

    LEGACY = "legacy"  # the paper's routine: the roc_curve point nearest FAR = FRR, the mean of its two rates
    ROCCH = "rocch"  # BOSARIS: where the ROC convex hull meets FAR = FRR (the recommended one)
    INTERP = "interp"  # linear interpolation between the points that bracket FAR = FRR (VoxSRC-style)


EER_METHODS: tuple[EerMethod, ...] = tuple(EerMethod)
