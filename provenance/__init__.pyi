"""The names the provenance face lends, each from its home module (read by schemas.faces and by type checkers)."""

from .atomic import (
    FOLDER_FLAGS as FOLDER_FLAGS,
)
from .atomic import (
    TEMP_SUFFIX as TEMP_SUFFIX,
)
from .atomic import (
    atomic_path as atomic_path,
)
from .atomic import (
    atomic_write_bytes as atomic_write_bytes,
)
from .atomic import (
    atomic_write_text as atomic_write_text,
)
from .atomic import (
    check_writable_folder as check_writable_folder,
)
from .atomic import (
    current_umask as current_umask,
)
from .atomic import (
    is_temporary as is_temporary,
)
from .atomic import (
    remove_temporaries as remove_temporaries,
)
from .atomic import (
    write_files_into as write_files_into,
)
from .attestation import CAUSE_PREFIX as CAUSE_PREFIX
from .attestation import MAX_ATTESTATION_BYTES as MAX_ATTESTATION_BYTES
from .attestation import RESULT_FAILED as RESULT_FAILED
from .attestation import RESULT_PASSED as RESULT_PASSED
from .attestation import RESULT_WARNED as RESULT_WARNED
from .attestation import ROLES as ROLES
from .attestation import TEST_RESULT_PREDICATE_TYPE as TEST_RESULT_PREDICATE_TYPE
from .attestation import VERIFIER_ID as VERIFIER_ID
from .attestation import VSA_PREDICATE_TYPE as VSA_PREDICATE_TYPE
from .attestation import AttestationMismatch as AttestationMismatch
from .attestation import AttestedSubject as AttestedSubject
from .attestation import AuditOutcome as AuditOutcome
from .attestation import ReadAttestation as ReadAttestation
from .attestation import attestation_bytes as attestation_bytes
from .attestation import installed_files_digest as installed_files_digest
from .attestation import read_attestation as read_attestation
from .attestation import verify_attested_bundle as verify_attested_bundle
from .attestation import verify_attested_policy as verify_attested_policy
from .attestation import verify_attested_results as verify_attested_results
from .attestation import verify_attested_table as verify_attested_table
from .attestation import verify_attested_toolkit as verify_attested_toolkit
from .attestation import write_attestation as write_attestation
from .canonical import CanonicalJSONError as CanonicalJSONError
from .canonical import canonical_json as canonical_json
from .croissant import CROISSANT_CONFORMS_TO as CROISSANT_CONFORMS_TO
from .croissant import CROISSANT_CONTEXT as CROISSANT_CONTEXT
from .croissant import card_bytes as card_bytes
from .croissant import card_disagreements as card_disagreements
from .croissant import croissant_card as croissant_card
from .croissant import table_card as table_card
from .croissant import write_table_card as write_table_card
from .derivation import (
    SEED_BYTES as SEED_BYTES,
)
from .derivation import (
    SEPARATOR as SEPARATOR,
)
from .derivation import (
    derived_digest as derived_digest,
)
from .derivation import (
    derived_id as derived_id,
)
from .derivation import (
    derived_rng as derived_rng,
)
from .derivation import (
    derived_seed as derived_seed,
)
from .derivation import (
    joined as joined,
)
from .digests import (
    CHUNK_SIZE as CHUNK_SIZE,
)
from .digests import (
    RACY_SECONDS as RACY_SECONDS,
)
from .digests import (
    Digest as Digest,
)
from .digests import (
    DigestIndex as DigestIndex,
)
from .digests import (
    bytes_digest as bytes_digest,
)
from .digests import (
    digest_index as digest_index,
)
from .digests import (
    file_digest as file_digest,
)
from .digests import (
    file_digests as file_digests,
)
from .digests import (
    path_digest as path_digest,
)
from .digests import (
    tree_digest as tree_digest,
)
from .digests import (
    tree_listing as tree_listing,
)
from .dsse import (
    IN_TOTO_PAYLOAD_TYPE as IN_TOTO_PAYLOAD_TYPE,
)
from .dsse import (
    MAX_SIGNATURES as MAX_SIGNATURES,
)
from .dsse import (
    Envelope as Envelope,
)
from .dsse import (
    EnvelopeError as EnvelopeError,
)
from .dsse import (
    pae as pae,
)
from .dsse import (
    parse_envelope as parse_envelope,
)
from .dsse import (
    sign_envelope as sign_envelope,
)
from .dsse import (
    verify_envelope as verify_envelope,
)
from .environment import (
    IMAGE_DIGEST_PATTERN as IMAGE_DIGEST_PATTERN,
)
from .environment import (
    NVIDIA_DRIVER_FILE as NVIDIA_DRIVER_FILE,
)
from .environment import (
    THREAD_ENV_VARS as THREAD_ENV_VARS,
)
from .environment import (
    capture_environment as capture_environment,
)
from .environment import (
    check_image_digest as check_image_digest,
)
from .environment import (
    installed_version as installed_version,
)
from .keys import (
    BUNDLE_MARKERS as BUNDLE_MARKERS,
)
from .keys import (
    ReviewerKey as ReviewerKey,
)
from .keys import (
    enclosing_bundle as enclosing_bundle,
)
from .keys import (
    generate_keypair as generate_keypair,
)
from .keys import (
    key_id as key_id,
)
from .keys import (
    load_private_key as load_private_key,
)
from .keys import (
    load_public_key as load_public_key,
)
from .keys import (
    public_key_pem as public_key_pem,
)
from .manifest import (
    PROVENANCE_COLUMNS as PROVENANCE_COLUMNS,
)
from .manifest import (
    UNSIGNED_NOTICE as UNSIGNED_NOTICE,
)
from .manifest import (
    ManifestResult as ManifestResult,
)
from .manifest import (
    build_run_statement as build_run_statement,
)
from .manifest import (
    bundle_files as bundle_files,
)
from .manifest import (
    read_json_object as read_json_object,
)
from .manifest import (
    run_statement as run_statement,
)
from .manifest import (
    write_manifest as write_manifest,
)
from .manifest import (
    write_statement as write_statement,
)
from .reading import MAX_DOCUMENT_BYTES as MAX_DOCUMENT_BYTES
from .reading import checked_path as checked_path
from .reading import open_regular_file as open_regular_file
from .reading import read_regular_file as read_regular_file
from .statement import (
    BUILD_TYPE as BUILD_TYPE,
)
from .statement import (
    BUILDER_ID as BUILDER_ID,
)
from .statement import (
    CHECKPOINT_PREFIX as CHECKPOINT_PREFIX,
)
from .statement import (
    PREDICATE_TYPE as PREDICATE_TYPE,
)
from .statement import (
    RECORD_PREFIX as RECORD_PREFIX,
)
from .statement import (
    STATEMENT_TYPE as STATEMENT_TYPE,
)
from .statement import (
    PredicateShapeError as PredicateShapeError,
)
from .statement import (
    RecordBinding as RecordBinding,
)
from .statement import (
    build_predicate as build_predicate,
)
from .statement import (
    build_statement as build_statement,
)
from .statement import (
    read_bindings as read_bindings,
)
from .statement import (
    read_checkpoints as read_checkpoints,
)
from .statement import (
    subject as subject,
)
from .writer import STRAY_NAMES_SHOWN as STRAY_NAMES_SHOWN
from .writer import BundleWriter as BundleWriter
