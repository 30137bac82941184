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
  (a measure missing on one side is no change).
- **Per-speaker EER** (``speaker_eers``): per speaker and record, the EER of the trials the speaker is enrolled on
  (its target trials and the non-targets against its enrolment), in the run's EER variant. The enrolment side because
  that is where both of a speaker's classes live: its EER is the error of a system that verifies claims of that
  identity (Doddington's speaker-dependent error); a test-side EER would mix its wolf trials, each also another
  speaker's. Computed only where the speaker has at least ``[analysis] speaker_eer_min_trials`` target and
  non-target trials (default ``MIN_TRIALS``); the others are listed with why (``left_out``). The interval resamples
  what varies with the speaker fixed: the impostors (each non-target weighs its test speaker's multiplicity in the
  audit's shared speaker draws; the speaker's own multiplicity, common to all its trials, is divided out) and its
  target trials by test utterance (a draw of its own per speaker, seeded by the shared seed and the speaker's id,
  so a speaker's clean and stressed EERs share their draws). Percentile intervals in ``interp`` and ``legacy``;
  bias-corrected (BC) ones in ``rocch``, whose hull is optimistic on a speaker's few trials. Chosen by simulation
  with known truth (``tests/audit/statistics/test_speaker_eers.py``, ``benchmarks/bench_speaker_eers.py``, 12
  speakers of 20 targets and 44 non-targets): percentile intervals covered 0.943 (interp) and 0.959 (legacy),
  Monte-Carlo SE 0.003 (6,000 intervals), where BC ones covered 0.91 and 0.88 (480: the draws tie with the
  estimate, which BC's correction reads as bias); rocch's BC intervals 0.848 (0.005), percentile ones 0.79, short
  of 0.95 whichever: read a rocch speaker EER's interval as too narrow.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from audit.metrics import MetricInputError, eer, eer_and_draws
from audit.statistics.contrasts import SpeakerDraws, estimate_with_interval, withheld_interval
from audit.statistics.draws import FloatArray, StatisticsInputError, draw_cluster_weights
from audit.statistics.records import ScoredRecord
from schemas import Analysis, EerMethod, count, keyed_rows, keyed_table

QUANTILES = (0.1, 0.9)  # goats below the reference's 10 % quantile of target means; lambs, wolves above its 90 %
SHEEP = "sheep"
KINDS = ("goat", "lamb", "wolf", SHEEP)
MEASURES = {"goat": "target_mean", "lamb": "fa_enrol", "wolf": "fa_test"}  # each category's measure
# The categories of each set of MEASURES' bits (goat 1, lamb 2, wolf 4), as ``category`` joins them.
_CATEGORY_NAMES = ["+".join(name for bit, name in enumerate(MEASURES) if code >> bit & 1) or SHEEP for code in range(8)]
# A speaker's EER needs at least 10 of its target trials (an EER step of at most 0.1) and 20 non-target trials
# against its enrolment, unless the run declares other counts ([analysis] speaker_eer_min_trials).
MIN_TRIALS: tuple[int, int] = Analysis.speaker_eer_min_trials


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


MEASURE_COLUMNS = ("target_mean", "n_target", "fa_enrol", "n_nontarget_enrol", "fa_test", "n_nontarget_test")


@dataclass(frozen=True)
class SpeakerMeasures:
    """A record's speakers (sorted) and their measures as columns (``MEASURE_COLUMNS``, None where a speaker has no
    such trial), with each category measure's values (NaN where missing) and where it is present: what
    ``speaker_table`` gives as one dict a speaker, kept as arrays so that a paper-scale record's categories and
    changes are array work, not a call a speaker."""

    ids: NDArray[Any]
    speakers: list[Any]
    columns: dict[str, list[Any]]
    values: dict[str, NDArray[np.float64]]
    present: dict[str, NDArray[np.bool_]]

    @classmethod
    def of(cls, record: ScoredRecord, threshold: float) -> SpeakerMeasures:
        """Counted over speaker codes at once; each target mean over the speaker's scores in trial order (the sum of
        a mask's selection, bit for bit); each share the division of its two counts."""
        speakers, codes = np.unique(np.concatenate([record.enrol_speaker, record.test_speaker]), return_inverse=True)
        enrol, test = codes[: record.labels.size], codes[record.labels.size :]
        accepted, labels, n = record.scores >= threshold, record.labels, speakers.size
        n_target = np.bincount(enrol[labels], minlength=n)
        n_enrol, n_test = np.bincount(enrol[~labels], minlength=n), np.bincount(test[~labels], minlength=n)
        order = np.argsort(enrol[labels], kind="stable")  # each speaker's targets together, in trial order
        target_scores, bounds = record.scores[labels][order], np.r_[0, np.cumsum(n_target)].tolist()
        means = np.full(n, np.nan)
        for code in np.flatnonzero(n_target).tolist():
            means[code] = target_scores[bounds[code] : bounds[code + 1]].mean()
        shares = {}
        for name, side, counts in (("fa_enrol", enrol, n_enrol), ("fa_test", test, n_test)):
            accepts = np.bincount(side[~labels & accepted], minlength=n)
            shares[name] = np.divide(accepts, counts, out=np.full(n, np.nan), where=counts > 0)
        values = {"target_mean": means, **shares}
        present = {"target_mean": n_target > 0, "fa_enrol": n_enrol > 0, "fa_test": n_test > 0}
        totals = {"n_target": n_target, "n_nontarget_enrol": n_enrol, "n_nontarget_test": n_test}
        columns = {name: total.tolist() for name, total in totals.items()}
        for name, value in values.items():
            kept = present[name].tolist()
            columns[name] = [x if has else None for x, has in zip(value.tolist(), kept, strict=True)]
        return cls(speakers, speakers.tolist(), {name: columns[name] for name in MEASURE_COLUMNS}, values, present)

    def table(self) -> dict[str, dict[str, Any]]:
        """Per speaker, its measures (``speaker_table``)."""
        rows = zip(*(self.columns[name] for name in MEASURE_COLUMNS), strict=True)
        return {
            speaker: dict(zip(MEASURE_COLUMNS, row, strict=True))
            for speaker, row in zip(self.speakers, rows, strict=True)
        }

    def cuts(self, quantiles: tuple[float, float]) -> dict[str, float | None]:
        """The cuts of a reference: the low quantile of its speakers' target means, the high one of each false-accept
        share (None where no speaker has a value)."""

        def quantile(name: str, level: float) -> float | None:
            values = self.values[name][self.present[name]]
            return float(np.quantile(values, level)) if values.size else None

        low, high = quantiles
        return {"goat": quantile("target_mean", low), "lamb": quantile("fa_enrol", high),
                "wolf": quantile("fa_test", high)}  # fmt: skip

    def category_codes(
        self, cuts: Mapping[str, float | None], at: NDArray[np.intp] | None = None,
        judged: tuple[SpeakerMeasures, NDArray[np.intp]] | None = None,
    ) -> NDArray[np.int64]:  # fmt: skip
        """``category`` of each speaker (of those at positions ``at``) as the bits of its categories (goat 1, lamb 2,
        wolf 4: ``_CATEGORY_NAMES`` names them), judged only where the speaker at the paired position of ``judged``
        (other measures, positions) has the measure too."""
        at = np.arange(len(self.speakers)) if at is None else at
        code = np.zeros(at.size, np.int64)
        for bit, (name, measure) in enumerate(MEASURES.items()):
            cut = cuts[name]
            if cut is None:
                continue
            value, judged_here = self.values[measure][at], self.present[measure][at]
            if judged is not None:
                judged_here = judged_here & judged[0].present[measure][judged[1]]
            beyond = (value < cut) if name == "goat" else (value > max(cut, 0.0))
            code |= (judged_here & beyond).astype(np.int64) << bit
        return code

    def categorised(self, cuts: Mapping[str, float | None]) -> dict[str, Any]:
        """The speakers, each its category (under ``cuts``) then its measures, as a ``keyed_table`` by speaker."""
        if not self.speakers:
            return keyed_table({}, "speaker")
        names = [_CATEGORY_NAMES[code] for code in self.category_codes(cuts).tolist()]
        cells = zip(self.speakers, names, *(self.columns[name] for name in MEASURE_COLUMNS), strict=True)
        return {"columns": ["speaker", "category", *MEASURE_COLUMNS], "rows": list(map(list, cells))}

    def changes_from(self, reference: SpeakerMeasures, cuts: Mapping[str, float | None]) -> list[dict[str, Any]]:
        """The speakers of both records whose categories differ, in speaker order, each judged on the measures both
        records have."""
        _, here, there = np.intersect1d(self.ids, reference.ids, assume_unique=True, return_indices=True)
        before = reference.category_codes(cuts, there, (self, here))
        after = self.category_codes(cuts, here, (reference, there))
        changed = np.flatnonzero(before != after)
        rows = zip(here[changed].tolist(), before[changed].tolist(), after[changed].tolist(), strict=True)
        return [{"speaker": self.speakers[position], "clean": _CATEGORY_NAMES[clean],
                 "stressed": _CATEGORY_NAMES[stressed]} for position, clean, stressed in rows]  # fmt: skip


def speaker_table(record: ScoredRecord, threshold: float) -> dict[str, dict[str, Any]]:
    """Per speaker: its target-score mean and target count, and its false-accept share and non-target count as
    enrolment side (``fa_enrol``) and as test side (``fa_test``) at ``threshold``; None where it has no such trial
    (``SpeakerMeasures``)."""
    return SpeakerMeasures.of(record, threshold).table()


def speaker_seed(seed: int, speaker: str) -> int:
    """The seed of a speaker's target-utterance draws: the shared seed and the speaker's id, nothing else (so the
    same speaker draws the same way in every record)."""
    return int.from_bytes(hashlib.blake2b(f"{seed}\0{speaker}".encode(), digest_size=8).digest(), "little")


def speaker_eers(
    record: ScoredRecord,
    draws: SpeakerDraws,
    level: float,
    eer_method: EerMethod,
    min_trials: tuple[int, int] = MIN_TRIALS,
    utterance_draws: dict[tuple[str, int], FloatArray] | None = None,
) -> dict[str, Any]:
    """Per speaker with at least ``min_trials`` (targets, non-targets) enrolled on it, its EER in ``eer_method`` with
    its interval over ``draws`` (module docstring), and the trials and units resampled; the speakers with fewer, each
    with why (``left_out``). ``utterance_draws``: the draws of each speaker's target utterances under these ``draws``
    by (speaker, number of utterances), kept there for the next record (a speaker draws the same way in every
    record)."""
    utterance_draws = {} if utterance_draws is None else utterance_draws
    scored = record.scored()
    utterances = scored.test_utterance if scored.test_utterance is not None else np.arange(scored.scores.size)
    multiplicities, rows = draws.multiplicities, draws.weights.rows
    eers: dict[str, dict[str, Any]] = {}
    left_out: dict[str, str] = {}
    speakers, inverse = np.unique(scored.enrol_speaker, return_inverse=True)
    order = np.argsort(inverse, kind="stable")  # each speaker's trials together: one pass, not one mask per speaker
    trials = np.bincount(inverse, minlength=speakers.size)
    bounds = np.r_[0, np.cumsum(trials)]
    # Every speaker's classes counted at once: most speakers of a paper-scale record have too few and stop here.
    targets = np.bincount(inverse[scored.labels], minlength=speakers.size)
    counted = zip(speakers.tolist(), targets.tolist(), (trials - targets).tolist(), strict=True)
    for position, (speaker, n_target, n_nontarget) in enumerate(counted):
        if n_target < min_trials[0] or n_nontarget < min_trials[1]:
            left_out[speaker] = f"{n_target} target and {n_nontarget} non-target trials"
            continue
        own = order[bounds[position] : bounds[position + 1]]
        labels = scored.labels[own]
        scores = scored.scores[own]
        impostors, impostor_unit = np.unique(scored.test_speaker[own][~labels], return_inverse=True)
        target_utts, target_unit = np.unique(np.asarray(utterances)[own][labels], return_inverse=True)
        units = np.empty(scores.size, np.int64)
        units[~labels], units[labels] = impostor_unit, impostors.size + target_unit
        counts = {"n_target": n_target, "n_nontarget": n_nontarget, "n_impostors": int(impostors.size),
                  "n_target_utterances": int(target_utts.size)}  # fmt: skip
        if target_utts.size < 2:
            estimate = float(eer(scores, labels, eer_method))
            eers[speaker] = withheld_interval(estimate, "one test utterance among its targets: nothing to resample")
            eers[speaker] |= counts
            continue
        codes = np.fromiter((draws.positions[name] for name in impostors.tolist()), np.int64, impostors.size)
        key = (speaker, int(target_utts.size))
        if key not in utterance_draws:
            utterance_draws[key] = draw_cluster_weights(target_utts.size, rows, speaker_seed(draws.seed, speaker))
        weights = np.hstack([multiplicities[:rows, codes], utterance_draws[key]])
        estimate, drawn = eer_and_draws(scores, labels, eer_method, units, None, weights)  # eer()'s, from one sort
        corrected = eer_method == EerMethod.ROCCH
        eers[speaker] = estimate_with_interval(estimate, drawn, level, corrected=corrected) | counts
    return {"eers": eers, "left_out": left_out, "min_trials": list(min_trials)}


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


@dataclass(frozen=True)
class SpeakerEerSettings:
    """How the per-speaker EERs are drawn: the audit's shared speaker draws, the interval level, the run's EER
    variant and the minimum trials."""

    draws: SpeakerDraws
    level: float
    eer_method: EerMethod
    min_trials: tuple[int, int] = MIN_TRIALS
    _utterance_draws: dict[tuple[str, int], FloatArray] = field(default_factory=dict, compare=False, repr=False)

    def of(self, record: ScoredRecord) -> dict[str, Any]:
        """The record's EER over all its scored trials and its per-speaker EERs (``speaker_eers``; ``eers`` as a
        ``keyed_table`` by speaker)."""
        scored = record.scored()
        try:
            pooled: float | None = float(eer(scored.scores, scored.labels, self.eer_method))
        except MetricInputError:  # a class without scored trials: no EER, and no speaker has enough trials
            pooled = None
        found = speaker_eers(record, self.draws, self.level, self.eer_method, self.min_trials, self._utterance_draws)
        return {"eer": pooled, **found, "eers": keyed_table(found["eers"], "speaker")}


def menagerie(
    reference: ScoredRecord,
    stressed: Sequence[ScoredRecord],
    quantiles: tuple[float, float] = QUANTILES,
    eers: SpeakerEerSettings | None = None,
) -> dict[str, Any]:
    """The reference's threshold and cuts, every record's speakers with their category and measures (``speakers``: a
    ``keyed_table`` by speaker, a list a speaker), and per stressed record the speakers whose categories differ from
    the reference's (``changes``); with ``eers``, every record's EER and per-speaker EERs (``SpeakerEerSettings.of``).
    """
    clean = reference.scored()
    threshold = eer_threshold(clean.scores, clean.labels)
    reference_measures = SpeakerMeasures.of(clean, threshold)
    cuts = reference_measures.cuts(quantiles)
    records = []
    for record in stressed:
        scored = record.scored()
        measures = SpeakerMeasures.of(scored, threshold)
        records.append(
            {"key": dict(record.key), "speakers": measures.categorised(cuts),
             "changes": measures.changes_from(reference_measures, cuts)}
            | (eers.of(scored) if eers else {})
        )  # fmt: skip
    return {
        "key": dict(reference.key),
        "threshold": threshold,
        "quantiles": list(quantiles),
        "cuts": cuts,
        "speakers": reference_measures.categorised(cuts),
        "stressed": records,
    } | (eers.of(clean) if eers else {})


MAX_CHANGES = 50  # rows of the report's table of changes (report.json keeps every one): the body stays short
MAX_COUNTS = 12  # compound cells whose category counts the section's line gives


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


MAX_EER_ROWS = 50  # rows of the report's per-speaker EER table (report.json keeps every one)
MAX_LEFT_OUT = 5  # records whose left-out speakers the section's line names


def _speaker_eer_rows(
    results: Sequence[Mapping[str, Any]], interval_text: Callable[[dict[str, Any] | None], str]
) -> tuple[list[dict[str, Any]], list[tuple[int, int, str]]]:
    """Per compound cell and speaker with an EER in it or in its clean reference, the two EERs with their intervals,
    the largest rise first (a speaker without one there shows ``-``); and per record with speakers left out, how
    many of how many, and a sentence naming one."""
    rows, left_out = [], []
    for result in results:
        if "eers" not in result:
            continue
        for record in (result, *result["stressed"]):
            if record["left_out"]:
                first, why = min(record["left_out"].items())
                n_left, n_all = len(record["left_out"]), len(record["left_out"]) + len(record["eers"]["rows"])
                name = _record_name(record["key"])
                left_out.append((n_left, n_all, f"{name} {n_left} of {n_all} (e.g. {first}: {why})"))
        clean = keyed_rows(result["eers"])
        for stressed in result["stressed"]:
            eers = keyed_rows(stressed["eers"])
            for speaker in sorted(set(clean) | set(eers)):
                before, after = clean.get(speaker), eers.get(speaker)
                rise = after["estimate"] - before["estimate"] if before and after else -np.inf
                rows.append(
                    (rise, {
                        "experiment": stressed["key"]["experiment"], "model": stressed["key"]["model"],
                        "condition": stressed["key"]["condition"], "speaker": speaker,
                        "EER clean": interval_text(before), "EER stressed": interval_text(after),
                        "trials (targets / non-targets)": "{} / {}".format(
                            *((after or before)[name] for name in ("n_target", "n_nontarget"))),
                    })
                )  # fmt: skip
    ranked = sorted(range(len(rows)), key=lambda i: -rows[i][0])  # stable: ties keep the cells' order
    return [rows[i][1] for i in ranked], left_out


def _record_name(key: Mapping[str, Any]) -> str:
    return f"{key.get('experiment')}/{key.get('model')} {key.get('condition')}"


def menagerie_section(
    results: Sequence[Mapping[str, Any]], interval_text: Callable[[dict[str, Any] | None], str] | None = None
) -> dict[str, Any]:
    """The report's speakers under stress: the rule, the category counts, the table of speakers who change
    category between each clean reference and its compound cells and, where the results carry them
    (``SpeakerEerSettings``), a table of per-speaker EERs clean and stressed (``interval_text`` writes them)."""
    table, counts, skipped = [], [], []
    for result in results:
        if "skipped" in result:
            skipped.append(f"{result['key'].get('record_id')}: {result['skipped']}")
            continue
        reference = keyed_rows(result["speakers"])
        for stressed in result["stressed"]:
            key, speakers = stressed["key"], keyed_rows(stressed["speakers"])
            tally = {name: sum(name in row["category"].split("+") for row in speakers.values()) for name in KINDS}
            counts.append(f"{key['experiment']}/{key['model']} {key['condition']}: " + ", ".join(
                f"{tally[name]} {name}" for name in KINDS) + f", {len(stressed['changes'])} changed")  # fmt: skip
            for change in stressed["changes"]:
                speaker, after = change["speaker"], speakers[change["speaker"]]
                before = reference[speaker]
                table.append(
                    {
                        "experiment": key["experiment"], "model": key["model"], "condition": key["condition"],
                        "speaker": speaker, "clean": change["clean"], "stressed": change["stressed"],
                        "target mean": f"{_share(before.get('target_mean'))} -> {_share(after.get('target_mean'))}",
                        "FA share as enrolment": f"{_share(before.get('fa_enrol'))} -> {_share(after.get('fa_enrol'))}",
                        "FA share as test": f"{_share(before.get('fa_test'))} -> {_share(after.get('fa_test'))}",
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
    section = {
        "id": "speakers-under-stress",
        "title": "Speakers under stress: who changes category from clean to each compound cell",
        "status": "info",
        "lines": lines,
        "table": table[:MAX_CHANGES],
    }
    with_eers = [result for result in results if "eers" in result]
    if not with_eers or interval_text is None:
        return section
    rows, left_out = _speaker_eer_rows(with_eers, interval_text)
    targets, nontargets = with_eers[0]["min_trials"]
    lines.append(
        "Per-speaker EER"
        + (" (second table)" if rows else "")
        + ", in the statistics' EER variant: the EER of the trials enrolled on the "
        "speaker (its target trials and the non-targets against its enrolment: the error of verifying claims of "
        f"that identity), where it has at least {targets} target and {nontargets} non-target trials ([analysis] "
        "speaker_eer_min_trials, declared or the default), with a 95% "
        "interval that holds the speaker fixed and resamples what varies: its impostors (through the shared speaker "
        "draws) and its target trials by test utterance (percentile; bias-corrected in rocch). Measured coverage at "
        "20 target and 44 non-target trials per speaker: 0.94 (interp), 0.96 (legacy), 0.85 (rocch: the hull is "
        "optimistic on few trials, so read its intervals as too narrow). The largest rise first"
        + (
            f"; the first {MAX_EER_ROWS} of {len(rows)} rows, report.json has every one."
            if len(rows) > MAX_EER_ROWS
            else "."
        )
    )
    if left_out:
        n_left, n_all = (sum(entry[i] for entry in left_out) for i in (0, 1))
        lines.append(
            f"Speakers without an EER, having fewer trials enrolled on them: {n_left:,} of {n_all:,} enrolment "
            f"speakers, summed over the {count(len(left_out), 'record')} with any left out: "
            + "; ".join(entry[2] for entry in left_out[:MAX_LEFT_OUT])
            + (f"; and {count(len(left_out) - MAX_LEFT_OUT, 'record')} more" if len(left_out) > MAX_LEFT_OUT else "")
            + ". report.json names each with its counts (statistics.menagerie, left_out)."
        )
    if rows:
        section["tables"] = [{"title": "Per-speaker EER, clean and stressed", "rows": rows[:MAX_EER_ROWS]}]
    else:
        lines.append("No speaker has enough trials for an EER in any record: no per-speaker EER table.")
    return section


def menagerie_or_reason(
    reference: ScoredRecord,
    stressed: Sequence[ScoredRecord],
    quantiles: tuple[float, float] = QUANTILES,
    eers: SpeakerEerSettings | None = None,
) -> dict[str, Any]:
    """``menagerie``, or why the reference gives none (its scored trials lack a class): one reference cannot stop
    the others."""
    try:
        return menagerie(reference, stressed, quantiles, eers)
    except MetricInputError as error:
        return {"key": dict(reference.key), "skipped": str(error)}
