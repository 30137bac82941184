"""Small synthetic artefact bundles, built by code, following DESIGN.md section 3 and the contracts of section
10.

One factorial experiment (E13: noise x codec) on one corpus, two encoders, so eight records forming two
contrasts. Scores are drawn with a fixed seed; every row's metrics are computed here by independent oracles
(sklearn's roc_curve snippet for the legacy EER, a brute-force threshold sweep for minDCF, sklearn's
roc_auc_score), never by the code under test.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import blake3
import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score, roc_curve

from provenance import bytes_digest, card_bytes, croissant_card
from provenance.keys import generate_keypair
from provenance.manifest import ManifestResult, write_manifest
from schemas.bundle import json_file_bytes

RUN_ID = "run-synthetic-0001"
MODELS = ("m1", "m2")
LEVELS = (("none", "none"), ("babble", "none"), ("none", "opus"), ("babble", "opus"))
P_TARGET, C_MISS, C_FA = 0.01, 1.0, 1.0
RUN_CONFIG = {"experiments": ["E13"], "seed": 7, "p_target": P_TARGET, "encoders": list(MODELS)}


@dataclass(frozen=True)
class Names:
    """The names a bundle gives its encoders, condition levels (``LEVELS`` renamed, ``none`` the reference),
    speakers (``s0``.. by index) and corpus, written the same in every file that holds them; record ids and file
    names stay those of the default names (``MODELS``, ``LEVELS``)."""

    models: tuple[str, ...] = MODELS
    levels: dict[str, str] = field(default_factory=dict)  # default level name -> its name in the bundle
    speakers: tuple[str, ...] = ()  # speaker k's name, else s<k>
    corpus: str = "synthetic"

    def speaker(self, index: int) -> str:
        return self.speakers[index] if index < len(self.speakers) else f"s{index}"

    def level(self, level: str) -> str:
        return self.levels.get(level, level)


def legacy_eer_oracle(scores: np.ndarray, labels: np.ndarray) -> float:
    """The paper's routine, exactly as issue 2 quotes it."""
    fpr, tpr, _ = roc_curve(labels, scores)
    fnr = 1 - tpr
    index = np.nanargmin(np.abs(fnr - fpr))
    return float((fpr[index] + fnr[index]) / 2)


def min_dcf_oracle(scores: np.ndarray, labels: np.ndarray) -> float:
    """Normalised minDCF by sweeping every threshold (accept when score >= threshold)."""
    targets, nontargets = scores[labels == 1], scores[labels == 0]
    best = np.inf
    for threshold in [*np.unique(scores), np.inf]:
        p_miss = np.mean(targets < threshold)
        p_fa = np.mean(nontargets >= threshold)
        best = min(best, C_MISS * P_TARGET * p_miss + C_FA * (1 - P_TARGET) * p_fa)
    return float(best / min(C_MISS * P_TARGET, C_FA * (1 - P_TARGET)))


def trial_list_csv(seed: int, n_speakers: int = 6, n_trials: int = 160, names: Names | None = None) -> bytes:
    """A trial list: speakers s0.. (or as ``names`` calls them), utterances s<k>-u<j>, about a third target
    trials."""
    speaker = (names or Names()).speaker
    rng = np.random.default_rng(seed)
    rows = []
    for index in range(n_trials):
        enrol = int(rng.integers(n_speakers))
        target = index % 3 == 0
        test = enrol if target else int((enrol + rng.integers(1, n_speakers)) % n_speakers)
        rows.append(
            {
                "trial_index": index,
                "enrol_utt": f"s{enrol}-u{index}a",
                "test_utt": f"s{test}-u{index}b",
                "label": int(target),
                "enrol_speaker": speaker(enrol),
                "test_speaker": speaker(test),
                "subgroup": "gender=F" if enrol % 2 else "gender=M",
            }
        )
    return pd.DataFrame(rows).to_csv(index=False).encode()


