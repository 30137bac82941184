#!/usr/bin/env bash
# The GPU check, prepared for the lent device kind (one NVIDIA H200; its image has python3 3.12 with torch 2.11 on
# CUDA 13, transformers, numpy, pandas, scipy, pyarrow, typer and numba, a CPU-only onnxruntime, and no network; it
# lacks speechbrain, soundfile, av, pandera, blake3, pydantic and cryptography). Torch labels only: the exported
# (ONNX) labels would need onnxruntime-gpu, a 256 MB wheel, over the 64 MiB that travels with a call.
#
#   bash benchmarks/gpu_check.sh prepare         # here, with the network: the wheels the device lacks (.whl/, the
#                                                # lock's versions for CPython 3.12) and a tiny corpus, roster and
#                                                # configuration (.gpu-check/), both ignored by git, under 64 MiB
#   bash benchmarks/gpu_check.sh run [OUT]       # there (the device tool's `run`, carry [".whl", ".gpu-check"]):
#                                                # at most 9 minutes; OUT defaults to $OUT, else gpu-check/
#
# `run` installs the wheels into /tmp/site, then, each stage under its own time limit (a stage that runs out is
# recorded and the next one starts):
# 1. checks that torch sees the GPU (else stops, exit 2) and records its name, capability, driver and versions;
# 2. writes the 8 torch labels as random-weight checkpoints of their published size (`interbias checkpoints
#    synthesise`);
# 3. measures per label load time, batched and one-at-a-time utterances per second and peak GPU memory in fp32 and
#    in bf16 (benchmarks/bench_encoders.py), written as OUT/throughput-cuda-fp32.json and -bf16.json, the files
#    `interbias plan --throughput` reads (commit them as configs/throughput-cuda-*.json);
# 4. per label on 8 real clips, the GPU's rows against the CPU's (cosine), batched against single, two reruns
#    bitwise, and an out-of-memory probe: WavLM Large on one 145 s clip, then a batch under a forced memory cap
#    that runner.encoders.failures must split (benchmarks/gpu_probe.py -> OUT/gpu-probe.json);
# 5. one `interbias run --device cuda` of the tiny corpus (ecapa-tdnn and wavlm-base-plus-sv synthesised, the MFCC
#    baseline), then the same run again (every embedding from the cache), its environment, timings and operators
#    files kept in OUT.
# GPU_CHECK_DEVICE=cpu GPU_CHECK_LABELS="..." GPU_CHECK_WHEELS=none GPU_CHECK_TIME_SCALE=N GPU_CHECK_UTTERANCES=M run
# the same stages on a CPU machine with the project's own environment, N times the time limits and M utterances per
# throughput measurement (what can be checked without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
torch_labels=(ecapa-tdnn xvector wavlm-base-plus-sv wav2vec2-base hubert-base wavlm-base wavlm-large data2vec-audio-base)
# What the device lacks, at the versions of containers/requirements.lock (its own packages are kept).
wheels=(blake3 pandera typeguard pydantic pydantic-core annotated-types typing-inspection soundfile cffi pycparser av
    cryptography google-re2 soxr speechbrain hyperpyyaml ruamel-yaml ruamel-yaml-clib)
limit_mib=60

say() { printf '[gpu_check] %s\n' "$*" >&2; }

prepare() {
    local python=${PYTHON:-python3} pins=() name
    for name in "${wheels[@]}"; do
        pins+=("$(grep -m1 -iE "^${name}==" containers/requirements.lock | cut -d' ' -f1)")
    done
    local exclude
    exclude=$(git rev-parse --git-path info/exclude)
    mkdir -p "$(dirname "${exclude}")"
    for folder in /.whl/ /.gpu-check/; do grep -qxF "${folder}" "${exclude}" 2>/dev/null || echo "${folder}" >> "${exclude}"; done
    rm -rf .whl .gpu-check
    mkdir -p .whl .gpu-check
    local cert=()
    [[ -n ${PIP_CERT:-} ]] && cert=(--cert "${PIP_CERT}")
    "${python}" -m pip download --isolated "${cert[@]}" --index-url https://pypi.org/simple --no-deps \
        --only-binary=:all: --python-version 3.12 --implementation cp \
        $(for n in 39 35 34 31 28 27 24 17; do echo --platform "manylinux_2_${n}_x86_64"; done) \
        --platform manylinux2014_x86_64 -d .whl "${pins[@]}" >&2
    # The project itself, for its distribution metadata (the version a run records); the code runs from the tree.
    local tree
    tree=$(mktemp -d)
    git ls-files -z | tar --null -T - -cf - | tar -xf - -C "${tree}"
    "${python}" -m pip wheel --isolated --no-deps --no-build-isolation -w .whl "${tree}" >&2
    rm -rf "${tree}"
    "${python}" benchmarks/gpu_check_inputs.py .gpu-check
    local size
    size=$(du -scm .whl .gpu-check $(git ls-files) 2>/dev/null | tail -1 | cut -f1)
    say "prepared: $(ls .whl | wc -l) wheels, the tiny corpus; with the tree ${size} MiB (at most ${limit_mib})"
    ((size <= limit_mib)) || { say "over ${limit_mib} MiB: carry less"; exit 2; }
}

