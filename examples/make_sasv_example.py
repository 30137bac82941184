"""Write SYNTHETIC files for `audit scores --cm-scores --calibration`: a VoxCeleb-style trial list with spoof trials,
ASV scores, countermeasure scores and a labelled development file of other speakers.

    python examples/make_sasv_example.py out/sasv-example
    audit scores out/sasv-example/trials.txt out/sasv-example/scores.txt \\
        --cm-scores out/sasv-example/cm.txt --calibration out/sasv-example/dev.txt --out out/sasv-report

No model was run: per enrolment speaker, targets score N(2, 1), non-targets N(-2, 1) and spoofs of the speaker
(test files ``idNNNNN/spoof/...``) N(1, 1.2); the countermeasure scores bona fide trials N(1.5, 1) and spoofs
N(-1.5, 1.2). Seeded, so the output is deterministic.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from provenance.atomic import atomic_write_text

N_SPEAKERS, TRIALS_PER_SPEAKER, DEV_OFFSET = 30, 6, 100


def speaker(index: int) -> str:
    return f"id{10000 + index:05d}"


def write(folder: Path) -> None:
    rng = np.random.default_rng(0)
    trials, scores, cm, dev = [], [], [], []
    for offset, with_spoofs in ((0, True), (DEV_OFFSET, False)):
        people = range(offset, offset + N_SPEAKERS)
        for person in people:
            for k in range(TRIALS_PER_SPEAKER):
                enrol = f"{speaker(person)}/e/{k:05d}.wav"
                other = int(rng.choice([p for p in people if p != person]))
                rows = [
                    (1, f"{speaker(person)}/t/{k:05d}.wav", rng.normal(2, 1), False),
                    (0, f"{speaker(other)}/t/{k:05d}.wav", rng.normal(-2, 1), False),
                ]
                if with_spoofs:
                    rows.append((0, f"{speaker(person)}/spoof/{k:05d}.wav", rng.normal(1, 1.2), True))
                for label, test, score, spoof in rows:
                    if with_spoofs:
                        trials.append(f"{label} {enrol} {test}")
                        scores.append(f"{enrol} {test} {score:.6f}")
                        cm_score = rng.normal(-1.5, 1.2) if spoof else rng.normal(1.5, 1)
                        cm.append(f"{enrol} {test} {cm_score:.6f} {'spoof' if spoof else 'bonafide'}")
                    else:
                        dev.append(f"{enrol} {test} {score:.6f} {'target' if label else 'nontarget'}")
    folder.mkdir(parents=True, exist_ok=True)
    for name, lines in (("trials.txt", trials), ("scores.txt", scores), ("cm.txt", cm), ("dev.txt", dev)):
        atomic_write_text(folder / name, "\n".join(lines) + "\n")


if __name__ == "__main__":
    write(Path(sys.argv[1] if len(sys.argv) > 1 else "out/sasv-example"))
