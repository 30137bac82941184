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
    fit_logistic_calibration_draws,
    min_cllr,
    min_cllr_of_groups,
    pav_llrs,
)
from audit.metrics.normalisation import COHORT_SD_DDOF, as_norm_of_rows, top_cohort_statistics
from audit.metrics.point import MetricInputError, auc, eer, grouped_metrics, min_dcf
from audit.metrics.record_calibration import (
    CalibrationRecord,
    Group,
    GroupFit,
    calibration_records,
    declared_calibration,
    fit_groups,
    is_reference,
)
from audit.metrics.record_spoofing import SpoofingSet, spoofing_metrics, spoofing_of_rows, spoofing_sets_of_rows
from audit.metrics.spoofing import ADcfCosts, TDcfCosts, a_dcf, min_t_dcf, sasv_eer, spf_eer, sv_eer, t_eer
from audit.metrics.weighted_roc import (
    TILE,
    ResampleWeights,
    binned_sums,
    prepare_kernels,
    weighted_eer,
    weighted_eers,
    weighted_sums,
)
from schemas import EER_METHODS, EerMethod

__all__ = [
    "COHORT_SD_DDOF",
    "EER_METHODS",
    "TILE",
    "ADcfCosts",
    "CalibrationRecord",
    "EerMethod",
    "Group",
    "GroupFit",
    "LinearCalibration",
    "MetricInputError",
    "ResampleWeights",
    "SpoofingSet",
    "TDcfCosts",
    "TieGroups",
    "a_dcf",
    "act_dcf",
    "as_norm_of_rows",
    "auc",
    "bayes_error_curve",
    "bayes_threshold",
    "binned_sums",
    "calibration_records",
    "cllr",
    "declared_calibration",
    "eer",
    "fit_groups",
    "fit_logistic_calibration",
    "fit_logistic_calibration_draws",
    "grouped_metrics",
    "is_reference",
    "min_cllr",
    "min_cllr_of_groups",
    "min_dcf",
    "min_t_dcf",
    "pav_llrs",
    "prepare_kernels",
    "sasv_eer",
    "spf_eer",
    "spoofing_metrics",
    "spoofing_of_rows",
    "spoofing_sets_of_rows",
    "sv_eer",
    "t_eer",
    "top_cohort_statistics",
    "weighted_eer",
    "weighted_eers",
    "weighted_sums",
]
