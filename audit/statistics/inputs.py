"""The inputs of each statistic, gathered from a verified bundle: its records' scores and trial lists, as
``audit.bundle.verify_bundle`` loaded them from verified bytes, shaped into each statistic's input (contrasts,
subgroup settings, the fixed-threshold analysis, spoof cells, rankings, DET bands, speakers under stress).

Apart from ``audit.statistics.bundle``, the straight line that runs the statistics: what a statistic reads of the
bundle is here, what it computes is in its own module, which never sees a bundle.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any

import numpy as np
import pandas as pd

from audit.bundle import EER_KEYS, VerifiedBundle
from audit.metrics import SpoofingSet, is_reference, spoofing_sets_of_rows
from audit.statistics.contrasts import ContrastInput
from audit.statistics.rankings import RankingInput
from audit.statistics.records import ScoredRecord
from audit.statistics.spoofing import SpoofingInput
from audit.statistics.subgroups import FixedThresholdInput, SubgroupInput
from audit.table import TERMS, Contrast
from schemas import cell_text, row_dicts


class BundleScores:
    """Score arrays and trial lists of a verified bundle (loaded once, from verified bytes)."""

    def __init__(self, bundle: VerifiedBundle) -> None:
        self.files = bundle.files
        self.trial_list = bundle.trial_list_of
        self.rescored = bundle.rescored
        self._columns: dict[str, dict[str, np.ndarray]] = {}

    def scores(self, record_id: str) -> np.ndarray:
        return self.files.scores[record_id].scores

    def trials(self, record_id: str) -> pd.DataFrame:
        return self.files.trial_lists[self.trial_list[record_id]]

    def columns(self, record_id: str) -> dict[str, np.ndarray]:
        """The record's trial list as arrays (label as int, speakers as str), made once per list: every contrast
        on the list then hands the statistics the same arrays, whose speaker codes are computed once."""
        list_id = self.trial_list[record_id]
        if list_id not in self._columns:
            frame = self.files.trial_lists[list_id]
            self._columns[list_id] = {
                "label": frame["label"].astype(int).to_numpy(),
                "enrol_speaker": frame["enrol_speaker"].astype(str).to_numpy(),
                "test_speaker": frame["test_speaker"].astype(str).to_numpy(),
                **({"test_utt": frame["test_utt"].astype(str).to_numpy()} if "test_utt" in frame else {}),
            }
        return self._columns[list_id]


def family_of(contrast: Contrast) -> str:
    """``E14/speaker``; a complement contrast (a stratum against the population it does not overlap) is a family
    of its own, ``E13/speaker (complement reference)``, never pooled with the overlapping reference's."""
    family = f"{contrast.experiment}/{contrast.model_family or 'unknown family'}"
    return f"{family} (complement reference)" if contrast.reference else family


def contrast_input(
    contrast: Contrast, scores: BundleScores, held_out_levels: set[str], near_chance_eer: float, eer_method: str
) -> ContrastInput:
    """The four terms' scores and trials; terms on different trial lists make a population contrast. A term's
    point EER comes from the re-scoring of its record's verified scores where that ran."""
    records = contrast.records
    columns = {term: scores.columns(record) for term, record in zip(TERMS, records, strict=True)}
    point_column = EER_KEYS[eer_method]  # statistics_eer_method names a known method
    shared = len({scores.trial_list[r] for r in records}) == 1

    def column(name: str) -> Any:
        per_term = {term: arrays[name] for term, arrays in columns.items()}
        return per_term["clean"] if shared else per_term

    return ContrastInput(
        key={
            "experiment": contrast.experiment,
            "model": contrast.model,
            "corpus": contrast.corpus,
            "subgroup": contrast.subgroup or "",
            "level_a": contrast.level_a,
            "level_b": contrast.level_b,
            **({"reference": contrast.reference} if contrast.reference else {}),
        },
        family=family_of(contrast),
        scores={term: scores.scores(record) for term, record in zip(TERMS, records, strict=True)},
        labels=column("label"),
        clusters=column("enrol_speaker"),
        test_speakers=column("test_speaker"),
        held_out=bool({contrast.level_a, contrast.level_b} & held_out_levels),
        model=contrast.model,
        records=dict(zip(TERMS, records, strict=True)),
        caveats=contrast.caveats(near_chance_eer),
        point_eers={
            term: scores.rescored[record][point_column]
            for term, record in zip(TERMS, records, strict=True)
            if point_column in scores.rescored.get(record, {})
        },
    )


