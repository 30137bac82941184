"""The file and folder names of a bundle and of what an audit writes beside its report, in a module of their own: what
only names a file (the report writer, the command line) imports them without the parsers of ``schemas.bundle`` and
their pandas."""

from __future__ import annotations

__all__ = [
    "ATTESTATION_FILE",
    "CHECKPOINTS_FILE",
    "CONFIG_FILE",
    "CORPUS_DIR",
    "CROISSANT_FILE",
    "ENVELOPE_FILE",
    "ENVIRONMENT_FILE",
    "KEY_ID_FILE",
    "NOT_SUBJECTS",
    "OPERATORS_FILE",
    "POLICY_FILE",
    "PROBLEMS_FILE",
    "PROVENANCE_DIR",
    "PROVENANCE_FILES",
    "PUBLIC_KEY_FILE",
    "REPORT_DIR",
    "REQUIRED_FILES",
    "RESULTS_FILE",
    "RUN_FILE",
    "RUN_SPECIFIC_FILES",
    "SCORES_DIR",
    "STATEMENT_FILE",
    "TIMINGS_FILE",
    "TRIALS_DIR",
    "UNSIGNED_FILE",
    "UTTERANCES_FILE",
]

RESULTS_FILE = "results.csv"
OPERATORS_FILE = "operators.json"
CHECKPOINTS_FILE = "checkpoints.json"
ENVIRONMENT_FILE = "environment.json"
CONFIG_FILE = "config.toml"
RUN_FILE = "run.json"
TIMINGS_FILE = "timings.json"
TRIALS_DIR = "trials"
SCORES_DIR = "scores"
CORPUS_DIR = "corpus"
UTTERANCES_FILE = "utterances.csv"
PROBLEMS_FILE = "problems.csv"
CROISSANT_FILE = "croissant.json"  # the bundle's Croissant 1.1 card (provenance.croissant), a subject like the rest
PROVENANCE_DIR = "provenance"
REPORT_DIR = "report"
STATEMENT_FILE = f"{PROVENANCE_DIR}/statement.json"
ENVELOPE_FILE = f"{PROVENANCE_DIR}/run.intoto.jsonl"
PUBLIC_KEY_FILE = f"{PROVENANCE_DIR}/signing-key.pub.pem"
KEY_ID_FILE = f"{PROVENANCE_DIR}/signing-key.id"
UNSIGNED_FILE = f"{PROVENANCE_DIR}/UNSIGNED.txt"
# What provenance/ may hold; report/ is the audit written after signing and is never read back.
PROVENANCE_FILES = (STATEMENT_FILE, ENVELOPE_FILE, PUBLIC_KEY_FILE, KEY_ID_FILE, UNSIGNED_FILE)
NOT_SUBJECTS = (PROVENANCE_DIR, REPORT_DIR)
REQUIRED_FILES = (RESULTS_FILE, OPERATORS_FILE, CHECKPOINTS_FILE, ENVIRONMENT_FILE)
# Files that record the machine and the clock: two runs of one configuration may differ in these (and in the
# signature), never in any other file.
RUN_SPECIFIC_FILES = (ENVIRONMENT_FILE, TIMINGS_FILE)
# Beside an audit's report: its signed verdict (provenance.attestation) and the policy it was audited under.
ATTESTATION_FILE = "attestation.intoto.jsonl"
POLICY_FILE = "audit-policy.json"
