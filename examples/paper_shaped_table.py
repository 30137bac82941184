"""Write a results table the way papers print one, from a bundle's signed ``results.csv``.

Experiment, Model, Condition, Subgroup and EER to three decimals: no record_id, no provenance columns, no counts.
``audit verify`` binds such a table to the bundle by its natural key (``examples/paper_columns.toml`` renames the
headers)::

    python examples/paper_shaped_table.py out/default/results.csv > paper-table.csv
    audit verify paper-table.csv --columns examples/paper_columns.toml --bundle out/default \\
        --key out/default.keys/run.pub
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd


def paper_table(results: Path) -> pd.DataFrame:
    """The printed columns of ``results``, EER (the row's own method) to three decimals."""
    signed = pd.read_csv(results, dtype=str, keep_default_na=False)
    return pd.DataFrame(
        {
            "Experiment": signed["experiment"],
            "Model": signed["model"],
            "Condition": signed["condition"],
            "Subgroup": signed.get("subgroup", ""),
            "EER": signed["eer"].astype(float).map(lambda value: f"{value:.3f}"),
        }
    )


if __name__ == "__main__":
    paper_table(Path(sys.argv[1])).to_csv(sys.stdout, index=False, lineterminator="\n")
