"""The names the runner face lends, each from its home module (read by schemas.faces and by type checkers)."""

from .design import ExperimentDesign as ExperimentDesign
from .design import RunConfig as RunConfig
from .design import load_config as load_config
from .pipeline import RunOptions as RunOptions
from .pipeline import RunSummary as RunSummary
from .pipeline import run as run
from .plan import PlanEstimate as PlanEstimate
from .plan import RecordPlan as RecordPlan
from .plan import estimate_plan as estimate_plan
from .plan import plan_run as plan_run
from .rehearsal import rehearse as rehearse
from .reproduce import reproduce as reproduce
