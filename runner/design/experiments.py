"""Experiment designs: the factors, cells and populations of one experiment, as a configuration declares them.

A design is factorial (``factor_a`` x ``factor_b``, the reference level ``none`` implied) or a mismatch design
(enrolment x test conditions). ``ExperimentDesign.cells`` gives every condition of it with what is applied to each
side: operator chains, metadata selections (the utterances a side is drawn from) and spoof sources. The design's
own ``select`` (its population), ``trial_list`` (an official list scored as published) and ``budgets`` (per-cell
trial budgets) are read by ``runner.config`` and used by the planner.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from runner.design.trials import Selection

__all__ = [
    "CLEAN",
    "COMPLEMENT_PREFIX",
    "REFERENCE_LEVEL",
    "Cell",
    "ChainSpecs",
    "ExperimentDesign",
    "Factor",
    "OperatorSpec",
    "SpoofSource",
    "merge_selections",
]

REFERENCE_LEVEL = "none"
CLEAN = "clean"
COMPLEMENT_PREFIX = "other-than-"  # the level of a stratum's complement population: other-than-<stratum>

OperatorSpec = dict[str, Any]
ChainSpecs = tuple[OperatorSpec, ...]  # a condition's operators as declared; runner.operators.Chain is them bound


@dataclass(frozen=True)
class Factor:
    """One factor of a factorial design; ``none`` (the reference level) is implied.

    ``reference`` names a metadata condition (a selection without operators) that the reference level selects,
    for factors whose levels are populations (emotions: the neutral utterances), instead of every utterance.
    """

    name: str
    levels: tuple[str, ...]
    reference: str | None = None


@dataclass(frozen=True)
class SpoofSource:
    """Where a spoof condition's test files come from: a spoof corpus of the run and a selection of its files."""

    corpus: str
    select: Selection = ()


@dataclass(frozen=True)
class Cell:
    """One condition of an experiment: what is applied to the enrolment and to the test side."""

    condition: str
    enrol_condition: str
    test_condition: str
    enrol_chain: ChainSpecs
    test_chain: ChainSpecs
    level_a: str | None = None
    level_b: str | None = None
    enrol_select: Selection = ()
    test_select: Selection = ()
    spoof: SpoofSource | None = None
    complement_of: str | None = None  # the factor A stratum whose complement this cell's population is