# stage NAME SECONDS COMMAND...: run it with its own time limit; its outcome goes to OUT/stages.tsv.
stage() {
    local name=$1 seconds=$(($2 * ${GPU_CHECK_TIME_SCALE:-1})) started=${SECONDS} code=0
    shift 2
    say "stage ${name} (at most ${seconds} s)"
    timeout --kill-after=10 "${seconds}" "$@" || code=$?
    printf '%s\t%s\t%s\n' "${name}" "$((SECONDS - started))" "${code}" >> "${out}/stages.tsv"
    say "stage ${name}: exit ${code} after $((SECONDS - started)) s"
}

run() {
    out=${1:-${OUT:-gpu-check}}
    mkdir -p "${out}"
    out=$(cd "${out}" && pwd)
    local device=${GPU_CHECK_DEVICE:-cuda} python=${PYTHON:-python3} work=/tmp/gpu-check
    local labels=(${GPU_CHECK_LABELS:-${torch_labels[*]}})
    export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 CUBLAS_WORKSPACE_CONFIG=:4096:8
    if [[ ${GPU_CHECK_WHEELS:-carried} != none ]]; then
        "${python}" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
        export PYTHONPATH=${root}:/tmp/site
    fi
    printf 'stage\tseconds\texit\n' > "${out}/stages.tsv"
    "${python}" - "${device}" > "${out}/gpu-check.txt" <<'PY' || exit 2
import platform, subprocess, sys
import torch
device = sys.argv[1]
if device.startswith("cuda") and not torch.cuda.is_available():
    sys.exit(f"gpu_check: torch {torch.__version__} sees no CUDA device")
print(f"python {platform.python_version()}, torch {torch.__version__}, CUDA {torch.version.cuda}")
if device.startswith("cuda"):
    print(f"{torch.cuda.get_device_name(0)}, capability {torch.cuda.get_device_capability(0)}")
    print(subprocess.run(["nvidia-smi", "--query-gpu=driver_version,memory.total", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip())
PY
    cat "${out}/gpu-check.txt" >&2
    rm -rf "${work}"
    mkdir -p "${work}"
    stage synthesise 100 "${python}" -m runner.cli checkpoints synthesise "${work}/checkpoints" \
        --roster .gpu-check/encoders.toml $(printf -- '--labels %s ' "${labels[@]}")
    stage bench-fp32 140 "${python}" benchmarks/bench_encoders.py --roster .gpu-check/encoders.toml \
        --checkpoints-root "${work}/checkpoints" --device "${device}" --dtype fp32 --utterances "${GPU_CHECK_UTTERANCES:-32}" \
        --labels "${labels[@]}" --save "${out}/throughput-${device%%:*}-fp32.json"
    stage bench-bf16 90 "${python}" benchmarks/bench_encoders.py --roster .gpu-check/encoders.toml \
        --checkpoints-root "${work}/checkpoints" --device "${device}" --dtype bf16 --utterances "${GPU_CHECK_UTTERANCES:-32}" \
        --labels "${labels[@]}" --save "${out}/throughput-${device%%:*}-bf16.json"
    stage probe 120 "${python}" benchmarks/gpu_probe.py --roster .gpu-check/encoders.toml \
        --checkpoints-root "${work}/checkpoints" --clips .gpu-check/corpus/audio --device "${device}" \
        --labels "${labels[@]}" --out "${out}/gpu-probe.json"
    local config=.gpu-check/run.toml
    stage run 45 "${python}" -m runner.cli run "${config}" --out "${work}/run" --cache "${work}/cache" \
        --device "${device}" --json --no-progress
    stage rerun 25 "${python}" -m runner.cli run "${config}" --out "${work}/rerun" --cache "${work}/cache" \
        --device "${device}" --json --no-progress
    for file in environment.json timings.json operators.json results.csv; do
        [[ -f ${work}/run/${file} ]] && cp "${work}/run/${file}" "${out}/run-${file}"
    done
    [[ -f ${work}/rerun/results.csv ]] && cmp -s "${work}/run/results.csv" "${work}/rerun/results.csv" \
        && echo "rerun: results.csv byte-identical" >> "${out}/gpu-check.txt"
    cat "${out}/stages.tsv" >&2
}

case ${1:-} in
    prepare) prepare ;;
    run) shift; run "$@" ;;
    *) echo "usage: bash benchmarks/gpu_check.sh prepare | run [OUT]" >&2; exit 2 ;;
esac