def subgroup_settings(results: pd.DataFrame, scores: BundleScores) -> list[tuple[dict[str, str], pd.DataFrame]]:
    """Per (experiment, model, condition) with two or more subgroup records: their trials pooled, each labelled
    with its record's subgroup."""
    groups: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    with_subgroup = results[results["subgroup"].notna()] if "subgroup" in results else results.iloc[0:0]
    for row in with_subgroup.itertuples():
        groups[(str(row.experiment), str(row.model), str(row.condition))].append(str(row.record_id))
    first = results.drop_duplicates("record_id")  # a record's subgroup: that of its first row
    subgroup_of = dict(zip(first["record_id"].astype(str), first["subgroup"], strict=True))
    settings = []
    for (experiment, model, condition), records in sorted(groups.items()):
        if len(records) < 2:
            continue
        frames = []
        for record in sorted(records):
            trials = scores.trials(record)
            frames.append(trials.assign(score=scores.scores(record), subgroup=str(subgroup_of[record])))
        key = {"experiment": experiment, "model": model, "condition": condition}
        settings.append((key, pd.concat(frames, ignore_index=True)))
    return settings


def subgroup_inputs(settings: list[tuple[dict[str, str], pd.DataFrame]]) -> list[SubgroupInput]:
    """Each pooled subgroup setting as the arrays its gaps are computed from."""
    return [
        SubgroupInput(
            key=key,
            scores=pooled["score"].to_numpy(float),
            labels=pooled["label"].astype(int).to_numpy(),
            enrol_speaker=pooled["enrol_speaker"].to_numpy(),
            test_speaker=pooled["test_speaker"].to_numpy(),
            subgroups=pooled["subgroup"].to_numpy(),
        )
        for key, pooled in settings
    ]


def fixed_threshold_inputs(settings: list[SubgroupInput], dev_speakers: list[str]) -> list[FixedThresholdInput]:
    """One input per subgroup setting, scored at one threshold chosen on the development speakers."""
    return [
        FixedThresholdInput(**{f.name: getattr(setting, f.name) for f in fields(setting)}, dev_speakers=dev_speakers)
        for setting in settings
    ]


def spoofing_inputs(rows: list[dict[str, Any]], scores: BundleScores) -> list[SpoofingInput]:
    """The spoof cells whose evaluation sets can be formed and name their trials' speakers (the others have no
    metric, which the beyond-EER step says)."""
    sets = spoofing_sets_of_rows(
        rows, scores.trials, scores.scores, lambda record_id: scores.files.scores[record_id].cm_scores
    )
    by_id = {str(row["record_id"]): row for row in rows}
    return [
        SpoofingInput(
            {
                name: cell_text(by_id[record_id].get(name)) or ""
                for name in ("experiment", "model", "condition", "subgroup")
            }
            | {"record_id": record_id},
            evaluated,
        )
        for record_id, evaluated in sets.items()
        if isinstance(evaluated, SpoofingSet) and evaluated.enrol_speaker is not None and evaluated.kinds.size
    ]


MAX_BAND_PANELS = 9  # encoders (panels) of a subgroup DET figure


def band_inputs(
    det_curves: Sequence[Mapping[str, Any]], rows: list[dict[str, Any]], scores: BundleScores
) -> list[ScoredRecord]:
    """The DET curves that get bands: every DET curve of the report's figures (``audit.bundle.curves``: per drawn
    experiment a panel per condition family at its hardest condition, a curve per encoder), and per experiment with
    subgroup records a figure of its own, a panel per encoder (at most ``MAX_BAND_PANELS``), a curve per subgroup at
    the clean condition and at the experiment's hardest for its subgroups (highest mean EER over their records)."""
    keys: list[dict[str, str]] = [
        {name: str(curve.get(name) or "") for name in ("figure", "panel", "series", "record_id")}
        for curve in det_curves
        if "det" in (curve.get("figures") or ())
    ]
    with_subgroup: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if cell_text(row.get("subgroup")) and not cell_text(row.get("complement_of")):
            with_subgroup[str(row["experiment"])].append(row)
    for experiment, members in sorted(with_subgroup.items()):
        eers: dict[str, list[float]] = defaultdict(list)
        for row in members:
            eer = row.get("eer")
            if not is_reference(row) and isinstance(eer, float | int) and np.isfinite(eer):
                eers[str(row["condition"])].append(float(eer))
        hardest = max(sorted(eers), key=lambda condition: float(np.mean(eers[condition]))) if eers else None
        models = sorted({str(row["model"]) for row in members})[:MAX_BAND_PANELS]
        seen = set()
        for row in sorted(members, key=lambda row: str(row["record_id"])):
            style = "clean" if is_reference(row) else str(row["condition"])
            place = (str(row["model"]), str(row["subgroup"]), style)
            if place[0] in models and (style == "clean" or style == hardest) and place not in seen:
                seen.add(place)
                keys.append(
                    {"figure": f"{experiment} subgroups", "panel": place[0], "series": place[1], "style": style,
                     "record_id": str(row["record_id"])}
                )  # fmt: skip
    inputs = []
    for key in keys:
        record = key["record_id"]
        if record in scores.files.scores and record in scores.trial_list:
            columns = scores.columns(record)
            inputs.append(
                ScoredRecord(
                    key, scores.scores(record), columns["label"] == 1, columns["enrol_speaker"], columns["test_speaker"]
                )
            )
    return inputs


