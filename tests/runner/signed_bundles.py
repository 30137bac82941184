"""A signed run bundle as the end-to-end run tests read and tamper with it: a record's trial list and scores, the
audit's verdict on it, and the bundle re-signed with the run's own key after an edit (so that only the edited value,
not the signature, can fail)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
from typer.testing import CliRunner

from provenance import card_bytes
from provenance.manifest import write_manifest


def record(out: Path, record_id: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The record's trial list and its score file."""
    results = pd.read_csv(out / "results.csv").set_index("record_id")
    trials = pd.read_csv(out / "trials" / f"{results.loc[record_id, 'trial_list_id']}.csv")
    return trials, pd.read_parquet(out / "scores" / f"{record_id}.parquet")


def verify(out: Path, key: Path) -> tuple[int, dict[str, Any]]:
    """``audit verify --bundle --json`` of the bundle under ``key``: its exit code and report (never a traceback)."""
    from audit.cli import app

    result = CliRunner().invoke(app, ["verify", str(out / "results.csv"), "--bundle", str(out), "--key", str(key),
                                      "--json"])  # fmt: skip
    assert "Traceback" not in result.stdout + result.stderr
    return result.exit_code, json.loads(result.stdout)


def resign(folder: Path, private_key: Path) -> Path:
    """The bundle at ``folder`` signed again over its files as they now are (its Croissant card's digests brought up
    to date first, as an author who re-signs would), with the run configuration its statement recorded."""
    card_path = folder / "croissant.json"
    if card_path.exists():
        card = json.loads(card_path.read_text())
        for entry in (entry for entry in card["distribution"] if "sha256" in entry):
            entry["sha256"] = hashlib.sha256((folder / entry["contentUrl"]).read_bytes()).hexdigest()
        card_path.write_bytes(card_bytes(card))
    statement = json.loads((folder / "provenance" / "statement.json").read_text())
    run_config = statement["predicate"]["buildDefinition"]["externalParameters"]["runConfig"]
    shutil.rmtree(folder / "provenance")
    write_manifest(folder, run_config, private_key)
    return folder