def scores_frame(labels: np.ndarray, seed: int, separation: float) -> pd.DataFrame:
    """Per-trial scores in trial-list order; two trials fail to decode (NaN, status test-failed)."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(0.0, 1.0, len(labels)) + separation * labels
    status = np.array(["scored"] * len(labels), dtype=object)
    status[[4, 11]] = "test-failed"
    scores[[4, 11]] = np.nan
    return pd.DataFrame(
        {
            "trial_index": np.arange(len(labels), dtype=np.int64),
            "label": labels.astype(np.int8),
            "score": scores.astype(np.float64),
            "status": status,
        }
    )


@dataclass
class SyntheticBundle:
    """A written bundle, the key pair outside it, and what was written."""

    root: Path
    private_key: Path
    public_key: Path
    manifest: ManifestResult
    results: pd.DataFrame
    trial_list_ids: list[str] = field(default_factory=list)

    def read_results(self) -> pd.DataFrame:
        return pd.read_csv(self.root / "results.csv", dtype={"record_id": str, "trial_list_id": str})

    def read_trial_utterances(self) -> list[str]:
        """Every utterance the trial lists name, enrolment and test side."""
        lists = [pd.read_csv(self.root / "trials" / f"{list_id}.csv", dtype=str) for list_id in self.trial_list_ids]
        return [utt for trials in lists for side in ("enrol_utt", "test_utt") for utt in trials[side]]


def _write_trial_list(root: Path, seed: int, names: Names) -> tuple[str, np.ndarray]:
    data = trial_list_csv(seed, names=names)
    list_id = blake3.blake3(data).hexdigest()[:16]
    (root / "trials").mkdir(exist_ok=True)
    (root / "trials" / f"{list_id}.csv").write_bytes(data)
    return list_id, pd.read_csv(root / "trials" / f"{list_id}.csv")["label"].to_numpy()


def _write_corpus_table(root: Path, edit: Callable[[pd.DataFrame], pd.DataFrame] | None) -> None:
    """corpus/utterances.csv: every utterance the trial lists name, with its speaker (``edit`` may break it)."""
    sides = [
        pd.read_csv(path, dtype=str)[[f"{side}_utt", f"{side}_speaker"]].set_axis(["utt_id", "speaker"], axis=1)
        for path in sorted((root / "trials").glob("*.csv"))
        for side in ("enrol", "test")
    ]
    table = pd.concat(sides).drop_duplicates("utt_id").sort_values("utt_id").reset_index(drop=True)
    table = table.assign(path=table["utt_id"] + ".wav", duration_s=1.0, sample_rate=16000, blake3="0" * 64)
    (root / "corpus").mkdir()
    (edit(table) if edit else table).to_csv(root / "corpus" / "utterances.csv", index=False)


def build_bundle(
    tmp_path: Path,
    *,
    signed: bool = True,
    odd_trial_list_record: str | None = None,
    fallback_record: str | None = None,
    corpus_table_edit: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
    analysis: str | None = None,
    results_edit: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
    names: Names | None = None,
) -> SyntheticBundle:
    """Write a complete bundle under ``tmp_path/bundle`` and its keys under ``tmp_path/keys``.

    ``odd_trial_list_record`` scores that record on a second trial list (an unmatched contrast term);
    ``fallback_record`` gives that record's noise chain three fallbacks; ``corpus_table_edit`` changes the
    corpus table before the bundle is signed; ``analysis`` is the body of a ``config.toml`` ``[analysis]`` table;
    ``results_edit`` changes the results table before it is written and signed; ``names`` names the encoders,
    levels, speakers and corpus in every file (``Names``).
    """
    names = names or Names()
    root = tmp_path / "bundle"
    (root / "scores").mkdir(parents=True)
    keys = tmp_path / "keys"
    private_key, public_key = keys / "run.key", keys / "run.pub"
    generate_keypair(private_key, public_key)

    main_list, main_labels = _write_trial_list(root, seed=1, names=names)
    trial_list_ids = [main_list]
    odd_list, odd_labels = (None, None)
    if odd_trial_list_record is not None:
        odd_list, odd_labels = _write_trial_list(root, seed=2, names=names)
        trial_list_ids.append(odd_list)

    checkpoints = {
        model: {
            "kind": "synthetic",
            "class": "Identity",
            "checkpoint_blake3": blake3.blake3(model.encode()).hexdigest(),
        }
        for model in names.models
    }
    chains: dict[str, dict[str, Any]] = {
        "noise-babble": {
            "spec": [{"name": "babble", "kwargs": {"snr_db": "5"}}],
            "applied": 0,
            "failed": 0,
            "fallback": 0,
            "reasons": {},
        },
        "codec-opus": {
            "spec": [{"name": "opus", "kwargs": {"bitrate": 12000}}],
            "applied": 0,
            "failed": 0,
            "fallback": 0,
            "reasons": {},
        },
    }
    records: dict[str, dict] = {}
    rows = []
    for model_index, model in enumerate(names.models):
        for level_index, (level_a, level_b) in enumerate(LEVELS):
            record_id = f"E13-{MODELS[model_index]}-{level_a}-{level_b}"
            list_id, labels = (odd_list, odd_labels) if record_id == odd_trial_list_record else (main_list, main_labels)
            assert list_id is not None and labels is not None
            frame = scores_frame(labels, seed=100 + 10 * model_index + level_index, separation=2.5 - 0.4 * level_index)
            frame.to_parquet(root / "scores" / f"{record_id}.parquet", index=False)
            scored = frame[frame["status"] == "scored"]
            scores, scored_labels = scored["score"].to_numpy(), scored["label"].to_numpy()
            record_chains = [c for c, lvl in (("noise-babble", level_a), ("codec-opus", level_b)) if lvl != "none"]
            fallback = 3 if record_id == fallback_record else 0
            for chain in record_chains:
                chains[chain]["applied"] += len(labels) - fallback * (chain == "noise-babble")
                if chain == "noise-babble" and fallback:
                    chains[chain]["fallback"] += fallback
                    chains[chain]["reasons"] = {"noise file too short": fallback}
            records[record_id] = {
                "chains": record_chains,
                "applied": len(labels) * len(record_chains) - fallback,
                "failed": int((frame["status"] != "scored").sum()),  # the test sides of the two failed trials
                "fallback": fallback,
            }
            rows.append(
                {
                    "record_id": record_id,
                    "experiment": "E13",
                    "model": model,
                    "corpus": names.corpus,
                    "condition": f"{names.level(level_a)}+{names.level(level_b)}",
                    "factor_a": "noise",
                    "level_a": names.level(level_a),
                    "factor_b": "codec",
                    "level_b": names.level(level_b),
                    "eer": legacy_eer_oracle(scores, scored_labels),
                    "eer_method": "legacy",
                    "min_dcf": min_dcf_oracle(scores, scored_labels),
                    "auc": float(roc_auc_score(scored_labels, scores)),
                    "p_target": P_TARGET,
                    "c_miss": C_MISS,
                    "c_fa": C_FA,
                    "n_target": int(scored_labels.sum()),
                    "n_nontarget": int((scored_labels == 0).sum()),
                    "checkpoint_blake3": checkpoints[model]["checkpoint_blake3"],
                    "trial_list_id": list_id,
                    "scores_blake3": blake3.blake3((root / "scores" / f"{record_id}.parquet").read_bytes()).hexdigest(),
                    "run_id": RUN_ID,
                }
            )
    results = pd.DataFrame(rows)
    if results_edit is not None:
        results = results_edit(results)
    results.to_csv(root / "results.csv", index=False)
    (root / "checkpoints.json").write_text(json.dumps(checkpoints, indent=2))
    (root / "operators.json").write_text(
        json.dumps({"policy": "drop-trial", "chains": chains, "records": records}, indent=2)
    )
    (root / "environment.json").write_bytes(json_file_bytes({"python": {"version": "3.11"}, "seeds": {"global": 7}}))
    _write_corpus_table(root, corpus_table_edit)
    if analysis is not None:
        (root / "config.toml").write_text(f"seed = 7\n\n[analysis]\n{analysis}\n")
    run_config = RUN_CONFIG | {"encoders": list(names.models)}
    manifest = write_manifest(root, run_config, private_key if signed else None)
    return SyntheticBundle(root, private_key, public_key, manifest, results, trial_list_ids)


def with_croissant_card(bundle: SyntheticBundle, edit: Any = None) -> dict[str, Any]:
    """Write the bundle's card from its statement's files (``edit`` may change it) and sign the bundle again."""
    statement = json.loads((bundle.root / "provenance" / "statement.json").read_bytes())
    digests = {s["name"]: bytes_digest((bundle.root / s["name"]).read_bytes()) for s in statement["subject"]}
    card = croissant_card(bundle.root, digests, "run-synthetic-0001", "0.1.0", {"chains": {"noise-babble": {}}})
    if edit is not None:
        edit(card)
    (bundle.root / "croissant.json").write_bytes(card_bytes(card))
    write_manifest(bundle.root, RUN_CONFIG, bundle.private_key)
    return card
