"""``audit seeds``: the spread of every EER and IE across runs that differ only in their seed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from schemas import one_line_errors

__all__ = ["seeds"]


@one_line_errors()
def seeds(
    results: Annotated[list[Path], typer.Argument(help="results.csv of runs that differ only in their seed")],
    as_json: Annotated[bool, typer.Option("--json", help="print every record's and contrast's spread as JSON")] = False,
) -> None:
    """The spread of every EER and IE across seeds (trial sampling and degradation)."""
    from audit.table import read_seed_tables, seed_spread

    spread = seed_spread(read_seed_tables(results))
    if as_json:
        typer.echo(json.dumps(spread, indent=2, allow_nan=False))
        return
    typer.echo(
        f"{len(spread['seeds'])} seeds ({', '.join(map(str, spread['seeds']))}): {len(spread['eer'])} records, "
        f"largest EER range {spread['largest_eer_range']}; {len(spread['ie'])} contrasts, largest IE range "
        f"{spread['largest_ie_range']}"
    )
