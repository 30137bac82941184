"""A spoofing PROXY for the embedded default: a spoof folder of WORLD vocoder resyntheses of the default corpus.

Each file is one genuine utterance of a speaker passed through the ``world_conversion`` operator (WORLD analysis
and resynthesis, F0 x ``pitch_ratio``, formants x ``formant_ratio``; ``runner.operators.conversion``) and imitates
that speaker: vocoded speech of the target speaker's own voice, the artefact a countermeasure is trained to
detect. It is signal processing, not a spoofing system: no model of the speaker is involved, and the folder's
system name, its build manifest and the report say ``proxy``.

The folder is a spoof folder as ``runner.corpora.spoof`` reads it (``manifest.csv``: path, system,
system_version, target_speaker, source_speaker). ``per_speaker`` utterances of each speaker are taken, the first
by utterance id; 16 kHz 16-bit WAV. The build is deterministic (WORLD has no random stream; sorted inputs) and
cached: ``build-manifest.json`` records the genuine table's digest, the parameters and pyworld's version, and a
later call with the same inputs returns the existing table.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import soundfile

from provenance import atomic_write_bytes, atomic_write_text, file_digest
from runner.corpora.base import CorpusError, CorpusTable, Release, corpus_adapter, load_corpus
from runner.corpora.spoof import MANIFEST_FILE, read_spoof_folder
from runner.operators.base import package_version
from runner.operators.conversion import WorldConversion
from runner.stages import StageLog

FORMAT_VERSION = 1
BUILD_MANIFEST = "build-manifest.json"
SYSTEM = "WORLD resynthesis (proxy, not a spoofing system)"
DEFAULT_PER_SPEAKER = 4
DEFAULT_PITCH_RATIO = 1.05
DEFAULT_FORMANT_RATIO = 1.0
SAMPLE_RATE = 16_000
BUILD_COMMAND = "interbias corpus build --corpus world-proxy"
RELEASE = Release("WORLD proxy of the default corpus", f"format {FORMAT_VERSION}")


@corpus_adapter("world_proxy", RELEASE, spoofs=True)
def load_world_proxy(root: Path) -> CorpusTable:
    """A built WORLD proxy folder (its build manifest present), read as a spoof folder of this release."""
    if not (Path(root) / BUILD_MANIFEST).is_file():
        raise CorpusError(str(root), f"no built WORLD proxy here: run `{BUILD_COMMAND}` first")
    return read_spoof_folder(Path(root), RELEASE)


def _inputs(genuine_root: Path, per_speaker: int, pitch_ratio: float, formant_ratio: float) -> dict[str, Any]:
    return {
        "format": FORMAT_VERSION,
        "genuine_utterances_blake3": file_digest(genuine_root / "utterances.csv").blake3,
        "per_speaker": per_speaker,
        "operator": WorldConversion(pitch_ratio=pitch_ratio, formant_ratio=formant_ratio).describe(),
    }


def build_world_proxy(
    genuine_root: Path,
    out_dir: Path,
    *,
    per_speaker: int = DEFAULT_PER_SPEAKER,
    pitch_ratio: float = DEFAULT_PITCH_RATIO,
    formant_ratio: float = DEFAULT_FORMANT_RATIO,
    progress: bool = True,
) -> CorpusTable:
    """Build (or reuse) the WORLD proxy spoof folder of the built default corpus in ``genuine_root``."""
    genuine_root, out_dir = Path(genuine_root), Path(out_dir)
    if package_version("pyworld") == "not installed":
        raise CorpusError(str(out_dir), "the WORLD proxy needs pyworld (the `conversion` extra)")
    genuine = load_corpus("asterisk", genuine_root)
    inputs = _inputs(genuine_root, per_speaker, pitch_ratio, formant_ratio)
    manifest_path = out_dir / BUILD_MANIFEST
    if manifest_path.is_file() and json.loads(manifest_path.read_text(encoding="utf-8")).get("inputs") == inputs:
        return load_world_proxy(out_dir)
    operator = WorldConversion(pitch_ratio=pitch_ratio, formant_ratio=formant_ratio)
    chosen = genuine.frame.sort_values("utt_id", kind="stable").groupby("speaker", sort=True).head(per_speaker)
    rows, failed = [], {}
    log = StageLog.for_run(1, progress)
    with log.part("WORLD proxy", "utterances resynthesised", len(chosen)) as done:
        for utterance in chosen.itertuples():
            done.advance(1)
            wave, rate = soundfile.read(genuine_root / str(utterance.path), dtype="float32")
            if rate != SAMPLE_RATE:
                raise CorpusError(str(genuine_root / str(utterance.path)), f"expected {SAMPLE_RATE} Hz, got {rate}")
            converted, _, outcome = operator(wave, rate, np.random.default_rng(0), utt_id=str(utterance.utt_id))
            if outcome.status != "applied":
                failed[str(utterance.utt_id)] = outcome.reason
                continue
            relative = f"{utterance.speaker}/{Path(str(utterance.path)).stem}.wav"
            buffer = io.BytesIO()
            soundfile.write(buffer, np.clip(converted, -1.0, 1.0), SAMPLE_RATE, subtype="PCM_16", format="WAV")
            atomic_write_bytes(out_dir / relative, buffer.getvalue())
            rows.append([relative, SYSTEM, f"pyworld {package_version('pyworld')}, F0 x{pitch_ratio:g}, formants "
                         f"x{formant_ratio:g}", str(utterance.speaker), str(utterance.speaker)])  # fmt: skip
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerows([["path", "system", "system_version", "target_speaker", "source_speaker"], *rows])
    atomic_write_text(out_dir / MANIFEST_FILE, text.getvalue())
    record = {"inputs": inputs, "files": len(rows), "failed": dict(sorted(failed.items())), "proxy": True}
    atomic_write_text(manifest_path, json.dumps(record, indent=2, sort_keys=True) + "\n")
    return load_world_proxy(out_dir)
