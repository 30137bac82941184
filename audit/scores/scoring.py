"""`audit scores`: a reviewer's own trial list and score file, joined and scored, as the same report.

read the trial list and the score file -> join scores to trials by (enrol, test), reporting every duplicated,
unmatched, unscored or mislabelled pair -> speakers from a declared map or VoxCeleb ids -> per group (all trials,
then each subgroup and condition declared) the three EER variants, minDCF at the declared costs and AUC ->
speaker-cluster bootstrap intervals (``audit.statistics``) -> the report dict that ``reports.write_report``
renders.

Keys are compared without a trailing audio extension (``.wav``, ``.flac``...): SpeechBrain's score files drop
it while the VoxCeleb lists keep it. The report says how many keys that changed. Where a pair occurs twice, its
first occurrence is used and the duplicates are an error-severity finding, so no choice is silent.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from audit.bundle.curves import curve
from audit.metrics.point import EER_METHODS, MetricInputError, eer, grouped_metrics
from audit.metrics.weighted_roc import weighted_eer
from audit.result import TOOL_NAME, tool_version
from audit.scores.calibration import DevCalibration, calibration_row, fit_dev_calibration
from audit.scores.files import NO_LABEL, CmScoreFile, ScoreFile, ScoreFormat, read_cm_score_file, read_score_file
from audit.scores.lines import Vocabulary
from audit.scores.spoofing import spoofing_row
from audit.scores.trial_lists import TrialFormat, TrialList, numbered_fields, read_trial_list
from audit.statistics.contrasts import SpeakerDraws, estimate_with_interval
from audit.statistics.draws import cluster_codes, draw_cluster_weights
from audit.table.analysis import N_RESAMPLES_MAX, SEED_MAX
from audit.table.findings import Flag, Severity, has_errors
from audit.table.reading import read_text
from schemas.errors import InputError
from schemas.jsonable import json_safe
from schemas.trials import TrialKind
from schemas.wording import count

AUDIO_EXTENSIONS = ("wav", "flac", "m4a", "opus", "mp3", "sph", "ogg")
AUDIO_EXTENSION = rf"\.(?i:{'|'.join(AUDIO_EXTENSIONS)})$"  # a plain string: pyarrow's RE2 runs it
VOXCELEB_SPEAKER = re.compile(r"id\d{5}")
MAX_LISTED_PAIRS = 20  # pairs listed under one finding; the count is always complete


@dataclass(frozen=True)
class ScoringConfig:
    """What the reviewer declares: the minDCF costs and the bootstrap (written into the report)."""

    p_target: float = 0.01
    c_miss: float = 1.0
    c_fa: float = 1.0
    n_resamples: int = 1000
    seed: int = 0
    level: float = 0.95

    def __post_init__(self) -> None:
        """Each value within the bounds the bundle audit's ``[analysis]`` uses: one line naming the option."""
        for option, value, low, high in (
            ("--resamples", self.n_resamples, 1, N_RESAMPLES_MAX),
            ("--seed", self.seed, 0, SEED_MAX),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InputError(option, f"expected an integer from {low:,} to {high:,}, got {value!r}")
        for option, number, below in (
            ("--p-target", self.p_target, 1.0),
            ("--c-miss", self.c_miss, math.inf),
            ("--c-fa", self.c_fa, math.inf),
            ("level", self.level, 1.0),
        ):
            if not (math.isfinite(number) and 0 < number < below):
                bound = " and < 1" if below == 1.0 else ""
                raise InputError(option, f"expected a finite number > 0{bound}, got {number!r}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {
            "eer_variants": list(EER_METHODS),
            "bootstrap_eer_variants": list(EER_METHODS),
            "bootstrap_clusters": f"EER intervals: {TWO_WAY} where test speakers are known; calibration and spoofing "
            "metrics: enrolment speaker",
            "join_key": "(enrol, test) without a trailing audio extension",
        }


def read_map(path: Path, what: str, layout: str) -> dict[str, str]:
    """A two-column text map (Kaldi ``utt2spk`` style, ``layout`` names the columns); a key given two values is
    an InputError."""
    text = read_text(Path(path), what)
    mapping: dict[str, str] = {}
    for number, fields in numbered_fields(text):
        if len(fields) != 2:
            raise InputError(str(path), f"expected '{layout}', got {len(fields)} field(s)", row=number)
        key, value = fields
        if mapping.setdefault(key, value) != value:
            raise InputError(str(path), f"{key!r} is given two values, {mapping[key]!r} and {value!r}", row=number)
    return mapping


def without_extension(utterance: str) -> str:
    """An utterance id without a trailing audio extension (SpeechBrain's score files drop it)."""
    head, dot, extension = utterance.rpartition(".")
    return head if dot and extension.lower() in AUDIO_EXTENSIONS else utterance


def _categorical(column: pd.Series) -> pd.Categorical:
    return column.array if isinstance(column.dtype, pd.CategoricalDtype) else pd.Categorical(column)


def _join_keys(*frames: pd.DataFrame) -> tuple[list[pd.Series], int]:
    """One integer join key per row of each frame, comparable across them: (enrol, test) without a trailing audio
    extension; and how many ids dropping the extension changed. Worked out once per distinct id (the readers give
    categorical ids), never per trial."""
    columns = [[_categorical(frame[side]) for side in ("enrol_utt", "test_utt")] for frame in frames]
    names = pd.Index(pd.concat([pd.Series(c.categories) for pair in columns for c in pair]).unique())
    bare = pd.Series(names.astype("string[pyarrow]")).str.replace(AUDIO_EXTENSION, "", regex=True)
    stripped = pd.factorize(bare)[0].astype(np.int64)
    changed = (bare.to_numpy(dtype=object) != names.to_numpy(dtype=object)).astype(np.int64)
    keys, n_changed = [], 0
    for enrol, test in columns:
        # per distinct id first (its position in names, then its stripped code), then one take per trial
        enrol_at, test_at = names.get_indexer(enrol.categories), names.get_indexer(test.categories)
        n_changed += int(np.bincount(enrol.codes, minlength=enrol_at.size) @ changed[enrol_at])
        n_changed += int(np.bincount(test.codes, minlength=test_at.size) @ changed[test_at])
        key = stripped[enrol_at][enrol.codes] << 31
        key += stripped[test_at][test.codes]
        keys.append(pd.Series(key))
    return keys, n_changed


def _pairs(frame: pd.DataFrame, where: str) -> list[dict[str, Any]]:
    return [
        {"enrol": row.enrol_utt, "test": row.test_utt, where: int(getattr(row, where))}
        for row in frame.head(MAX_LISTED_PAIRS).itertuples()
    ]


def _flag(flag_id: str, severity: Severity, message: str, pairs: list[dict[str, Any]] | None = None) -> Flag:
    return Flag(flag_id, severity, message, details={"pairs": pairs} if pairs else {})


@dataclass(frozen=True)
class Joined:
    """The trials that have a finite score, with their label, speakers and score; and the join's findings."""

    trials: pd.DataFrame
    flags: list[Flag]
    counts: dict[str, int]


def _repeated(keys: np.ndarray) -> np.ndarray:
    """Whether each key repeats one earlier in the array (a stable sort: the first occurrence is kept)."""
    order = np.argsort(keys, kind="stable")
    repeated = np.zeros(keys.size, dtype=bool)
    repeated[order[1:][keys[order[1:]] == keys[order[:-1]]]] = True
    return repeated


def _positions_in(unique_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The position in ``unique_keys`` (no key twice) of each of ``keys``, or -1 where it is absent."""
    order = np.argsort(unique_keys, kind="stable")
    ordered = unique_keys[order]
    at = np.searchsorted(ordered, keys)
    found = at < ordered.size
    found[found] = ordered[at[found]] == keys[found]
    return np.where(found, order[np.minimum(at, max(ordered.size - 1, 0))], -1)


def join(trial_list: TrialList, score_file: ScoreFile) -> Joined:
    """Scores joined to trials by (enrol, test); every pair that is duplicated, unmatched, unscored or whose two
    labels disagree becomes a finding, with the first ``MAX_LISTED_PAIRS`` pairs listed."""
    trials = trial_list.frame.assign(trial=np.arange(1, len(trial_list.frame) + 1, dtype=np.int32))
    scores = score_file.frame
    (trial_series, score_series), keys_changed = _join_keys(trials, scores)
    trial_keys, score_keys = trial_series.to_numpy(), score_series.to_numpy()
    del trial_series, score_series
    trial_repeated, score_repeated = _repeated(trial_keys), _repeated(score_keys)
    trial_dups, score_dups = trials[trial_repeated], scores[score_repeated]
    listed = np.flatnonzero(~trial_repeated)
    first_scores = np.flatnonzero(~score_repeated)
    # Keys without their repeats (the arrays themselves when nothing repeats: no copy of millions of keys).
    listed_keys = trial_keys[listed] if trial_repeated.any() else trial_keys
    first_keys = score_keys[first_scores] if score_repeated.any() else score_keys
    del trial_keys, score_keys
    score_at = _positions_in(first_keys, listed_keys)  # -1: no score for the trial
    unscored = trials.iloc[listed[score_at < 0]]
    extra = scores.iloc[first_scores[_positions_in(listed_keys, first_keys) < 0]]
    del listed_keys, first_keys
    matched = first_scores[score_at[score_at >= 0]]
    both = trials.iloc[listed[score_at >= 0]].reset_index(drop=True)
    del score_at, listed, first_scores
    for column, source in (("score", "score"), ("line", "line"), ("score_label", "label")):
        both[column] = scores[source].to_numpy()[matched]
    finite = np.isfinite(both["score"].to_numpy())
    not_finite = both[~finite]
    score_label, label = both["score_label"].to_numpy(), both["label"].to_numpy()
    mislabelled = both[(score_label != NO_LABEL) & (score_label != label)]
    n = {"dup_t": len(trial_dups), "dup_s": len(score_dups), "unscored": len(unscored), "extra": len(extra)}
    findings = [
        ("duplicated-trials", Severity.ERROR, trial_dups, "trial",
         f"{count(n['dup_t'], 'trial')} of {trial_list.path} repeat an (enrol, test) pair listed earlier; only the "
         "first occurrence is scored."),
        ("duplicated-scores", Severity.ERROR, score_dups, "line",
         f"{count(n['dup_s'], 'line')} of {score_file.path} score an (enrol, test) pair scored on an earlier line; "
         "only the first score is used."),
        ("unscored-trials", Severity.ERROR, unscored, "trial",
         f"{count(n['unscored'], 'trial')} of the list have no score in {score_file.path}: the metrics below cover "
         "the scored trials only, not the list."),
        ("scores-without-trials", Severity.WARNING, extra, "line",
         f"{count(n['extra'], 'line')} of {score_file.path} score pairs the trial list does not hold; they are left "
         "out."),
        ("non-finite-scores", Severity.ERROR, not_finite, "line",
         f"{count(len(not_finite), 'trial')} scored NaN or infinite; they are left out of the metrics."),
        ("label-mismatch", Severity.ERROR, mislabelled, "line",
         f"{count(len(mislabelled), 'trial')} carry a label in {score_file.path} that contradicts the trial list; "
         "the trial list's label is used."),
    ]  # fmt: skip
    flags = [
        _flag(i, severity, message, _pairs(rows, where)) for i, severity, rows, where, message in findings if len(rows)
    ]
    used = both if finite.all() else both[finite].reset_index(drop=True)  # no copy of millions of rows for nothing
    counts = {
        "trial_lines": len(trials),
        "score_lines": len(scores),
        "duplicated_trials": n["dup_t"],
        "duplicated_scores": n["dup_s"],
        "unscored_trials": n["unscored"],
        "scores_without_trials": n["extra"],
        "non_finite_scores": len(not_finite),
        "label_mismatches": len(mislabelled),
        "keys_without_audio_extension": keys_changed,
        "trials_scored": len(used),
    }
    return Joined(used, flags, counts)


def _speakers(trials: pd.DataFrame, lookup: Callable[[str], str]) -> dict[str, pd.Categorical]:
    """``enrol_speaker`` and ``test_speaker`` as categoricals over one set of speakers (so the two compare, and the
    bootstrap takes their codes), each distinct utterance id looked up once."""
    sides = {side: _categorical(trials[f"{side}_utt"]).remove_unused_categories() for side in ("enrol", "test")}
    named = {side: [lookup(name) for name in ids.categories] for side, ids in sides.items()}
    speakers = pd.Index(sorted(set(named["enrol"]) | set(named["test"])), dtype=object)
    return {
        f"{side}_speaker": pd.Categorical.from_codes(
            speakers.get_indexer(pd.Index(named[side], dtype=object))[ids.codes], categories=speakers, validate=False
        )
        for side, ids in sides.items()
    }


def speakers_of(
    trials: pd.DataFrame, speaker_map: Mapping[str, str] | None, map_path: Path | None
) -> tuple[pd.DataFrame, str] | tuple[None, str]:
    """``trials`` with ``enrol_speaker`` and ``test_speaker``, and where they came from; (None, why) when unknown.

    A declared map must cover every utterance of the scored trials (an InputError otherwise); without one, every
    utterance must be a VoxCeleb id ``idNNNNN/...``. Each distinct id is looked up once.
    """
    used = {
        str(name)
        for side in ("enrol_utt", "test_utt")
        for name in _categorical(trials[side]).remove_unused_categories().categories
    }
    if speaker_map is not None:
        missing = sorted(u for u in used if u not in speaker_map and without_extension(u) not in speaker_map)
        if missing:
            raise InputError(
                str(map_path),
                f"{count(len(missing), 'utterance')} of the trials are not in the speaker map "
                f"(first: {', '.join(missing[:3])})",
            )

        def lookup(utt: str) -> str:
            return speaker_map.get(utt) or speaker_map.get(without_extension(utt), "")

        how = f"speaker map {map_path}"
    else:
        # The first path component of a VoxCeleb id.
        if not all("/" in u and VOXCELEB_SPEAKER.fullmatch(u.partition("/")[0]) for u in used):
            return None, "no --speakers map was given and the utterance ids are not VoxCeleb ids (idNNNNN/...)"

        def lookup(utt: str) -> str:
            return utt.partition("/")[0]

        how = "VoxCeleb ids (idNNNNN/...)"
    return trials.assign(**_speakers(trials, lookup)), how


def flag_speaker_labels(trials: pd.DataFrame) -> Flag | None:
    """Target trials across two speakers, or non-target trials of one speaker: the labels or the speakers are
    wrong. A trial keyed spoof (``kind``, from ``--cm-scores``) is a non-target of one speaker by design."""
    same = trials["enrol_speaker"] == trials["test_speaker"]
    spoof = trials["kind"] == TrialKind.SPOOF if "kind" in trials else False
    contradict = trials[(same != (trials["label"] == 1)) & ~spoof]
    if not len(contradict):
        return None
    return _flag(
        "labels-contradict-speakers",
        Severity.WARNING,
        f"{count(len(contradict), 'trial')} have a label that contradicts their speakers (a target across two "
        "speakers or a non-target within one).",
        _pairs(contradict, "trial"),
    )


def _groups(trials: pd.DataFrame) -> list[tuple[str, str, np.ndarray]]:
    """(grouping, value, mask) for all trials, then each subgroup and condition present."""
    groups = [("all", "all trials", np.ones(len(trials), dtype=bool))]
    for column in ("subgroup", "condition"):
        if column in trials:
            for value in sorted(trials[column].dropna().unique()):
                groups.append((column, str(value), (trials[column] == value).to_numpy()))
    return groups


def _bootstrap(
    scores: np.ndarray, labels: np.ndarray, enrol: np.ndarray, test: np.ndarray | None, config: ScoringConfig
) -> dict[str, Any]:
    """Each EER variant's interval from the speaker bootstrap of the bundle audit (``audit.statistics``): two-way
    when the test speakers are known (a trial between two speakers counts once per drawn copy of each; resampling
    the enrolment side alone covered 0.87-0.91), bias-corrected as a single EER is there."""
    draws = SpeakerDraws.of([enrol] if test is None else [enrol, test], config.n_resamples, config.seed)
    codes, partners = draws.codes(enrol, test)
    out: dict[str, Any] = {
        "n_speakers": int(draws.index.size),
        "bootstrap_clusters": "enrolment speaker" if test is None else TWO_WAY,
    }
    for method in EER_METHODS:
        estimate = eer(scores, labels, method)
        resampled = weighted_eer(scores, labels, codes, draws.weights, method, partners)
        interval = estimate_with_interval(estimate, resampled, config.level, corrected=True)
        out[f"eer_{method}_low"] = interval["low"]
        out[f"eer_{method}_high"] = interval["high"]
        out[f"eer_{method}_undefined_draws"] = interval["n_undefined"]
    return out


def group_metrics(trials: pd.DataFrame, config: ScoringConfig, with_speakers: bool) -> list[dict[str, Any]]:
    """One row per group: trial counts, the three EERs, minDCF, AUC and (with speakers) bootstrap intervals."""
    rows = []
    for grouping, value, mask in _groups(trials):
        subset = trials if mask.all() else trials[mask]  # all trials: no copy of millions of rows
        scores, labels = subset["score"].to_numpy(float), subset["label"].to_numpy(np.int64)
        row: dict[str, Any] = {"grouping": grouping, "group": value, "trials": len(subset)}
        try:
            metrics = grouped_metrics(
                scores, labels, np.zeros(len(subset), dtype=np.int64), 1,
                p_target=config.p_target, c_miss=config.c_miss, c_fa=config.c_fa,
            )  # fmt: skip
        except MetricInputError as error:
            rows.append(row | {"not_computable": str(error)})
            continue
        row |= {name: values[0].item() for name, values in metrics.items()}
        if with_speakers:
            try:
                test = subset["test_speaker"].to_numpy() if "test_speaker" in subset else None
                row |= _bootstrap(scores, labels, subset["enrol_speaker"].to_numpy(), test, config)
            except MetricInputError as error:
                row["interval_not_computable"] = str(error)
        rows.append(row)
    return rows


def group_curves(trials: pd.DataFrame, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per group whose metrics were computed: its DET curve, EER point (interp) and score histogram."""
    computed = {(row["grouping"], row["group"]): row for row in rows if "not_computable" not in row}
    curves = []
    for grouping, value, mask in _groups(trials):
        row = computed.get((grouping, value))
        if row is None:
            continue
        scores, labels = trials["score"].to_numpy(float)[mask], trials["label"].to_numpy(np.int64)[mask]
        curves.append(curve(grouping, value, scores, labels, row["eer_interp"]))
    return curves


def attach_countermeasure(trials: pd.DataFrame, cm_file: CmScoreFile) -> tuple[pd.DataFrame, list[Flag]]:
    """``trials`` with ``cm_score`` and ``kind`` (``TrialKind`` codes; -1 where the trial has no usable CM score or
    its CM key contradicts its label), joined by (enrol, test) as the ASV scores are; every duplicated, missing,
    non-finite or contradictory CM line is a finding."""
    cm = cm_file.frame
    (trial_keys, cm_keys), _ = _join_keys(trials, cm)
    repeated = cm_keys.duplicated().to_numpy()
    first = np.flatnonzero(~repeated)
    cm_index = pd.Index(cm_keys.iloc[first])
    at = cm_index.get_indexer(pd.Index(trial_keys))
    rows = first[np.maximum(at, 0)]
    cm_score = np.where(at >= 0, cm["cm_score"].to_numpy()[rows], np.nan)
    spoof = (at >= 0) & cm["spoof"].to_numpy()[rows]
    label = trials["label"].to_numpy()
    contradicts = spoof & (label == 1)
    kind = np.where(spoof, int(TrialKind.SPOOF), np.where(label == 1, int(TrialKind.TARGET), int(TrialKind.NONTARGET)))
    unusable = (at < 0) | ~np.isfinite(cm_score) | contradicts
    joined = trials.assign(cm_score=cm_score, kind=np.where(unusable, -1, kind), cm_line=np.where(at >= 0, rows, -1))
    extra = cm.iloc[first[pd.Index(trial_keys).get_indexer(cm_index) < 0]]
    missing, not_finite = joined[at < 0], joined[(at >= 0) & ~np.isfinite(cm_score)]
    wrong = joined[contradicts]
    path = cm_file.path
    findings = [
        ("cm-duplicated-scores", Severity.ERROR, cm[repeated], "line",
         f"{count(int(repeated.sum()), 'line')} of {path} score an (enrol, test) pair scored on an earlier line; only "
         "the first is used."),
        ("cm-unscored-trials", Severity.ERROR, missing, "trial",
         f"{count(len(missing), 'scored trial')} have no countermeasure score in {path}: the spoofing-aware metrics "
         "leave them out."),
        ("cm-scores-without-trials", Severity.WARNING, extra, "line",
         f"{count(len(extra), 'line')} of {path} score pairs the scored trials do not hold; they are left out."),
        ("cm-non-finite-scores", Severity.ERROR, not_finite, "trial",
         f"{count(len(not_finite), 'trial')} have a NaN or infinite countermeasure score; they are left out."),
        ("spoof-labelled-target", Severity.ERROR, wrong, "trial",
         f"{count(len(wrong), 'trial')} are keyed spoof in {path} but are target trials in the list (a spoof trial "
         "is a non-target of the speaker it imitates); they are left out of the spoofing-aware metrics."),
    ]  # fmt: skip
    return joined, [
        _flag(i, sev, message, _pairs(rows_, where)) for i, sev, rows_, where, message in findings if len(rows_)
    ]


def calibration_overlap(trial_list: TrialList, dev: ScoreFile) -> Flag | None:
    """The development scores must not score a trial of the evaluated list: a calibration fitted on the trials it
    is judged on makes Cllr and actDCF look better than they are."""
    (trial_keys, dev_keys), _ = _join_keys(trial_list.frame, dev.frame)
    shared = dev.frame[dev_keys.isin(set(trial_keys)).to_numpy()]
    if not len(shared):
        return None
    return _flag(
        "calibration-on-evaluation-trials",
        Severity.ERROR,
        f"{count(len(shared), 'line')} of the calibration file {dev.path} score trials of the evaluated list: a "
        "calibration is fitted on development trials only, so no calibrated metric is reported.",
        _pairs(shared, "line"),
    )


def _resampled(subset: pd.DataFrame, config: ScoringConfig) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Per-trial enrolment-speaker codes and the speaker draws of one group, as ``_bootstrap`` draws them."""
    if "enrol_speaker" not in subset:
        return None
    codes, n_clusters = cluster_codes(subset["enrol_speaker"].to_numpy())
    if n_clusters < 2:
        return None
    return codes, draw_cluster_weights(n_clusters, config.n_resamples, config.seed), config.level


def calibration_metrics(
    trials: pd.DataFrame, config: ScoringConfig, calibration: DevCalibration | None
) -> list[dict[str, Any]]:
    """One row per group: minCllr, and with a fitted calibration Cllr, actDCF and the losses, with intervals."""
    fit = calibration.fit if calibration is not None else None
    rows = []
    for grouping, value, mask in _groups(trials):
        subset = trials[mask]
        scores, labels = subset["score"].to_numpy(float), subset["label"].to_numpy(np.int64)
        operating_point = (config.p_target, config.c_miss, config.c_fa)
        # Their intervals with a declared calibration: minCllr's resamples cost a PAV pass over every trial each.
        resampled = _resampled(subset, config) if calibration is not None else None
        row = calibration_row(scores, labels, fit, operating_point, resampled)
        rows.append({"grouping": grouping, "group": value, "trials": len(subset)} | row)
    return rows


def flag_poor_calibration(rows: list[dict[str, Any]]) -> Flag | None:
    """Groups whose actDCF exceeds 1: at the Bayes threshold the calibrated LLRs cost more than the better of
    accepting and rejecting everyone, which needs no scores at all (minDCF is at most 1 by definition)."""
    poor = [row for row in rows if row.get("act_dcf", 0.0) > 1.0]
    if not poor:
        return None
    named = ", ".join(
        f"{row['group']} ({row['act_dcf']:.3g} against minDCF {row['act_dcf'] - row['act_dcf_minus_min_dcf']:.3g})"
        for row in poor[:MAX_LISTED_PAIRS]
    )
    return _flag(
        "poorly-calibrated",
        Severity.WARNING,
        f"actDCF above 1 in {count(len(poor), 'group')}, worse than deciding without the scores: {named}.",
    )


def spoofing_metrics(trials: pd.DataFrame, config: ScoringConfig) -> list[dict[str, Any]]:
    """One row per group: the spoofing-aware metrics of its trials with a usable countermeasure score."""
    rows = []
    for grouping, value, mask in _groups(trials):
        subset = trials[mask & (trials["kind"] >= 0).to_numpy()]
        asv, cm = subset["score"].to_numpy(float), subset["cm_score"].to_numpy(float)
        row = spoofing_row(asv, cm, subset["kind"].to_numpy(np.int64), _resampled(subset, config))
        rows.append({"grouping": grouping, "group": value} | row)
    return rows


HEADLINE_GROUPS = 12  # groups the terminal's table shows (report.json and the report have them all)


def _interval(row: dict[str, Any], name: str) -> str:
    """``0.100 [0.057, 0.136]``, or the value alone when the row has no interval for it."""
    value, low, high = row.get(name), row.get(f"{name}_low"), row.get(f"{name}_high")
    if not isinstance(value, float):
        return "n/a"
    if isinstance(low, float) and isinstance(high, float) and np.isfinite([low, high]).all():
        return f"{value:.3f} [{low:.3f}, {high:.3f}]"
    return f"{value:.3f}"


def _headline(
    rows: list[dict[str, Any]], calibration_rows: list[dict[str, Any]], spoofing_rows: list[dict[str, Any]]
) -> list[str]:
    """The terminal's summary: one line per group (EER in its three variants with their intervals, minDCF at the
    declared costs, AUC), then the all-trials group's calibration and spoofing-aware metrics."""
    columns = ("eer_legacy", "eer_rocch", "eer_interp")
    table = [("group", "trials", *columns, "min_dcf", "auc")]
    for row in rows[:HEADLINE_GROUPS]:
        if "not_computable" in row:
            table.append((row["group"], str(row.get("trials", "")), row["not_computable"], "", "", "", ""))
            continue
        table.append(
            (row["group"], str(row["trials"]), *(_interval(row, name) for name in columns),
             f"{row['min_dcf']:.4f}", f"{row['auc']:.4f}")
        )  # fmt: skip
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() for line in table]
    if len(rows) > HEADLINE_GROUPS:
        lines.append(f"... {len(rows) - HEADLINE_GROUPS} more groups in report.json")
    pieces = []
    for row, names in (
        (calibration_rows[0] if calibration_rows else {}, ("min_cllr", "cllr", "act_dcf")),
        (spoofing_rows[0] if spoofing_rows else {}, ("sv_eer", "spf_eer", "sasv_eer", "a_dcf", "min_t_dcf", "t_eer")),
    ):
        pieces += [f"{name} {row[name]:.4f}" for name in names if isinstance(row.get(name), float)]
    return (lines if rows else []) + ([f"all trials: {', '.join(pieces)}"] if pieces else [])