@dataclass(frozen=True)
class ExperimentDesign:
    """An experiment: factorial (factor_a x factor_b) or mismatch (enrolment x test conditions)."""

    id: str
    title: str
    corpus: str
    use: str
    target_trials: int
    nontarget_trials: int
    degrade: Literal["test", "both"] = "test"
    factor_a: Factor | None = None
    factor_b: Factor | None = None
    enrol_conditions: tuple[str, ...] = ()
    test_conditions: tuple[str, ...] = ()
    subgroup: str | None = None
    subgroup_side: Literal["both", "enrol"] = "both"
    complement_reference: bool = False
    select: Selection = ()  # the population both sides of every trial are drawn from
    trial_list: str | None = None  # an official list scored as published (runner.corpora.voxceleb1.OFFICIAL_LISTS)
    budgets: tuple[tuple[str, int, int], ...] = ()  # (condition, target, non-target) where they differ

    def budget(self, condition: str) -> tuple[int, int]:
        """The (target, non-target) budget of the cell ``condition``."""
        own = {name: (target, nontarget) for name, target, nontarget in self.budgets}
        return own.get(condition, (self.target_trials, self.nontarget_trials))

    def cells(
        self,
        conditions: dict[str, ChainSpecs],
        selections: Mapping[str, Selection] | None = None,
        spoofs: Mapping[str, SpoofSource] | None = None,
    ) -> list[Cell]:
        """Every condition of the design, the reference first.

        A metadata condition's selection goes with its chain: to the test side, or to both sides when the design
        degrades both; a mismatch design's enrolment and test conditions select their own side. A spoof condition
        applies to the test side only (a ValueError on an enrolment side, and for two in one cell); in a mismatch
        design its genuine targets test the enrolment condition's population, as the cell ``e->e`` does. The
        experiment's own ``select`` (its population) goes to both sides of every cell.
        """
        cells = self._design_cells(conditions, selections or {}, spoofs or {})
        if not self.select:
            return cells
        return [
            replace(
                cell,
                enrol_select=merge_selections([self.select, cell.enrol_select]),
                test_select=merge_selections([self.select, cell.test_select]),
            )
            for cell in cells
        ]

    def _design_cells(
        self, conditions: dict[str, ChainSpecs], chosen: Mapping[str, Selection], spoofing: Mapping[str, SpoofSource]
    ) -> list[Cell]:
        if self.factor_a is None:
            if any(name in spoofing for name in self.enrol_conditions):
                raise ValueError("a spoof condition is a test condition, not an enrolment condition")
            return [
                Cell(
                    f"{e}->{t}",
                    e,
                    t,
                    conditions[e],
                    conditions[t],
                    enrol_select=chosen.get(e, ()),
                    test_select=chosen.get(e if t in spoofing else t, ()),
                    spoof=spoofing.get(t),
                )
                for e in self.enrol_conditions
                for t in self.test_conditions
            ]
        levels_b = (REFERENCE_LEVEL, *self.factor_b.levels) if self.factor_b else (REFERENCE_LEVEL,)
        cells = []
        for level_a in (REFERENCE_LEVEL, *self.factor_a.levels):
            for level_b in levels_b:
                applied = [level for level in (level_a, level_b) if level != REFERENCE_LEVEL]
                chain: ChainSpecs = tuple(spec for level in applied for spec in conditions[level])
                label = "+".join(applied) or CLEAN
                references = [
                    factor.reference
                    for factor, level in ((self.factor_a, level_a), (self.factor_b, level_b))
                    if factor is not None and factor.reference is not None and level == REFERENCE_LEVEL
                ]
                select = merge_selections([chosen.get(name, ()) for name in (*applied, *references)])
                spoof = [spoofing[level] for level in applied if level in spoofing]
                if spoof and (self.degrade == "both" or len(spoof) > 1):
                    raise ValueError("a spoof level applies to the test side only, one per cell (degrade = 'test')")
                enrol = (label, chain, select) if self.degrade == "both" else (CLEAN, (), ())
                cells.append(
                    Cell(
                        label,
                        enrol[0],
                        label,
                        enrol[1],
                        chain,
                        level_a,
                        level_b,
                        enrol[2],
                        select,
                        spoof[0] if spoof else None,
                    )
                )
        if self.complement_reference:
            cells += self._complement_cells(conditions, chosen, levels_b)
        return cells

    def _complement_cells(
        self, conditions: dict[str, ChainSpecs], chosen: Mapping[str, Selection], levels_b: tuple[str, ...]
    ) -> list[Cell]:
        """For each stratum of factor A, the cells of its complement ``other-than-<stratum>`` (the union of the
        other strata) at every level of factor B: the reference population that does not overlap the stratum.

        The strata must be metadata selections on one shared column (ValueError otherwise), so the complement is
        exactly the other strata's values; utterances in no stratum (an unknown age) are in no complement."""
        assert self.factor_a is not None
        strata = [chosen.get(level, ()) for level in self.factor_a.levels]
        columns = {selection[0][0] if len(selection) == 1 else None for selection in strata}
        if None in columns or len(columns) != 1 or any(conditions[level] for level in self.factor_a.levels):
            raise ValueError(
                "complement_reference needs factor_a levels that each select one and the same column and apply "
                "no operator (strata of one population)"
            )
        values = [set(selection[0][1]) for selection in strata]
        if sum(len(v) for v in values) != len(set().union(*values)):
            raise ValueError("complement_reference needs factor_a strata whose values do not overlap")
        column = columns.pop()
        cells = []
        for stratum, own in zip(self.factor_a.levels, values, strict=True):
            level_a = f"{COMPLEMENT_PREFIX}{stratum}"
            rest: Selection = ((str(column), tuple(sorted(set().union(*values) - own))),)
            for level_b in levels_b:
                applied = [level_b] if level_b != REFERENCE_LEVEL else []
                chain: ChainSpecs = tuple(spec for level in applied for spec in conditions[level])
                select = merge_selections([rest, *(chosen.get(level, ()) for level in applied)])
                label = "+".join([level_a, *applied])
                enrol = (label, chain, select) if self.degrade == "both" else (CLEAN, (), ())
                cells.append(
                    Cell(label, enrol[0], label, enrol[1], chain, level_a, level_b, enrol[2], select, None, stratum)
                )
        return cells


def merge_selections(selections: list[Selection]) -> Selection:
    """The selection of several applied levels; two levels that select the same column are a ValueError."""
    merged: dict[str, tuple[str, ...]] = {}
    for selection in selections:
        for column, values in selection:
            if column in merged:
                raise ValueError(f"two levels of one cell both select column {column!r}")
            merged[column] = values
    return tuple(sorted(merged.items()))
