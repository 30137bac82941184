"""The names the audit face lends, each from its home module (read by schemas.faces and by type checkers)."""

from .attestation import attestation_pointer as attestation_pointer
from .attestation import write_audit_attestation as write_audit_attestation
from .bundle import VerifiedBundle as VerifiedBundle
from .bundle import open_bundle as open_bundle
from .bundle import verify_bundle as verify_bundle
from .result import TOOL_NAME as TOOL_NAME
from .result import assemble_report as assemble_report
from .result import exit_code as exit_code
from .result import verdict as verdict
from .scores import ScoringConfig as ScoringConfig
from .scores import audit_scores as audit_scores
from .verify import AuditRequest as AuditRequest
from .verify import TableAudit as TableAudit
from .verify import audit_table as audit_table
from .verify import finish_audit as finish_audit
from .verify import verify as verify