def _source(path: Path, file_format: str, digest: Any, n_lines: int, header: int | None) -> dict[str, Any]:
    return {
        "path": str(path),
        "format": file_format,
        "sha256": digest.sha256,
        "blake3": digest.blake3,
        "n_lines": n_lines,
        "header_line": header,  # the number of a header line left out, if any
    }


def _join_section(joined: Joined, speakers_from: str) -> dict[str, Any]:
    c = joined.counts
    return {
        "id": "score-join",
        "title": "Scores joined to trials",
        "status": "fail" if has_errors(joined.flags) else "pass",
        "lines": [
            f"{c['trial_lines']} trials listed, {c['score_lines']} score lines; {c['trials_scored']} trials scored "
            f"and used. Joined by (enrol, test); {c['keys_without_audio_extension']} utterance ids compared "
            "without a trailing audio extension.",
            f"Speakers: {speakers_from}.",
        ],
        "table": [{"count": name.replace("_", " "), "value": value} for name, value in c.items()],
    }


TWO_WAY = "enrolment and test speakers (two-way)"
NO_SPEAKERS = "No intervals: the speakers of the trials are unknown (give --speakers utt2spk)."


def _intervals_line(rows: list[dict[str, Any]], config: ScoringConfig) -> str:
    """What the intervals are, said from the rows that carry them: the variants with an interval, the clusters
    resampled, the groups without one."""
    with_interval = [row for row in rows if any(f"eer_{m}_low" in row for m in EER_METHODS)]
    if not with_interval:
        return "No intervals: no group's bootstrap could be computed (see interval_not_computable per group)."
    variants = [m for m in EER_METHODS if any(row.get(f"eer_{m}_low") is not None for row in with_interval)]
    clusters = sorted({str(row["bootstrap_clusters"]) for row in with_interval})
    undefined = sum(int(row.get(f"eer_{m}_undefined_draws") or 0) for row in with_interval for m in variants)
    without = len(rows) - len(with_interval)
    return (
        f"Intervals: {config.level:.0%} bias-corrected percentile intervals (DESIGN section 4) of a speaker bootstrap "
        f"({config.n_resamples} resamples of {' / '.join(clusters)}, seed {config.seed}) for "
        f"{', '.join(f'eer_{m}' for m in variants)} in {len(with_interval)} of {len(rows)} groups"
        + (f" ({without} without: see interval_not_computable)" if without else "")
        + (f"; {undefined} draws with one class left undefined and counted" if undefined else "")
        + "."
    )


