"""The trial-design audit (issue 41): each rule fires on a planted confound, names where and what it measured, and
stays silent on a clean design."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit.bundle import LoadedFiles, design_audit
from audit.table.contrasts import Contrast, Term
from schemas import Analysis, Severity

CONDITIONS = ("clean", "noise", "codec", "noise+codec")


def trial_list(
    seed: int, *, speakers: int = 8, trials: int = 120, target_every: int = 3, prefix: str = ""
) -> pd.DataFrame:
    """A list of ``trials`` trials between ``speakers`` speakers, every ``target_every``-th a target; utterance ids
    carry ``prefix`` so that lists can have their own recordings."""
    rng = np.random.default_rng(seed)
    rows = []
    for index in range(trials):
        enrol = int(rng.integers(speakers))
        target = index % target_every == 0
        test = enrol if target else int((enrol + rng.integers(1, speakers)) % speakers)
        rows.append(
            {"trial_index": index, "enrol_utt": f"{prefix}s{enrol}-e{index}", "test_utt": f"{prefix}s{test}-t{index}",
             "label": int(target), "enrol_speaker": f"s{enrol}", "test_speaker": f"s{test}"}
        )  # fmt: skip
    return pd.DataFrame(rows)


def corpus(
    lists: dict[str, pd.DataFrame], seconds: dict[str, float] | None = None, sessions: bool = False
) -> pd.DataFrame:
    """A corpus table of every utterance the lists name: 3 s each, or ``seconds[list_id]`` for a list's own."""
    rows = {}
    for list_id, trials in lists.items():
        for side in ("enrol", "test"):
            for utt, speaker in zip(trials[f"{side}_utt"], trials[f"{side}_speaker"], strict=True):
                rows[utt] = {"speaker": speaker, "duration_s": str((seconds or {}).get(list_id, 3.0)),
                             "session": f"{speaker}-one" if sessions else None}  # fmt: skip
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("utt_id")


def design(lists: dict[str, pd.DataFrame], of_condition: dict[str, str], **corpus_options: object):
    """Results rows (one encoder, one record per condition), the files and each record's list."""
    rows = pd.DataFrame(
        [{"record_id": f"r-{c}", "experiment": "E1", "corpus": "c", "condition": c, "model": "m"} for c in CONDITIONS]
    )
    files = LoadedFiles(trial_lists=lists, corpus_tables={"c": corpus(lists, **corpus_options)})  # type: ignore[arg-type]
    return rows, files, {f"r-{c}": of_condition[c] for c in CONDITIONS}


def contrast(of_condition: dict[str, str]) -> Contrast:
    terms = tuple(Term(f"r-{c}", 0.1, 40, 80, "f", of_condition[c], None) for c in CONDITIONS)
    return Contrast("E1", "m", "c", None, "noise", "noise", "codec", "codec", terms)  # type: ignore[arg-type]


def fired(flags, flag_id: str):
    return next((flag for flag in flags if flag.id == flag_id), None)


def test_a_clean_design_fires_no_rule() -> None:
    lists = {"L": trial_list(1)}
    matched = dict.fromkeys(CONDITIONS, "L")
    rows, files, of = design(lists, matched)
    flags, section = design_audit(rows, [contrast(matched)], files, of, Analysis())
    assert flags == [] and section["status"] == "pass" and section["lines"][-1] == "No rule fires."
    ratios = [
        row["measured"] for row in section["table"] if row["rule"] in ("duration-confound", "target-ratio-spread")
    ]
    assert all(text.endswith("= 1.000") for text in ratios) and len(ratios) == 2


