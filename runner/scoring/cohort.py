"""The AS-norm cohort of a run that declares ``[analysis] score_normalisation``.

The cohort speakers are taken out of the pools the trials are drawn from (so no evaluation trial involves one) and
their clean utterances embedded by every encoder; each trial's sides are then scored against the cohort of the
experiment's corpus and the top-N statistics (``audit.metrics.normalisation.top_cohort_statistics``) go into its
score file, from which the runner and the audit compute the normalised metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from audit.metrics import COHORT_SD_DDOF, top_cohort_statistics
from runner.cache import CachedEmbedding
from runner.design.config import RunConfig
from runner.operators import chain_id
from runner.plan import RecordPlan, Side
from schemas import InputError, RunError, count

__all__ = [
    "CLEAN_CHAIN",
    "Cohort",
    "cohort_matrices",
    "split_cohort",
    "trial_cohort_statistics",
]

CLEAN_CHAIN = chain_id([])


@dataclass(frozen=True)
class Cohort:
    """The declared ``top_n`` and, per genuine corpus holding cohort speakers, their clean utterances' sides."""

    top_n: int
    sides: dict[str, list[Side]]

    def all_sides(self) -> set[Side]:
        return {side for sides in self.sides.values() for side in sides}


def split_cohort(config: RunConfig, pools: Mapping[str, pd.DataFrame]) -> tuple[dict[str, pd.DataFrame], Cohort | None]:
    """The pools the trials are drawn from (without the cohort speakers) and the cohort; the pools unchanged and
    no cohort when the run declares no normalisation. A cohort speaker that no genuine corpus has, or a corpus
    whose cohort has fewer utterances than ``top_n``, is one InputError before any work."""
    declared = config.analysis.score_normalisation
    if declared is None:
        return dict(pools), None
    genuine = [name for name in pools if not config.corpora[name].spoofs]
    speakers = {str(speaker) for name in genuine for speaker in pools[name]["speaker"].unique()}
    unknown = [name for name in declared.cohort if name not in speakers]
    if unknown:
        shown = ", ".join(name[:40] for name in unknown[:10])
        raise InputError(
            str(config.source),
            f"analysis.score_normalisation: cohort: {count(len(unknown), 'name')} "
            f"{'is' if len(unknown) == 1 else 'are'} no speaker of the selected corpora: {shown}",
        )
    cohort = set(declared.cohort)
    trial_pools, sides = dict(pools), {}
    for name in genuine:
        pool = pools[name]
        member = pool["speaker"].astype(str).isin(cohort).to_numpy()
        if not member.any():
            continue
        trial_pools[name] = pool[~member].reset_index(drop=True)
        sides[name] = [Side(name, CLEAN_CHAIN, str(utt)) for utt in pool.loc[member, "utt_id"]]
        if len(sides[name]) < declared.top_n:
            raise InputError(
                str(config.source),
                f"analysis.score_normalisation: top_n {declared.top_n} is more than the cohort's "
                f"{count(len(sides[name]), 'utterance')} in corpus {name}",
            )
    return trial_pools, Cohort(declared.top_n, sides)


def cohort_matrices(
    cohort: Cohort, embeddings: Mapping[tuple[Side, str], CachedEmbedding], labels: list[str]
) -> dict[tuple[str, str], NDArray[np.float64]]:
    """Per (corpus, encoder label), the cohort's unit-length embeddings, one per row. A cohort utterance the
    encoder could not embed is left out (its failure is counted in operators.json with the encoder's others);
    fewer than ``top_n`` left is a RunError."""
    matrices = {}
    for corpus, sides in cohort.sides.items():
        for label in labels:
            vectors = [vector for side in sides if (vector := embeddings[(side, label)].vector) is not None]
            if len(vectors) < cohort.top_n:
                raise RunError(
                    f"AS-norm: {label} embedded {count(len(vectors), 'cohort utterance')} of corpus {corpus}, "
                    f"fewer than top_n {cohort.top_n}"
                )
            matrix = np.asarray(vectors, dtype=np.float64)
            matrices[(corpus, label)] = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrices


def trial_cohort_statistics(
    plan: RecordPlan,
    embeddings: Mapping[tuple[Side, str], CachedEmbedding],
    matrices: Mapping[tuple[str, str], NDArray[np.float64]],
    top_n: int,
) -> NDArray[np.float64] | None:
    """Each trial's enrolment mean and standard deviation, then its test side's, of the top-N cosine scores
    against the cohort of the experiment's corpus (NaN where the side has no embedding); None when that corpus
    has no cohort."""
    label = plan.encoder.label
    matrix = matrices.get((plan.experiment.corpus, label))
    if matrix is None:
        return None
    statistics = np.full((len(plan.trials.frame), 4), np.nan)
    for columns, sides in (((0, 1), plan.enrol_sides()), ((2, 3), plan.test_sides())):
        distinct = list(dict.fromkeys(sides))
        vectors = {side: embeddings[(side, label)].vector for side in distinct}
        embedded = [side for side in distinct if vectors[side] is not None]
        if not embedded:
            continue
        unit = np.asarray([vectors[side] for side in embedded], dtype=np.float64)
        unit /= np.linalg.norm(unit, axis=1, keepdims=True)
        means, stds = top_cohort_statistics(unit @ matrix.T, top_n, ddof=COHORT_SD_DDOF)
        row_of = {side: row for row, side in enumerate(embedded)}
        for index, side in enumerate(sides):
            if side in row_of:
                statistics[index, columns[0]] = means[row_of[side]]
                statistics[index, columns[1]] = stds[row_of[side]]
    return statistics