def _metrics_section(
    rows: list[dict[str, Any]], config: ScoringConfig, with_speakers: bool, unmapped: dict[str, int]
) -> dict[str, Any]:
    lines = [
        "EER in three variants (fractions): eer_legacy (the paper's roc_curve routine), eer_rocch (BOSARIS ROC "
        "convex hull), eer_interp (VoxSRC's linear crossing). "
        f"min_dcf: normalised minimum DCF at p_target {config.p_target}, c_miss {config.c_miss}, c_fa "
        f"{config.c_fa}. auc: ties count half.",
    ]
    lines.append(_intervals_line(rows, config) if with_speakers else NO_SPEAKERS)
    lines.append(f"{len(rows)} groups: the table is under Aggregates (metrics_per_group in report.json).")
    lines += [
        f"{count(n, 'scored trial')} {'has' if n == 1 else 'have'} no {column} in its map and "
        f"{'is' if n == 1 else 'are'} in no {column} group."
        for column, n in unmapped.items()
        if n
    ]
    return {
        "id": "score-metrics",
        "title": "How the metrics were computed",
        "status": "info",
        "lines": lines,
        "table": None,
    }


def _beyond_eer_section(dev: DevCalibration | None, with_cm: bool, config: ScoringConfig) -> dict[str, Any]:
    lines = [
        "min_cllr (bits): Cllr of the best monotone recalibration of the raw scores (PAV over tie groups), the "
        "discrimination part of Cllr; it needs no calibration. Calibration metrics cover the trials of "
        "metrics_per_group (a spoof trial counts as a non-target there)."
    ]
    if dev is None:
        lines.append(
            "No calibration declared (--calibration dev.txt): raw scores are not LLRs, so no Cllr or actDCF, and "
            "min_cllr is given without an interval."
        )
    elif dev.fit is None:
        lines.append(f"Calibration on {dev.dev.path} not used: {dev.not_fitted}.")
    else:
        lines.append(
            f"Calibration: llr = {dev.fit.scale:.6g} * score + {dev.fit.offset:.6g}, linear logistic regression at "
            f"prior {dev.fit.prior} on {dev.n_used} trials of {dev.dev.path} (sha256 {dev.dev.digest.sha256[:12]}; "
            f"{dev.n_non_finite} non-finite left out). cllr (bits) and act_dcf (at the Bayes threshold for "
            f"p_target {config.p_target}, c_miss {config.c_miss}, c_fa {config.c_fa}) are of these LLRs; "
            "cllr_minus_min_cllr and act_dcf_minus_min_dcf are what miscalibration costs."
        )
    if with_cm:
        lines.append(
            "Spoofing-aware metrics (spoofing_per_group): sv_eer, spf_eer, sasv_eer (rocch) and a_dcf (Shim et al. "
            "2024 costs: priors 0.9/0.05/0.05, Cmiss 1, Cfa_asv 10, Cfa_cm 20) of the ASV score; cm_eer of the "
            "countermeasure (bona fide against spoofs); min_t_dcf (ASVspoof 2019 constants, ASV at its EER "
            "threshold) and t_eer (concurrent tandem EER) of the two. Intervals: the same enrolment-speaker "
            f"bootstrap ({config.n_resamples} resamples, seed {config.seed})."
        )
    return {"id": "score-beyond-eer", "title": "Calibration and spoofing-aware metrics", "status": "info",
            "lines": lines, "table": None}  # fmt: skip


