"""How trials become results rows: each record's trials scored by cosine, the outcomes of what degraded,
the AS-norm cohort, the beyond-EER columns (calibration, countermeasure, spoofing-aware metrics) and results.csv."""

from runner.scoring.beyond_eer import beyond_eer_columns, countermeasure_scores, countermeasure_sides
from runner.scoring.cohort import CLEAN_CHAIN, Cohort, cohort_matrices, split_cohort, trial_cohort_statistics
from runner.scoring.outcomes import chain_outcome, operator_report, side_outcome
from runner.scoring.results import grouped_record_metrics, results_row, results_table
from runner.scoring.scores import score_record, unscorable_reason

__all__ = [
    "CLEAN_CHAIN",
    "Cohort",
    "beyond_eer_columns",
    "chain_outcome",
    "cohort_matrices",
    "countermeasure_scores",
    "countermeasure_sides",
    "grouped_record_metrics",
    "operator_report",
    "results_row",
    "results_table",
    "score_record",
    "side_outcome",
    "split_cohort",
    "trial_cohort_statistics",
    "unscorable_reason",
]
