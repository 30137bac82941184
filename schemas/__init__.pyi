"""The names the schemas face lends, each from its home module (read by schemas.faces and by type checkers)."""

from .analysis import (
    ANALYSIS_KEYS as ANALYSIS_KEYS,
)
from .analysis import (
    CALIBRATION_METHODS as CALIBRATION_METHODS,
)
from .analysis import (
    CALIBRATION_SPLITS as CALIBRATION_SPLITS,
)
from .analysis import (
    N_RESAMPLES_MAX as N_RESAMPLES_MAX,
)
from .analysis import (
    NORMALISATION_METHODS as NORMALISATION_METHODS,
)
from .analysis import (
    SEED_MAX as SEED_MAX,
)
from .analysis import (
    TOP_N_MAX as TOP_N_MAX,
)
from .analysis import (
    Analysis as Analysis,
)
from .analysis import (
    CalibrationDeclaration as CalibrationDeclaration,
)
from .analysis import (
    NormalisationDeclaration as NormalisationDeclaration,
)
from .analysis import (
    analysis_from_table as analysis_from_table,
)
from .analysis import (
    names_without_referent as names_without_referent,
)
from .analysis import (
    read_analysis as read_analysis,
)
from .bundle import (
    CM_SCORE_COLUMN as CM_SCORE_COLUMN,
)
from .bundle import (
    MAX_NAME_BYTES as MAX_NAME_BYTES,
)
from .bundle import (
    MAX_SEGMENT_BYTES as MAX_SEGMENT_BYTES,
)
from .bundle import (
    SCORE_COLUMNS as SCORE_COLUMNS,
)
from .bundle import (
    SCORE_FILES_AT_ONCE as SCORE_FILES_AT_ONCE,
)
from .bundle import (
    TRIAL_COLUMNS_READ as TRIAL_COLUMNS_READ,
)
from .bundle import (
    TRIAL_LIST_ID_LENGTH as TRIAL_LIST_ID_LENGTH,
)
from .bundle import (
    UTTERANCE_COLUMNS_READ as UTTERANCE_COLUMNS_READ,
)
from .bundle import (
    BundleFileError as BundleFileError,
)
from .bundle import (
    BundleLayout as BundleLayout,
)
from .bundle import (
    RecordScores as RecordScores,
)
from .bundle import (
    corpus_folder_name as corpus_folder_name,
)
from .bundle import (
    csv_file_bytes as csv_file_bytes,
)
from .bundle import (
    is_safe_name as is_safe_name,
)
from .bundle import (
    json_file_bytes as json_file_bytes,
)
from .bundle import (
    parse_checkpoints as parse_checkpoints,
)
from .bundle import (
    parse_environment as parse_environment,
)
from .bundle import (
    parse_json_object as parse_json_object,
)
from .bundle import (
    parse_operators as parse_operators,
)
from .bundle import (
    parse_results as parse_results,
)
from .bundle import (
    parse_score_files as parse_score_files,
)
from .bundle import (
    parse_scores as parse_scores,
)
from .bundle import (
    parse_timings as parse_timings,
)
from .bundle import (
    parse_toml as parse_toml,
)
from .bundle import (
    parse_trial_list as parse_trial_list,
)
from .bundle import (
    parse_utterances as parse_utterances,
)
from .bundle import (
    read_bundle_file as read_bundle_file,
)
from .bundle import (
    read_if_regular as read_if_regular,
)
from .bundle import (
    scores_file_bytes as scores_file_bytes,
)
from .bundle import (
    scores_name as scores_name,
)
from .bundle import (
    trial_list_name as trial_list_name,
)
from .bundle import (
    unsafe_name_reason as unsafe_name_reason,
)
from .command_line import (
    Hook as Hook,
)
from .command_line import (
    announce as announce,
)
from .command_line import (
    debug_callback as debug_callback,
)
from .command_line import (
    one_line_errors as one_line_errors,
)
from .command_line import (
    version_callback as version_callback,
)
from .documents import (
    ChainOutcome as ChainOutcome,
)
from .documents import (
    CheckpointEntry as CheckpointEntry,
)
from .documents import (
    Count as Count,
)
from .documents import (
    DocumentShapeError as DocumentShapeError,
)
from .documents import (
    EncoderOutcome as EncoderOutcome,
)
from .documents import (
    EnvironmentDocument as EnvironmentDocument,
)
from .documents import (
    Git as Git,
)
from .documents import (
    OperatorsDocument as OperatorsDocument,
)
from .documents import (
    RecordOutcome as RecordOutcome,
)
from .documents import (
    Weights as Weights,
)
from .documents import (
    check_checkpoints as check_checkpoints,
)
from .documents import (
    check_shape as check_shape,
)
from .eer_method import EER_METHODS as EER_METHODS
from .eer_method import EerMethod as EerMethod
from .errors import (
    EXIT_FINDING as EXIT_FINDING,
)
from .errors import (
    EXIT_INPUT as EXIT_INPUT,
)
from .errors import (
    EXIT_PASS as EXIT_PASS,
)
from .errors import (
    Error as Error,
)
from .errors import (
    InputError as InputError,
)
from .errors import (
    RunError as RunError,
)
from .errors import (
    failure_line as failure_line,
)
from .faces import lazy_face as lazy_face
from .faces import lent_names as lent_names
from .filenames import ATTESTATION_FILE as ATTESTATION_FILE
from .filenames import CHECKPOINTS_FILE as CHECKPOINTS_FILE
from .filenames import CONFIG_FILE as CONFIG_FILE
from .filenames import CORPUS_DIR as CORPUS_DIR
from .filenames import CROISSANT_FILE as CROISSANT_FILE
from .filenames import ENVELOPE_FILE as ENVELOPE_FILE
from .filenames import ENVIRONMENT_FILE as ENVIRONMENT_FILE
from .filenames import KEY_ID_FILE as KEY_ID_FILE
from .filenames import NOT_SUBJECTS as NOT_SUBJECTS
from .filenames import OPERATORS_FILE as OPERATORS_FILE
from .filenames import POLICY_FILE as POLICY_FILE
from .filenames import PROBLEMS_FILE as PROBLEMS_FILE
from .filenames import PROVENANCE_DIR as PROVENANCE_DIR
from .filenames import PROVENANCE_FILES as PROVENANCE_FILES
from .filenames import PUBLIC_KEY_FILE as PUBLIC_KEY_FILE
from .filenames import REPORT_DIR as REPORT_DIR
from .filenames import REQUIRED_FILES as REQUIRED_FILES
from .filenames import RESULTS_FILE as RESULTS_FILE
from .filenames import RUN_FILE as RUN_FILE
from .filenames import RUN_SPECIFIC_FILES as RUN_SPECIFIC_FILES
from .filenames import SCORES_DIR as SCORES_DIR
from .filenames import STATEMENT_FILE as STATEMENT_FILE
from .filenames import TIMINGS_FILE as TIMINGS_FILE
from .filenames import TRIALS_DIR as TRIALS_DIR
from .filenames import UNSIGNED_FILE as UNSIGNED_FILE
from .filenames import UTTERANCES_FILE as UTTERANCES_FILE
from .flags import (
    FLAGS as FLAGS,
)
from .flags import (
    Flag as Flag,
)
from .flags import (
    FlagKind as FlagKind,
)
from .flags import (
    Severity as Severity,
)
from .flags import (
    cases_of as cases_of,
)
from .flags import (
    describe_case as describe_case,
)
from .flags import (
    flag_kind as flag_kind,
)
from .flags import (
    has_errors as has_errors,
)
from .flags import (
    one_per_id as one_per_id,
)
from .forked import Forked as Forked
from .jsonable import json_safe as json_safe
from .jsonable import keyed_rows as keyed_rows
from .jsonable import keyed_table as keyed_table
from .licences import (
    CORPUS_LICENCES as CORPUS_LICENCES,
)
from .licences import (
    CorpusLicence as CorpusLicence,
)
from .results import (
    CALIBRATED_COLUMNS as CALIBRATED_COLUMNS,
)
from .results import (
    DEFAULT_COSTS as DEFAULT_COSTS,
)
from .results import (
    FLOAT_COLUMNS as FLOAT_COLUMNS,
)
from .results import (
    INT_COLUMNS as INT_COLUMNS,
)
from .results import (
    KNOWN_COLUMNS as KNOWN_COLUMNS,
)
from .results import (
    MODEL_FAMILIES as MODEL_FAMILIES,
)
from .results import (
    NORMALISED_COLUMNS as NORMALISED_COLUMNS,
)
from .results import (
    PAPER_EXPERIMENT_PATTERN as PAPER_EXPERIMENT_PATTERN,
)
from .results import (
    REQUIRED_COLUMNS as REQUIRED_COLUMNS,
)
from .results import (
    SPOOFING_COLUMNS as SPOOFING_COLUMNS,
)
from .results import (
    STRING_COLUMNS as STRING_COLUMNS,
)
from .results import (
    ResultsSchema as ResultsSchema,
)
from .results import (
    SchemaFailure as SchemaFailure,
)
from .results import (
    ValidatedResults as ValidatedResults,
)
from .results import (
    cell_number as cell_number,
)
from .results import (
    cell_text as cell_text,
)
from .results import (
    describe_check as describe_check,
)
from .results import (
    parse_numbers as parse_numbers,
)
from .results import (
    row_costs as row_costs,
)
from .results import (
    row_dicts as row_dicts,
)
from .results import (
    validate_results as validate_results,
)
from .results import (
    with_all_columns as with_all_columns,
)
from .scores import COHORT_COLUMNS as COHORT_COLUMNS
from .scores import SCORE_STATUSES as SCORE_STATUSES
from .scores import ScoresSchema as ScoresSchema
from .toolkit import DISTRIBUTION as DISTRIBUTION
from .toolkit import tool_version as tool_version
from .trials import (
    OPTIONAL_TRIAL_COLUMNS as OPTIONAL_TRIAL_COLUMNS,
)
from .trials import (
    SPEAKER_COUNT_COLUMNS as SPEAKER_COUNT_COLUMNS,
)
from .trials import (
    TEXT_COLUMNS as TEXT_COLUMNS,
)
from .trials import (
    TRIAL_KINDS as TRIAL_KINDS,
)
from .trials import (
    TrialKind as TrialKind,
)
from .trials import (
    TrialsSchema as TrialsSchema,
)
from .trials import (
    plainly_valid as plainly_valid,
)
from .trials import (
    speaker_counts as speaker_counts,
)
from .utterances import (
    OPTIONAL_COLUMNS as OPTIONAL_COLUMNS,
)
from .utterances import (
    RELATIVE_POSIX_PATH as RELATIVE_POSIX_PATH,
)
from .utterances import (
    UTTERANCE_COLUMNS as UTTERANCE_COLUMNS,
)
from .utterances import (
    UTTERANCE_REQUIRED_COLUMNS as UTTERANCE_REQUIRED_COLUMNS,
)
from .utterances import (
    UtteranceSchema as UtteranceSchema,
)
from .wording import (
    MISSING as MISSING,
)
from .wording import (
    RESIDUE as RESIDUE,
)
from .wording import (
    SIGNIFICANT_DIGITS as SIGNIFICANT_DIGITS,
)
from .wording import (
    count as count,
)
from .wording import (
    format_number as format_number,
)