def audit_scores(
    trials: Path,
    scores: Path,
    *,
    score_format: ScoreFormat | None = None,
    trial_format: TrialFormat | None = None,
    speakers: Path | None = None,
    subgroups: Path | None = None,
    conditions: Path | None = None,
    cm_scores: Path | None = None,
    calibration: Path | None = None,
    config: ScoringConfig | None = None,
) -> dict[str, Any]:
    """The report of one trial list and its score file. Unreadable input raises InputError (exit 2).

    Args:
        trials: a VoxCeleb (``<1|0> <enrol> <test>``) or Kaldi (``<enrol> <test> target|nontarget``) trial list.
        scores: a Kaldi, VoxCeleb, WeSpeaker or SpeechBrain score file.
        score_format: the score file's layout (detected from its first line when None).
        trial_format: the trial list's layout (detected when None).
        speakers: an utt2spk map (default: the speaker of VoxCeleb ids ``idNNNNN/...``).
        subgroups: speaker -> subgroup (``spk2gender`` style; a trial takes its enrolment speaker's).
        conditions: utterance -> condition (a trial takes its test utterance's).
        cm_scores: a countermeasure score file ``<enrol> <test> <cm score> <bonafide|spoof>`` (spoofing-aware
            metrics per group).
        calibration: a labelled development score file (wespeaker or speechbrain layout) to fit a linear logistic
            calibration on (Cllr and actDCF per group); it must score none of the listed trials.
        config: the minDCF operating point, resamples and seed.

    Returns:
        The report dict (``verdict``, ``flags``, ``aggregates`` with the metrics per group, ``sections``).

    Example:
        >>> import pathlib, tempfile
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> pairs = [("1", "a", "b"), ("0", "a", "c"), ("1", "c", "d"), ("0", "c", "b")]
        >>> _ = (folder / "trials.txt").write_text("".join(f"{k} {e} {t}\\n" for k, e, t in pairs))
        >>> lines = [f"{e} {t} {s}\\n" for (_, e, t), s in zip(pairs, (0.8, 0.4, 0.35, 0.1))]
        >>> _ = (folder / "scores.txt").write_text("".join(lines))
        >>> report = audit_scores(folder / "trials.txt", folder / "scores.txt")
        >>> overall = report["aggregates"]["metrics_per_group"][0]
        >>> overall["eer_rocch"], overall["eer_legacy"], overall["auc"]
        (0.25, 0.5, 0.75)
    """
    config = config or ScoringConfig()
    vocabulary = Vocabulary()  # one code space for the utterance ids of every file joined
    trial_list = read_trial_list(Path(trials), trial_format, vocabulary)
    score_file = read_score_file(Path(scores), score_format, vocabulary)
    cm_file = read_cm_score_file(Path(cm_scores), vocabulary) if cm_scores is not None else None
    dev = fit_dev_calibration(read_score_file(Path(calibration), None, vocabulary)) if calibration is not None else None
    speaker_map = read_map(speakers, "a speaker map", "<utterance> <speaker>") if speakers else None
    joined = join(trial_list, score_file)
    flags = list(joined.flags)
    scored = joined.trials
    if cm_file is not None:
        scored, cm_flags = attach_countermeasure(scored, cm_file)
        flags += cm_flags
    used, speakers_from = speakers_of(scored, speaker_map, speakers)
    if used is None:
        flags.append(_flag("speakers-unknown", Severity.WARNING, f"No speaker-cluster intervals: {speakers_from}."))
        used = scored
    else:
        flags += [flag for flag in [flag_speaker_labels(used)] if flag is not None]
    if subgroups is not None:
        if "enrol_speaker" not in used:
            raise InputError(str(subgroups), "subgroups map speakers, but the trials' speakers are unknown")
        used = used.assign(
            subgroup=used["enrol_speaker"].map(read_map(subgroups, "a subgroup map", "<speaker> <subgroup>"))
        )
    if conditions is not None:
        condition_map = read_map(conditions, "a condition map", "<utterance> <condition>")
        used = used.assign(condition=used["test_utt"].map(condition_map))
    with_speakers = "enrol_speaker" in used
    unmapped = {column: int(used[column].isna().sum()) for column in ("subgroup", "condition") if column in used}
    rows = group_metrics(used, config, with_speakers) if len(used) else []
    if not rows or "not_computable" in rows[0]:
        why = rows[0]["not_computable"] if rows else "no trial has a finite score"
        flags.append(_flag("metrics-not-computable", Severity.ERROR, f"The metrics of all trials: {why}."))
    aggregates: dict[str, Any] = {"metrics_per_group": rows}
    if dev is not None:
        overlap = calibration_overlap(trial_list, dev.dev)
        flags += [flag for flag in (overlap,) if flag is not None]
        if dev.fit is None:
            flags.append(_flag("calibration-not-fitted", Severity.ERROR, f"No calibration: {dev.not_fitted}."))
        if overlap is not None:
            dev = DevCalibration(
                dev.dev, dev.n_used, dev.n_non_finite, None, "the development file scores listed trials"
            )
    aggregates["calibration_per_group"] = calibration_metrics(used, config, dev) if len(used) else []
    flags += [flag for flag in (flag_poor_calibration(aggregates["calibration_per_group"]),) if flag is not None]
    if cm_file is not None:
        aggregates["spoofing_per_group"] = spoofing_metrics(used, config) if len(used) else []
    report = {
        "tool": {"name": TOOL_NAME, "version": tool_version()},
        "source": _source(
            score_file.path, score_file.format, score_file.digest, len(score_file.frame), score_file.header
        )
        | {
            "n_rows": joined.counts["trials_scored"],
            "trials": _source(
                trial_list.path, trial_list.format, trial_list.digest, len(trial_list.frame), trial_list.header
            ),
        },
        "verdict": "fail" if has_errors(flags) else "pass",
        "config": config.as_dict()
        | {"calibration": dev.as_dict() if dev is not None else None}
        | {
            "countermeasure": _source(cm_file.path, "cm", cm_file.digest, len(cm_file.frame), cm_file.header)
            if cm_file
            else None
        },
        "flags": [flag.as_dict() for flag in flags],
        "headline": _headline(rows, aggregates["calibration_per_group"], aggregates.get("spoofing_per_group", [])),
        "aggregates": aggregates,
        "curves": group_curves(used, rows),
        "claims": [],
        "sections": [
            _join_section(joined, speakers_from),
            _metrics_section(rows, config, with_speakers, unmapped),
            _beyond_eer_section(dev, cm_file is not None, config),
        ],
    }
    return json_safe(report)
