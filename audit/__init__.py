"""The audit: any results table validated, its aggregates recomputed and the paper's traps raised as flags; a bundle
verified (signature, digests, binding, re-scoring, statistics); anyone's trial list and score file audited.

The audit stands in five wings, each a package with its face: ``audit.metrics`` (point, calibration and
spoofing-aware metrics), ``audit.table`` (reading, contrasts, aggregates, checks, claims), ``audit.bundle`` (the
verification line), ``audit.statistics`` (speaker-bootstrap intervals and verdicts) and ``audit.scores`` (``audit
scores``); ``audit.result`` assembles the report and ``audit.verify`` runs ``audit verify``. This face lends the
entry points (``verify(AuditRequest(table, bundle=..., key=...))``, ``audit_scores``, ``verify_bundle``), each
loaded on first use. The audit imports no torch.
"""

from schemas import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