@pytest.mark.parametrize(("longer", "severity"), [(1.2, None), (1.4, Severity.WARNING), (1.7, Severity.ERROR)])
def test_clip_duration_tracking_the_condition_warns_from_1_3_and_fails_from_1_6(longer: float, severity) -> None:
    """The noisy condition's list has its own recordings, ``longer`` times as long: the median ratio is exactly that."""
    lists = {"L": trial_list(1), "N": trial_list(1, prefix="n-")}
    of = dict.fromkeys(CONDITIONS, "L") | {"noise": "N"}
    rows, files, of = design(lists, of, seconds={"L": 2.0, "N": 2.0 * longer})
    flags, _ = design_audit(rows, [], files, of, Analysis())
    flag = fired(flags, "duration-confound")
    if severity is None:
        assert flag is None
        return
    assert flag is not None and flag.severity is severity and flag.records == ("r-noise", "r-clean")
    assert f"({'noise'}) over 2.000 (clean) = {longer:.3f}" in flag.message and "E1/c" in flag.message


def test_the_duration_thresholds_are_the_declared_ones() -> None:
    lists = {"L": trial_list(1), "N": trial_list(1, prefix="n-")}
    rows, files, of = design(lists, dict.fromkeys(CONDITIONS, "L") | {"noise": "N"}, seconds={"N": 3.0 * 1.4})
    flags, _ = design_audit(rows, [], files, of, Analysis(duration_ratio_warn=1.5, duration_ratio_error=2.0))
    assert fired(flags, "duration-confound") is None


def test_a_target_ratio_that_drifts_between_conditions_fires_from_1_5() -> None:
    """One target in 3 trials (1:2) against one in 5 (1:4): a spread of exactly 2."""
    lists = {"L": trial_list(1, target_every=3), "S": trial_list(2, target_every=5)}
    rows, files, of = design(lists, dict.fromkeys(CONDITIONS, "L") | {"codec": "S"})
    flags, _ = design_audit(rows, [], files, of, Analysis())
    flag = fired(flags, "target-ratio-spread")
    assert flag is not None and flag.severity is Severity.WARNING
    assert "target:non-target 0.500 (noise+codec) over 0.250 (codec) = 2.000" in flag.message
    assert fired(design_audit(rows, [], files, of, Analysis(target_ratio_spread=2.5))[0], "target-ratio-spread") is None


def test_terms_scored_against_other_impostors_fire_with_their_overlap() -> None:
    """The noisy terms' list has impostors s0-s5 only, the others s0-s7: 6 of 8 impostors shared."""
    wide = trial_list(1)
    narrow = trial_list(1, speakers=6, prefix="n-")
    lists = {"L": wide, "N": narrow}
    of = {"clean": "L", "noise": "N", "codec": "L", "noise+codec": "N"}
    rows, files, of_record = design(lists, of)
    flags, _ = design_audit(rows, [contrast(of)], files, of_record, Analysis())
    flag = fired(flags, "impostor-pool-differs")
    assert flag is not None and "E1/m/c/noise+codec: overlap 0.750" in flag.message
    assert set(flag.records) == {f"r-{c}" for c in CONDITIONS}
    silent, _ = design_audit(rows, [contrast(of)], files, of_record, Analysis(impostor_overlap_min=0.7))
    assert fired(silent, "impostor-pool-differs") is None


def test_one_recording_on_both_sides_is_an_error_and_one_session_a_warning() -> None:
    planted = trial_list(1)
    planted.loc[3, "test_utt"] = planted.loc[3, "enrol_utt"]  # trial 3 is a target: its own recording as test
    rows, files, of = design({"L": planted}, dict.fromkeys(CONDITIONS, "L"))
    flag = fired(design_audit(rows, [], files, of, Analysis())[0], "same-source-trials")
    assert flag is not None and flag.severity is Severity.ERROR and "1 of 120 trials" in flag.message
    rows, files, of = design({"L": trial_list(1)}, dict.fromkeys(CONDITIONS, "L"), sessions=True)
    flag = fired(design_audit(rows, [], files, of, Analysis())[0], "same-source-trials")
    assert flag is not None and flag.severity is Severity.WARNING and "40 target trials" in flag.message
