"""Speakers under stress (audit.statistics.menagerie): on a generator of this module's own with planted goats (low
target scores), lambs (attract false accepts as enrolment side) and wolves (cause them as test side), and speakers
whose target scores a condition drops, the rule fixed on the clean reference finds the planted categories and
exactly the planted changes; the per-speaker figures against a hand count."""

from __future__ import annotations

import numpy as np
import pytest

from audit.statistics import ScoredRecord
from audit.statistics.menagerie import category, eer_threshold, menagerie, speaker_table
from schemas import keyed_rows

N_SPEAKERS = 40
GOATS, LAMBS, WOLVES = {0, 1, 2, 3}, {10, 11, 12, 13}, {20, 21, 22, 23}
STRESSED = {30, 31, 32, 33}  # sheep in clean whose targets the condition drops


def simulate(seed: int, dropped: set[int]) -> ScoredRecord:
    """Per speaker 39 targets N(2 + t_s, 0.5) and a non-target N(-2 + e_s + w_t, 0.5) against each other speaker t (s
    enrolled): ``t_s`` -3 for goats and the ``dropped`` speakers, ``e_s`` +5 for lambs, ``w_t`` +5 for wolves, 0
    otherwise. Every speaker meets every other once, so the planted speakers' trials are the same in every record."""
    rng = np.random.default_rng(seed)
    target_shift = np.array([-3.0 if s in GOATS | dropped else 0.0 for s in range(N_SPEAKERS)])
    enrol_shift = np.array([5.0 if s in LAMBS else 0.0 for s in range(N_SPEAKERS)])
    test_shift = np.array([5.0 if s in WOLVES else 0.0 for s in range(N_SPEAKERS)])
    own = np.repeat(np.arange(N_SPEAKERS), N_SPEAKERS - 1)
    other = (own + np.tile(np.arange(1, N_SPEAKERS), N_SPEAKERS)) % N_SPEAKERS
    targets = 2.0 + target_shift[own] + rng.normal(0, 0.5, own.size)
    nontargets = -2.0 + enrol_shift[own] + test_shift[other] + rng.normal(0, 0.5, own.size)
    names = np.asarray([f"s{s:02d}" for s in range(N_SPEAKERS)])
    labels = np.r_[np.ones(own.size, bool), np.zeros(own.size, bool)]
    key = {"condition": "stressed" if dropped else "clean"}
    return ScoredRecord(key, np.r_[targets, nontargets], labels, names[np.r_[own, own]], names[np.r_[own, other]])


def test_the_planted_menagerie_and_exactly_the_planted_changes() -> None:
    result = menagerie(simulate(1, set()), [simulate(2, STRESSED)])
    named = {f"s{s:02d}" for s in range(N_SPEAKERS)}
    categories = {speaker: row["category"] for speaker, row in keyed_rows(result["speakers"]).items()}
    found = {kind: {s for s, c in categories.items() if kind in c.split("+")} for kind in ("goat", "lamb", "wolf")}
    assert found == {kind: {f"s{s:02d}" for s in planted} for kind, planted in
                     (("goat", GOATS), ("lamb", LAMBS), ("wolf", WOLVES))}  # fmt: skip
    assert {s for s, c in categories.items() if c == "sheep"} == named - set().union(*found.values())
    (stressed,) = result["stressed"]
    assert [(c["speaker"], c["clean"], c["stressed"]) for c in stressed["changes"]] == [
        (f"s{s:02d}", "sheep", "goat") for s in sorted(STRESSED)
    ]


def test_the_per_speaker_figures_against_a_hand_count() -> None:
    """a enrolled: targets 0.9, 0.7 (mean 0.8), non-targets against b 0.6 and 0.2; b enrolled: target 0.4, non-target
    against a 0.5. At threshold 0.5: a's enrolment-side share 1/2, b's 1/1; a's test-side share 1/1, b's 1/2."""
    record = ScoredRecord(
        {}, np.array([0.9, 0.7, 0.6, 0.2, 0.4, 0.5]), np.array([1, 1, 0, 0, 1, 0], bool),
        np.array(["a", "a", "a", "a", "b", "b"]), np.array(["a", "a", "b", "b", "b", "a"]),
    )  # fmt: skip
    table = speaker_table(record, 0.5)
    assert table["a"] == {"target_mean": pytest.approx(0.8), "n_target": 2, "fa_enrol": 0.5, "n_nontarget_enrol": 2,
                          "fa_test": 1.0, "n_nontarget_test": 1}  # fmt: skip
    assert table["b"]["fa_enrol"] == 1.0 and table["b"]["fa_test"] == 0.5 and table["b"]["target_mean"] == 0.4
    assert eer_threshold(record.scores, record.labels) == 0.6
    assert category(table["a"], {"goat": 0.5, "lamb": 0.9, "wolf": 0.9}) == "wolf"


