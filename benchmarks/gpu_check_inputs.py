"""The inputs ``benchmarks/gpu_check.sh`` carries to the device: a tiny corpus, a roster and a run configuration.

Usage: ``python benchmarks/gpu_check_inputs.py FOLDER``. Writes ``FOLDER/corpus`` (4 prompts of 1.5-4 s per speaker
of the built default corpus, about 2 MB: its own utterances.csv, problems.csv and build manifest, so the asterisk
adapter loads and verifies it as any built corpus), ``FOLDER/encoders.toml`` (the shipped roster without its
checkpoint pins, so that random-weight syntheses load under the real labels, with its checkpoints under
``/tmp/gpu-check/checkpoints``) and ``FOLDER/run.toml`` (one interaction experiment, white noise, three labels).
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from runner.corpora.asterisk import build_default_corpus  # noqa: E402
from runner.corpora.base import PROBLEMS_FILE, UTTERANCES_FILE  # noqa: E402
from runner.corpora.debian import MANIFEST_FILE  # noqa: E402
from runner.design import default_cache_root  # noqa: E402  (the checkout's runner, not an install)

CHECKPOINTS = "/tmp/gpu-check/checkpoints"
PER_SPEAKER = 4
RUN = """# The GPU check's run (benchmarks/gpu_check.sh): random-weight syntheses, so the EERs mean nothing; what it
# checks is the path (device, device class in the cache keys, a rerun from the cache).
[run]
name = "gpu-check"
seed = 3
batch_size = 16

[corpus]
name = "asterisk"
root = "corpus"

[encoders]
roster = "encoders.toml"
labels = ["ecapa-tdnn", "wavlm-base-plus-sv", "mfcc-stats"]

[conditions]
"white-10dB" = [{ name = "white", kwargs = { snr_db = 10 } }]

[[experiments]]
id = "D01"
title = "clean vs white noise"
use = "interaction"
target_trials = 40
nontarget_trials = 40
factor_a = { name = "noise", levels = ["white-10dB"] }
"""


def main() -> None:
    folder = Path(sys.argv[1])
    source = default_cache_root() / "corpora" / "asterisk"
    if not (source / UTTERANCES_FILE).is_file():
        build_default_corpus(source)
    table = pd.read_csv(source / UTTERANCES_FILE, dtype=str, keep_default_na=False)
    seconds = table["duration_s"].astype(float)
    chosen = table[(seconds >= 1.5) & (seconds <= 4.0)].sort_values("utt_id").groupby("speaker").head(PER_SPEAKER)
    corpus = folder / "corpus"
    for path in chosen["path"]:
        (corpus / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / path, corpus / path)
    chosen.to_csv(corpus / UTTERANCES_FILE, index=False, lineterminator="\n")
    shutil.copyfile(source / PROBLEMS_FILE, corpus / PROBLEMS_FILE)
    shutil.copyfile(source / MANIFEST_FILE, corpus / MANIFEST_FILE)
    roster = (ROOT / "configs" / "encoders.toml").read_text(encoding="utf-8")
    roster = re.sub(r'(?m)^blake3 = "[0-9a-f]{64}"\n', "", roster)
    roster = re.sub(r"(?m)^checkpoints_root = .*$", f'checkpoints_root = "{CHECKPOINTS}"', roster, count=1)
    (folder / "encoders.toml").write_text(roster, encoding="utf-8")
    (folder / "run.toml").write_text(RUN, encoding="utf-8")
    print(f"{len(chosen)} utterances of {chosen['speaker'].nunique()} speakers -> {corpus}")


if __name__ == "__main__":
    main()
