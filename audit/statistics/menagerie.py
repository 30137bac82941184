"""Speakers under stress (issue 41): per speaker and record its target-score mean and its false-accept shares, and
Doddington's menagerie by a rule fixed on the clean reference, so that a speaker who changes category under a
condition is one the condition moved, not one a new cut re-labelled.

- **Per speaker** (``speaker_table``): the mean of its target scores (as enrolment speaker), and its false-accept
  share as enrolment side and as test side: of its non-target trials on that side, the share accepted at the clean
  reference's EER threshold (accept ``score >= threshold``; one threshold for every condition, as a deployment
  keeps it).
- **Rule** (``menagerie``): on the clean reference record, the ``quantiles`` (``[analysis] menagerie_quantiles``,
  default ``QUANTILES``) of the speakers' target means and false-accept shares; a speaker of any record is a *goat*
  when its target mean lies below the low quantile of the reference's target means, a *lamb* when its false-accept
  share as enrolment side lies above the high quantile of the reference's (and above 0), a *wolf* likewise as test
  side, a *sheep* when none of these; a speaker may be goat, lamb and wolf at once (``goat+lamb``). A speaker
  without trials of a kind is not judged on it.
- **Changes**: per stressed record (the bundle path: each clean reference's compound cells, both factors on), the
  speakers whose categories differ from the reference's, judged on the measures both records have for the speaker
  (a measure missing on one side is no change). Point values only: no intervals, no figure yet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from audit.statistics.draws import StatisticsInputError

QUANTILES = (0.1, 0.9)  # goats below the reference's 10 % quantile of target means; lambs, wolves above its 90 %
SHEEP = "sheep"
KINDS = ("goat", "lamb", "wolf", SHEEP)
MEASURES = {"goat": "target_mean", "lamb": "fa_enrol", "wolf": "fa_test"}  # each category's measure


@dataclass(frozen=True)
class SpeakerRecord:
    """One record's scored trials (``key``: its experiment, encoder, condition, record)."""

    key: Mapping[str, str]
    scores: NDArray[np.float64]
    labels: NDArray[np.bool_]
    enrol_speaker: NDArray[Any]
    test_speaker: NDArray[Any]

    def scored(self) -> SpeakerRecord:
        kept = np.isfinite(self.scores)
        return SpeakerRecord(
            self.key,
            self.scores[kept],
            np.asarray(self.labels, bool)[kept],
            np.asarray(self.enrol_speaker).astype(str)[kept],
            np.asarray(self.test_speaker).astype(str)[kept],
        )


def eer_threshold(scores: NDArray[np.float64], labels: NDArray[np.bool_]) -> float:
    """The lowest score threshold (accept ``>=``) at which the false-reject rate reaches the false-accept rate.

    >>> eer_threshold(np.array([0.9, 0.8, 0.7, 0.3, 0.2, 0.1]), np.array([1, 1, 0, 1, 0, 0], bool))
    0.7
    """
    if not labels.any() or labels.all():
        raise StatisticsInputError("an EER threshold needs target and non-target trials")
    candidates = np.unique(scores)
    n_target, n_nontarget = int(labels.sum()), int((~labels).sum())
    rejected = np.searchsorted(np.sort(scores[labels]), candidates, side="left")  # targets below each
    accepted = n_nontarget - np.searchsorted(np.sort(scores[~labels]), candidates, side="left")  # at or above
    return float(candidates[np.argmax(rejected * n_nontarget >= accepted * n_target)])  # in counts: no rounding


def speaker_table(record: SpeakerRecord, threshold: float) -> dict[str, dict[str, Any]]:
    """Per speaker: its target-score mean and target count, and its false-accept share and non-target count as
    enrolment side (``fa_enrol``) and as test side (``fa_test``) at ``threshold``; None where it has no such trial."""
    accepted = record.scores >= threshold
    table: dict[str, dict[str, Any]] = {}
    for speaker in sorted(set(record.enrol_speaker.tolist()) | set(record.test_speaker.tolist())):
        own_targets = record.labels & (record.enrol_speaker == speaker)
        enrolled = ~record.labels & (record.enrol_speaker == speaker)
        tested = ~record.labels & (record.test_speaker == speaker)
        table[speaker] = {
            "target_mean": float(record.scores[own_targets].mean()) if own_targets.any() else None,
            "n_target": int(own_targets.sum()),
            "fa_enrol": float(accepted[enrolled].mean()) if enrolled.any() else None,
            "n_nontarget_enrol": int(enrolled.sum()),
            "fa_test": float(accepted[tested].mean()) if tested.any() else None,
            "n_nontarget_test": int(tested.sum()),
        }
    return table


def _cuts(table: Mapping[str, Mapping[str, Any]], quantiles: tuple[float, float]) -> dict[str, float | None]:
    """The reference's cuts: the low quantile of its speakers' target means, the high one of each false-accept
    share (None where no speaker has a value)."""

    def quantile(name: str, level: float) -> float | None:
        values = [row[name] for row in table.values() if row[name] is not None]
        return float(np.quantile(values, level)) if values else None

    low, high = quantiles
    return {"goat": quantile("target_mean", low), "lamb": quantile("fa_enrol", high), "wolf": quantile("fa_test", high)}