RANKING_KEY = ("experiment", "corpus", "condition", "enrol_condition", "test_condition", "subgroup")


def ranking_inputs(rows: list[dict[str, Any]], scores: BundleScores) -> tuple[list[RankingInput], list[str]]:
    """One setting per experiment, corpus, condition (enrolment and test condition) and subgroup: its encoders'
    records on one trial list (a setting whose encoders used several lists is split by list, each named); and the
    records left out, a second record of one encoder in one setting (the pairs compare encoders, not records)."""
    settings: dict[tuple[tuple[str, str], ...], dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    left_out = []
    for row in rows:
        record = str(row["record_id"])
        key = tuple((name, cell_text(row.get(name)) or "") for name in RANKING_KEY)
        if settings[key][scores.trial_list[record]].setdefault(str(row["model"]), record) != record:
            left_out.append(record)
    inputs = []
    for key, lists in sorted(settings.items()):
        for list_id, records in sorted(lists.items()):
            columns = scores.columns(next(iter(records.values())))
            named = {name: value for name, value in key if value} | ({"trial_list": list_id} if len(lists) > 1 else {})
            inputs.append(
                RankingInput(
                    key=named,
                    scores={model: scores.scores(record) for model, record in records.items()},
                    labels=columns["label"],
                    enrol_speaker=columns["enrol_speaker"],
                    test_speaker=columns["test_speaker"],
                    records=records,
                )
            )
    return inputs, left_out


def scored_rows(results: pd.DataFrame, scores: BundleScores) -> list[dict[str, Any]]:
    """The results rows whose verified scores and trial list the statistics have."""
    rows = row_dicts(results)
    return [
        row
        for row in rows
        if str(row["record_id"]) in scores.files.scores and str(row["record_id"]) in scores.trial_list
    ]


def menagerie_inputs(
    contrasts: Sequence[Contrast], scores: BundleScores
) -> list[tuple[ScoredRecord, list[ScoredRecord]]]:
    """Per clean reference record of a contrast without subgroup (sorted), its record and those of the compound
    cells (both factors on: each contrast's ``ab`` term) it is the reference of, each once."""
    compound: dict[str, dict[str, Contrast]] = defaultdict(dict)
    for contrast in contrasts:
        clean, *_, both = contrast.records
        if not contrast.subgroup and not contrast.reference:
            compound[clean].setdefault(both, contrast)

    def record(record_id: str, contrast: Contrast, condition: str) -> ScoredRecord:
        columns = scores.columns(record_id)
        key = {"experiment": contrast.experiment, "model": contrast.model, "corpus": contrast.corpus,
               "condition": condition, "record_id": record_id}  # fmt: skip
        labels = columns["label"] == 1
        return ScoredRecord(
            key,
            scores.scores(record_id),
            labels,
            columns["enrol_speaker"],
            columns["test_speaker"],
            columns.get("test_utt"),
        )

    pairs = []
    for clean, cells in sorted(compound.items()):
        if clean not in scores.files.scores or clean not in scores.trial_list:
            continue
        first = next(iter(cells.values()))
        stressed = [
            record(both, contrast, f"{contrast.level_a} x {contrast.level_b}")
            for both, contrast in sorted(cells.items())
            if both in scores.files.scores and both in scores.trial_list
        ]
        pairs.append((record(clean, first, "clean"), stressed))
    return pairs
