"""Verification of an artefact bundle as a straight line of ``verify_*`` steps (``signature``, ``subjects``,
``binding``, ``table_binding``, ``rescore``, ``trial_checks``, the line itself in ``verification``) that returns a
``VerifiedBundle`` (``verified``); ``curves`` draws the report's per-trial curves from it; ``design`` audits its
signed trial lists for confounds (issue 41).
"""

from audit.bundle.curves import bayes_error_entry, curve, curves_of_bundle, det_points, score_histogram
from audit.bundle.design import design_audit, scores_design_audit
from audit.bundle.rescore import EER_KEYS
from audit.bundle.signature import verify_statement
from audit.bundle.source import open_bundle
from audit.bundle.table_binding import parse_subset
from audit.bundle.verification import NOT_RUN_UNAUTHENTICATED, verify_bundle
from audit.bundle.verified import Authentication, LoadedFiles, StatementError, Trust, VerifiedBundle

__all__ = [
    "EER_KEYS",
    "NOT_RUN_UNAUTHENTICATED",
    "Authentication",
    "LoadedFiles",
    "StatementError",
    "Trust",
    "VerifiedBundle",
    "bayes_error_entry",
    "curve",
    "curves_of_bundle",
    "design_audit",
    "det_points",
    "open_bundle",
    "parse_subset",
    "score_histogram",
    "scores_design_audit",
    "verify_bundle",
    "verify_statement",
]
