"""The verification metrics: point metrics (EER in three variants, minDCF, AUC) in ``point``; calibration (Cllr,
minCllr, actDCF, linear logistic calibration) in ``calibration``; spoofing-aware verification (SV-, SPF- and
SASV-EER, a-DCF, min t-DCF, t-EER) in ``spoofing``; the bootstrap's weighted ROC curves of many resamples in
``weighted_roc`` (numba kernels in ``roc_kernels``, imported only when that module is).
"""

from audit.metrics.calibration import (
    LinearCalibration,
    TieGroups,
    act_dcf,
    bayes_error_curve,
    bayes_threshold,
    cllr,
    fit_logistic_calibration,
    min_cllr,
    pav_llrs,
)
from audit.metrics.point import MetricInputError, auc, eer, grouped_metrics, min_dcf
from audit.metrics.spoofing import ADcfCosts, TDcfCosts, a_dcf, min_t_dcf, sasv_eer, spf_eer, sv_eer, t_eer
from schemas.eer_method import EER_METHODS, EerMethod

__all__ = [
    "EER_METHODS",
    "ADcfCosts",
    "EerMethod",
    "LinearCalibration",
    "MetricInputError",
    "TDcfCosts",
    "TieGroups",
    "a_dcf",
    "act_dcf",
    "auc",
    "bayes_error_curve",
    "bayes_threshold",
    "cllr",
    "eer",
    "fit_logistic_calibration",
    "grouped_metrics",
    "min_cllr",
    "min_dcf",
    "min_t_dcf",
    "pav_llrs",
    "sasv_eer",
    "spf_eer",
    "sv_eer",
    "t_eer",
]