def test_the_per_speaker_figures_equal_one_mask_per_speaker() -> None:
    """The table counted by speaker codes equals the definition applied speaker by speaker (a mask per speaker and
    side over every trial), float for float, on random records with ties, one-sided speakers and few trials."""
    rng = np.random.default_rng(43)
    for _ in range(60):
        n, k = int(rng.integers(1, 400)), int(rng.integers(1, 30))
        names = np.array([f"s{i}" for i in range(k)])
        scores, labels = np.round(rng.normal(size=n), 2), rng.random(n) < rng.random()
        enrol, test = names[rng.integers(0, k, n)], names[rng.integers(0, max(1, k // 2), n)]
        threshold = float(rng.normal())
        expected = {}
        for speaker in sorted({*enrol.tolist(), *test.tolist()}):
            own, enrolled = labels & (enrol == speaker), ~labels & (enrol == speaker)
            tested, accepted = ~labels & (test == speaker), scores >= threshold
            expected[speaker] = {
                "target_mean": float(scores[own].mean()) if own.any() else None, "n_target": int(own.sum()),
                "fa_enrol": float(accepted[enrolled].mean()) if enrolled.any() else None,
                "n_nontarget_enrol": int(enrolled.sum()),
                "fa_test": float(accepted[tested].mean()) if tested.any() else None,
                "n_nontarget_test": int(tested.sum()),
            }  # fmt: skip
        assert speaker_table(ScoredRecord({}, scores, labels, enrol, test), threshold) == expected


def test_a_measure_missing_on_one_side_is_no_change() -> None:
    """A lamb in clean with no non-target trial as enrolment side under stress is judged on the other measures only
    there and here alike: no change is made of a missing measure."""
    cuts = {"goat": 0.3, "lamb": 0.1, "wolf": 0.1}
    clean = {"target_mean": 0.5, "fa_enrol": 0.9, "fa_test": 0.0}
    stressed = {"target_mean": 0.6, "fa_enrol": None, "fa_test": 0.0}
    assert category(clean, cuts) == "lamb"
    assert category(clean, cuts, stressed) == category(stressed, cuts, clean) == "sheep"


def test_each_record_writes_its_speakers_as_one_table() -> None:
    """Column names once and a list a speaker (report.json of a paper-scale bundle holds thousands of speakers), the
    category first after the speaker, the measures as ``speaker_table`` gives them."""
    reference, stressed = simulate(1, set()), simulate(2, STRESSED)
    result = menagerie(reference, [stressed])
    columns = ["speaker", "category", "target_mean", "n_target", "fa_enrol", "n_nontarget_enrol", "fa_test",
               "n_nontarget_test"]  # fmt: skip
    for record, table in ((reference, result["speakers"]), (stressed, result["stressed"][0]["speakers"])):
        assert table["columns"] == columns and len(table["rows"]) == N_SPEAKERS
        measures = speaker_table(record, result["threshold"])
        for speaker, *cells in table["rows"]:
            assert dict(zip(columns[2:], cells[1:], strict=True)) == measures[speaker]
    rows = keyed_rows(result["stressed"][0]["speakers"])
    assert [rows[f"s{s:02d}"]["category"] for s in sorted(STRESSED)] == ["goat"] * len(STRESSED)


@pytest.mark.parametrize("numbered", [False, True])
def test_categories_and_changes_follow_the_rule_speaker_by_speaker(numbered: bool) -> None:
    """The categories and changes, counted over arrays, are ``category`` applied row by row to ``speaker_table``'s
    rows (each judged on the measures both records have) on random records: speakers missing from one record, a
    measure missing on one side, cuts at 0 and absent cuts, speakers named by text or by numbers."""
    rng = np.random.default_rng(int(numbered))
    for _ in range(40):
        records = []
        for _ in range(2):
            n, k = int(rng.integers(1, 300)), int(rng.integers(1, 25))
            names = np.arange(k) * 7 if numbered else np.array([f"s{i}" for i in range(k)])
            labels = rng.random(n) < rng.random()
            enrol, test = names[rng.integers(0, k, n)], names[rng.integers(0, max(1, k // 2), n)]
            records.append(ScoredRecord({}, np.round(rng.normal(size=n), 1), labels, enrol, test))
        if not (records[0].labels.any() and (~records[0].labels).any()):
            continue
        result = menagerie(records[0], [records[1]], quantiles=(float(rng.random()), float(rng.choice([0.5, 1.0]))))
        cuts, threshold = result["cuts"], result["threshold"]
        clean, stressed = (speaker_table(record.scored(), threshold) for record in records)
        for table, written in ((clean, result["speakers"]), (stressed, result["stressed"][0]["speakers"])):
            assert {row[0]: row[1] for row in written["rows"]} == {s: category(row, cuts) for s, row in table.items()}
        expected = []
        for speaker in sorted(set(clean) & set(stressed)):
            before, after = (
                category(clean[speaker], cuts, stressed[speaker]),
                category(stressed[speaker], cuts, clean[speaker]),
            )
            if before != after:
                expected.append({"speaker": speaker, "clean": before, "stressed": after})
        assert result["stressed"][0]["changes"] == expected
