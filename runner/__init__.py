"""The runner: frozen speaker encoders scored on degraded speech, written as an artefact bundle under a signed
manifest.

It stands in wings, each a package with its face, bottom to top: ``runner.encoders``, ``runner.operators``,
``runner.corpora`` (the inputs), ``runner.design`` (what a run declares), ``runner.plan`` (what it will do, sized),
``runner.scoring`` and ``runner.execution`` (how trials become rows, where embeddings are computed); on them the
run's loop (``pipeline``, ``reproduce``, ``rehearsal``) and the command line (``runner._cli``), on the ground the
embedding cache, the stage log and the container launcher. This face lends the entry points
(``run(load_config(path), out, RunOptions(...))``, ``reproduce``, ``plan_run``, ``estimate_plan``), each loaded on
first use: importing it imports no torch.
"""

from schemas import lazy_face

__getattr__, __dir__, __all__ = lazy_face(__name__, __file__)
