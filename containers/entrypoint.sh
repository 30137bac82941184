#!/usr/bin/env bash
# Entrypoint of the benchmark image: check the determinism environment and the arguments, then run
# `interbias reproduce "$@"` (--device included). With --dry-run it says what it would run and what it sees
# (Python, GPUs, the device asked for), and hands --dry-run on to `interbias reproduce`, which checks the
# configuration, the device and the inputs without running anything.
# Any problem is one line on stderr and exit code 2, as for the project's own commands.
set -euo pipefail

fail() {
    printf 'entrypoint: %s\n' "$1" >&2
    exit 2
}

# expect_env NAME VALUE: NAME must be set to exactly VALUE (the image sets it; a run must not override it).
expect_env() {
    local name=$1 expected=$2
    [[ -n ${!name+set} ]] || fail "environment variable ${name} is not set (expected '${expected}')"
    [[ ${!name} == "${expected}" ]] || fail "environment variable ${name} is '${!name}' (expected '${expected}')"
}

expect_env PYTHONHASHSEED 0
expect_env CUBLAS_WORKSPACE_CONFIG :4096:8
[[ ${SOURCE_DATE_EPOCH:-} =~ ^[0-9]+$ ]] \
    || fail "environment variable SOURCE_DATE_EPOCH is '${SOURCE_DATE_EPOCH:-}' (expected seconds since 1970)"
command -v interbias >/dev/null || fail "interbias is not on PATH (${PATH})"

dry_run=false
config=""
out=""
device=cpu
previous=""
for argument in "$@"; do
    case ${previous} in
        --config) config=${argument} ;;
        --out) out=${argument} ;;
        --device) device=${argument} ;;
    esac
    case ${argument} in
        --dry-run) dry_run=true ;;
        --config=*) config=${argument#--config=} ;;
        --out=*) out=${argument#--out=} ;;
        --device=*) device=${argument#--device=} ;;
    esac
    previous=${argument}
done

[[ -n ${config} ]] || fail "no --config given (expected --config FILE)"
[[ -f ${config} ]] || fail "${config}: configuration file not found"
[[ -n ${out} ]] || fail "no --out given (expected --out DIR)"
# The output folder, or the nearest folder above it that exists, must be writable.
existing=${out}
while [[ ! -e ${existing} ]]; do existing=$(dirname -- "${existing}"); done
[[ -d ${existing} && -w ${existing} ]] || fail "${out}: output folder is not writable (checked ${existing})"

if [[ ${dry_run} == true ]]; then
    run_arguments=()
    for argument in "$@"; do
        [[ ${argument} == --dry-run ]] || run_arguments+=("${argument}")
    done
    printf 'entrypoint: would run: interbias reproduce%s\n' "$(printf ' %q' "${run_arguments[@]}")"
    printf 'entrypoint: python: %s\n' "$(python -c 'import sys; print(sys.version.split()[0], sys.executable)')"
    if command -v nvidia-smi >/dev/null && gpus=$(nvidia-smi --list-gpus 2>/dev/null) && [[ -n ${gpus} ]]; then
        printf 'entrypoint: gpu: %s\n' "${gpus//$'\n'/; }"
    else
        printf 'entrypoint: gpu: none visible\n'
    fi
    # --device is handed on: interbias reproduce refuses a device that is not there (exit 2), never falls back.
    printf 'entrypoint: device: %s\n' "${device}"
fi

exec interbias reproduce "$@"
