"""The environment a benchmark's child processes run in: the way an installed toolkit runs, its bytecode cached.

Some machines set ``PYTHONDONTWRITEBYTECODE=1`` (this project's sandbox does), so every run would compile the toolkit's
own modules again (about 0.1 s CPU of an audit). A reviewer's install has its bytecode compiled by pip and an editable
one writes it on its first import: the child processes run without the variable, so the first run writes the bytecode
and the others read it, as a reviewer's runs do.
"""

from __future__ import annotations

import os


def installed_env(**extra: str) -> dict[str, str]:
    """This process's environment without ``PYTHONDONTWRITEBYTECODE``, with ``extra`` set."""
    return {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"} | extra
