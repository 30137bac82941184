"""The verification metrics: point metrics (EER in three variants, minDCF, AUC) in ``point``; the bootstrap's
weighted ROC curves of many resamples in ``weighted_roc`` (numba kernels in ``roc_kernels``, imported only when
that module is).
"""

from audit.metrics.point import MetricInputError, auc, eer, grouped_metrics, min_dcf
from schemas.eer_method import EER_METHODS, EerMethod

__all__ = ["EER_METHODS", "EerMethod", "MetricInputError", "auc", "eer", "grouped_metrics", "min_dcf"]
