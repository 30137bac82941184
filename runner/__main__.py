"""``python -m runner``: the ``interbias`` command line, for an environment whose scripts folder is not on PATH."""

from runner.cli import app

app(prog_name="interbias")
