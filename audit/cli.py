"""The ``audit`` entry point (``python -m audit.cli``): the command line of ``audit._cli``."""

from __future__ import annotations

from audit._cli import app
from audit._cli.verify import audit_results, check_options

__all__ = ["app", "audit_results", "check_options"]

if __name__ == "__main__":
    app()
