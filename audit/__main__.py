"""``python -m audit``: the ``audit`` command line, for an environment whose scripts folder is not on PATH."""

from audit.cli import app

app(prog_name="audit")