def category(row: Mapping[str, Any], cuts: Mapping[str, float | None], judged: Mapping[str, Any] | None = None) -> str:
    """A speaker's categories under the reference's cuts, joined by ``+``; ``sheep`` when none; with ``judged`` (a
    second row of the speaker), only on the measures both rows have (a change is then never a missing measure).

    >>> category({"target_mean": 0.2, "fa_enrol": 0.5, "fa_test": 0.0}, {"goat": 0.3, "lamb": 0.1, "wolf": 0.1})
    'goat+lamb'
    """
    found = []
    for name, measure in MEASURES.items():
        value, cut = row[measure], cuts[name]
        if value is None or cut is None or (judged is not None and judged[measure] is None):
            continue
        if (value < cut) if name == "goat" else (value > max(cut, 0.0)):
            found.append(name)
    return "+".join(found) or SHEEP


def menagerie(
    reference: SpeakerRecord, stressed: Sequence[SpeakerRecord], quantiles: tuple[float, float] = QUANTILES
) -> dict[str, Any]:
    """The reference's threshold and cuts, every record's speakers with their categories, and per stressed record
    the speakers whose categories differ from the reference's (``changes``)."""
    clean = reference.scored()
    threshold = eer_threshold(clean.scores, clean.labels)
    reference_table = speaker_table(clean, threshold)
    cuts = _cuts(reference_table, quantiles)
    reference_categories = {speaker: category(row, cuts) for speaker, row in reference_table.items()}
    records = []
    for record in stressed:
        table = speaker_table(record.scored(), threshold)
        categories = {speaker: category(row, cuts) for speaker, row in table.items()}
        changes = []
        for speaker in sorted(set(table) & set(reference_table)):
            before = category(reference_table[speaker], cuts, table[speaker])
            after = category(table[speaker], cuts, reference_table[speaker])
            if before != after:
                changes.append({"speaker": speaker, "clean": before, "stressed": after})
        records.append({"key": dict(record.key), "speakers": table, "categories": categories, "changes": changes})
    return {
        "key": dict(reference.key),
        "threshold": threshold,
        "quantiles": list(quantiles),
        "cuts": cuts,
        "speakers": reference_table,
        "categories": reference_categories,
        "stressed": records,
    }


MAX_CHANGES = 50  # rows of the report's table of changes (report.json keeps every one): the body stays short
MAX_COUNTS = 12  # compound cells whose category counts the section's line gives


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def menagerie_section(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The report's speakers under stress: the rule, the category counts and the table of speakers who change
    category between each clean reference and its compound cells."""
    table, counts, skipped = [], [], []
    for result in results:
        if "skipped" in result:
            skipped.append(f"{result['key'].get('record_id')}: {result['skipped']}")
            continue
        reference = result["speakers"]
        for stressed in result["stressed"]:
            key = stressed["key"]
            tally = {name: sum(name in c.split("+") for c in stressed["categories"].values()) for name in KINDS}
            counts.append(f"{key['experiment']}/{key['model']} {key['condition']}: " + ", ".join(
                f"{tally[name]} {name}" for name in KINDS) + f", {len(stressed['changes'])} changed")  # fmt: skip
            for change in stressed["changes"]:
                speaker, after = change["speaker"], stressed["speakers"][change["speaker"]]
                before = reference[speaker]
                table.append(
                    {
                        "experiment": key["experiment"], "model": key["model"], "condition": key["condition"],
                        "speaker": speaker, "clean": change["clean"], "stressed": change["stressed"],
                        "target mean": f"{_share(before['target_mean'])} -> {_share(after['target_mean'])}",
                        "FA share as enrolment": f"{_share(before['fa_enrol'])} -> {_share(after['fa_enrol'])}",
                        "FA share as test": f"{_share(before['fa_test'])} -> {_share(after['fa_test'])}",
                    }
                )  # fmt: skip
    low, high = next((tuple(r["quantiles"]) for r in results if "quantiles" in r), QUANTILES)
    lines = [
        "Doddington's menagerie per speaker, by a rule fixed on each clean reference record (enrolment and test clean) "
        "and applied unchanged to its compound cells (both factors on): at the reference's EER threshold (accept "
        "score >= threshold, the same threshold under every condition), a speaker is a goat when its mean target "
        f"score lies below the reference speakers' {low:.0%} quantile of mean target scores, a lamb when the share of "
        "its non-target trials as enrolment side accepted lies above the reference's "
        f"{high:.0%} quantile of those shares (and above 0), a wolf likewise as test side, a sheep when none of these "
        "(a speaker may be several: goat+lamb). Point values only, without intervals: a category is a description of "
        "this run's speakers, not an estimate.",
        *(
            [
                f"Category counts per compound cell: {'; '.join(counts[:MAX_COUNTS])}"
                + (f"; and {len(counts) - MAX_COUNTS} more in report.json." if len(counts) > MAX_COUNTS else ".")
            ]
            if counts
            else []
        ),
        *([f"{len(skipped)} reference(s) without a menagerie: {'; '.join(skipped[:5])}."] if skipped else []),
        *(
            [f"The table shows the first {MAX_CHANGES} of {len(table)} changes; report.json has every one."]
            if len(table) > MAX_CHANGES
            else []
        ),
    ]
    if not table:
        lines.append("No speaker changes category between a clean reference and its compound cells.")
    return {
        "id": "speakers-under-stress",
        "title": "Speakers under stress: who changes category from clean to each compound cell",
        "status": "info",
        "lines": lines,
        "table": table[:MAX_CHANGES],
    }


def menagerie_or_reason(
    reference: SpeakerRecord, stressed: Sequence[SpeakerRecord], quantiles: tuple[float, float] = QUANTILES
) -> dict[str, Any]:
    """``menagerie``, or why the reference gives none (its scored trials lack a class): one reference cannot stop
    the others."""
    try:
        return menagerie(reference, stressed, quantiles)
    except StatisticsInputError as error:
        return {"key": dict(reference.key), "skipped": str(error)}
