#!/usr/bin/env bash
# The GPU measurement, prepared for a session that has a CUDA GPU (a few minutes on one GPU). From the repository
# root, in an environment with the `runner` and `gpu` extras (torch with CUDA, onnxruntime-gpu; no network needed):
#
#   bash benchmarks/gpu_check.sh [OUT]            # OUT defaults to gpu-check/
#
# 1. checks that torch sees the GPU and that onnxruntime offers the CUDA execution provider (else stops, exit 2);
# 2. writes the 12 paper labels as random-weight checkpoints of their published size (`interbias checkpoints
#    synthesise`, about 3.3 GB);
# 3. loads every label with --device cuda (an ONNX session that comes up on the CPU is an error, never a fallback)
#    and measures batched and one-at-a-time utterances per second and peak GPU memory, in fp32 for all 12 and in
#    bf16 for the 8 torch labels (ONNX graphs run in their own precision);
# 4. writes OUT/throughput-cuda-fp32.json and OUT/throughput-cuda-bf16.json (`interbias plan --throughput FILE`)
#    and the two tables in OUT/gpu-check.txt, with the GPU's name and the date, for the README.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-check}
mkdir -p "${out}"
python - <<'PY' || exit 2
import sys

import onnxruntime
import torch

problems = []
if not torch.cuda.is_available():
    problems.append(f"torch {torch.__version__} sees no CUDA device")
if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
    problems.append(f"onnxruntime {onnxruntime.__version__} offers {onnxruntime.get_available_providers()}")
if problems:
    sys.exit("gpu_check: " + "; ".join(problems) + " (install the `runner` and `gpu` extras on a CUDA machine)")
print(f"gpu_check: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, onnxruntime {onnxruntime.__version__}")
PY
[[ -f ${out}/checkpoints/rawnet3/SYNTHESISED.json ]] || python -m runner.cli checkpoints synthesise "${out}/checkpoints"
torch_labels=(ecapa-tdnn xvector wavlm-base-plus-sv wav2vec2-base hubert-base wavlm-base wavlm-large data2vec-audio-base)
python benchmarks/bench_encoders.py --checkpoints-root "${out}/checkpoints" --device cuda --dtype fp32 \
    --utterances 64 --repeats 2 --save "${out}/throughput-cuda-fp32.json" | tee "${out}/gpu-check.txt"
python benchmarks/bench_encoders.py --checkpoints-root "${out}/checkpoints" --device cuda --dtype bf16 \
    --utterances 64 --repeats 2 --labels "${torch_labels[@]}" --save "${out}/throughput-cuda-bf16.json" \
    | tee -a "${out}/gpu-check.txt"
python -m runner.cli plan configs/full.toml --throughput "${out}/throughput-cuda-fp32.json" | tee -a "${out}/gpu-check.txt"
