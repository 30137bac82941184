"""A spoof cell's companion (the genuine cell e->e of its experiment, model, corpus and subgroup), by hand."""

from __future__ import annotations

from audit.metrics.record_spoofing import companions_of


def _row(record_id: str, enrol: str, test: str, model: str = "m", subgroup: object = None) -> dict[str, object]:
    return {"record_id": record_id, "experiment": "E", "model": model, "corpus": "c", "subgroup": subgroup,
            "enrol_condition": enrol, "test_condition": test}  # fmt: skip


def test_each_spoof_cell_finds_its_one_genuine_cell() -> None:
    """s1 (enrolled clean) has one companion, g1 (clean->clean): not g2 (noisy->noisy), nor the other model's g3, nor
    the noisy-enrolled cross cell x; s2 (enrolled noisy) has g2; s3's key has two genuine cells (g4, g5): none; a
    subgroup given as NaN is the absent subgroup; a genuine cell is not its own companion, and any cell's look-up
    goes by its enrolment condition (x, noisy->clean: g2)."""
    rows = [
        _row("g1", "clean", "clean", subgroup=float("nan")), _row("g2", "noisy", "noisy"),
        _row("g3", "clean", "clean", model="n"), _row("x", "noisy", "clean"), _row("s1", "clean", "spoof"),
        _row("s2", "noisy", "spoof"), _row("g4", "clean", "clean", subgroup="f"),
        _row("g5", "clean", "clean", subgroup="f"), _row("s3", "clean", "spoof", subgroup="f"),
    ]  # fmt: skip
    companion = companions_of(rows)
    found = {str(row["record_id"]): companion(position) for position, row in enumerate(rows)}
    assert found == {"g1": None, "g2": None, "g3": None, "x": "g2", "s1": "g1", "s2": "g2", "g4": "g5", "g5": "g4",
                     "s3": None}  # fmt: skip
