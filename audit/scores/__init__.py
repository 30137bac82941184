"""A reviewer's own trial list and score file: the readers (``trial_lists``, ``files``) and the ``audit scores``
line that joins and scores them (``scoring``, over ``joining``, ``speakers``, ``groups`` and ``sections``); with
several score files or one with a model column (``models``), paired encoder comparisons (``comparison``); with
durations, the trial-design audit (``design``).
"""

from audit.scores.comparison import model_column_file
from audit.scores.design import with_design_audit
from audit.scores.files import SCORE_FORMATS, read_score_file
from audit.scores.models import read_model_scores
from audit.scores.scoring import ScoringConfig, audit_scores, join, speakers_of
from audit.scores.trial_lists import TrialListError, read_kaldi_trials, read_trial_list, read_voxceleb_trials

__all__ = [
    "SCORE_FORMATS",
    "ScoringConfig",
    "TrialListError",
    "audit_scores",
    "join",
    "model_column_file",
    "read_kaldi_trials",
    "read_model_scores",
    "read_score_file",
    "read_trial_list",
    "read_voxceleb_trials",
    "speakers_of",
    "with_design_audit",
]
