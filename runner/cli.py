"""The ``interbias`` entry point (``python -m runner.cli``): the command line of ``runner._cli``."""

from __future__ import annotations

from runner._cli import app
from runner._cli.options import runner_failure_line as failure_line

__all__ = ["app", "failure_line"]

if __name__ == "__main__":
    app()
