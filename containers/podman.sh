#!/usr/bin/env bash
# The image built and run for real on a machine without a GPU, a Docker engine or a registry (`nox -s container`):
# podman with runc, a Debian 12 base made by mmdebstrap from Debian's archive (no registry), containers/Dockerfile
# built on it with the CPU lock, `interbias reproduce` run inside it as its non-root user, and its results.csv
# compared with a host run's. Run as root from anywhere:
#
#   bash containers/podman.sh [OUT]      # OUT defaults to out/container; the bundle is OUT/bundle
#
# HOST_RUN (default out/default, what `nox -s reproduce` writes) is the host bundle to compare with; without it the
# comparison is skipped and said so. CONFIG (default the image's configs/default.toml) runs another configuration:
# its folder is mounted read-only at /data/config, and INTERBIAS_CONFIGS names the image's configs/ folder (a
# configuration for both the host and the image names the roster "$INTERBIAS_CONFIGS/encoders.toml"). Every step is timed into OUT/steps.tsv. Steps that differ from a GPU host's
# `docker build` (containers/README.md): the base (Debian by mmdebstrap instead of the CUDA image), PYTHON and LOCK
# (the CPU lock), `--isolation chroot` and runc (what runs inside this machine's sandbox) through a wrapper that drops
# the rlimits from the container's spec (runtime_without_rlimits below) and, where the host's pip trusts a CA bundle
# of its own (PIP_CERT: a TLS-intercepting proxy), that bundle mounted into the build for pip.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/container}
host_run=${HOST_RUN:-out/default}
work=${CONTAINER_WORK:-/var/tmp/interbias-container}
base=localhost/interbias-base:bookworm
image=localhost/interbias-sv:cpu
suite=bookworm
mirrors=(
    "deb http://deb.debian.org/debian ${suite} main"
    "deb http://deb.debian.org/debian ${suite}-updates main"
    "deb http://deb.debian.org/debian-security ${suite}-security main"
)

say() { printf '[container] %s\n' "$*" >&2; }
fail() { say "error: $*"; exit 2; }
mkdir -p "${out}" "${work}"
steps=${out}/steps.tsv
printf 'step\tseconds\n' > "${steps}"
timed() {  # timed NAME COMMAND...: run it, append its wall seconds to steps.tsv
    local name=$1 started=${SECONDS}
    shift
    "$@"
    printf '%s\t%s\n' "${name}" "$((SECONDS - started))" >> "${steps}"
    say "${name}: $((SECONDS - started)) s"
}

[[ $(id -u) == 0 ]] || fail "run as root (podman builds and runs the image as root here, the image's user is 10001)"

install_tools() {
    local missing=()
    for tool in podman mmdebstrap runc newuidmap; do command -v "${tool}" >/dev/null || missing+=("${tool}"); done
    ((${#missing[@]} == 0)) && return
    say "installing podman, mmdebstrap, uidmap and runc (missing: ${missing[*]})"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman mmdebstrap uidmap runc
}

# The base: Debian 12 minbase with CPython 3.11 (python3.11-venv) and useradd (passwd), what the CUDA base gives the
# Dockerfile; reproducible from the archive (SOURCE_DATE_EPOCH fixes the tarball's times).
make_base() {
    podman image exists "${base}" && return
    SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) mmdebstrap --quiet --variant=minbase \
        --include=python3.11-venv,passwd --aptopt='Acquire::Retries "3"' "${suite}" "${work}/base.tar" "${mirrors[@]}"
    podman import --quiet --change 'CMD ["/bin/bash"]' "${work}/base.tar" "${base}" >/dev/null
    rm -f "${work}/base.tar"
}

# The build context: the files the Dockerfile copies as git has them (tracked, or untracked and not ignored).
make_context() {
    rm -rf "${work}/context"
    mkdir -p "${work}/context"
    git ls-files -z --cached --others --exclude-standard -- pyproject.toml README.md audit schemas provenance reports \
        runner configs containers | tar --null -T - -cf - | tar -xf - -C "${work}/context"
}

build() {
    local ca=() revision
    revision=$(git rev-parse HEAD)$(git diff --quiet HEAD -- . && echo "" || echo "-dirty")
    if [[ -n ${PIP_CERT:-} && -f ${PIP_CERT} ]]; then
        ca=(--volume "$(realpath "${PIP_CERT}"):/run/interbias-ca.crt:ro" --build-arg PIP_CA_BUNDLE=/run/interbias-ca.crt)
    fi
    podman build --isolation chroot --format docker --layers -f containers/Dockerfile \
        --build-arg BASE="${base}" --build-arg PYTHON=/usr/bin/python3.11 \
        --build-arg LOCK=containers/requirements-cpu.lock \
        --build-arg SOURCE_DATE_EPOCH="$(git log -1 --format=%ct)" --build-arg VCS_REF="${revision}" \
        "${ca[@]}" -t "${image}" "${work}/context"
}

# runc through a wrapper that drops the OCI spec's process.rlimits, so the container inherits the host's limits:
# this machine's sandbox refuses runc's prlimit on the container's process, even to lower a limit ("error setting
# rlimits for ready process: operation not permitted"), and podman 4.3 asks for NOFILE and NPROC even with
# --ulimit host.
runtime_without_rlimits() {
    cat > "${work}/runc-no-rlimits" <<'WRAPPER'
#!/usr/bin/env bash
previous=""
for argument in "$@"; do
    if [[ ${previous} == --bundle || ${previous} == -b ]] && [[ -f ${argument}/config.json ]]; then
        python3 -c 'import json, sys
path = sys.argv[1]
spec = json.load(open(path))
spec["process"].pop("rlimits", None)
json.dump(spec, open(path, "w"))' "${argument}/config.json"
    fi
    previous=${argument}
done
exec runc "$@"
WRAPPER
    chmod +x "${work}/runc-no-rlimits"
}

# The run: no network, the image's user, only the output folder mounted (the bundle and its throwaway key beside it).
run() {
    local digest
    digest=$(podman image inspect --format '{{.Id}}' "${image}")
    rm -rf "${out}/bundle" "${out}/bundle.keys"
    chown 10001:10001 "${out}"
    local config=(--config configs/default.toml) mounts=()
    if [[ -n ${CONFIG:-} ]]; then
        mounts=(--volume "$(realpath "$(dirname "${CONFIG}")"):/data/config:ro")
        config=(--config "/data/config/$(basename "${CONFIG}")")
    fi
    runtime_without_rlimits
    podman --runtime "${work}/runc-no-rlimits" run --rm --ulimit host --network none --user 10001:10001 \
        --env INTERBIAS_CONFIGS=/opt/interbias/configs --volume "$(realpath "${out}"):/data/out" "${mounts[@]}" \
        "${image}" "${config[@]}" --out /data/out/bundle --image-digest "sha256:${digest}" --device cpu
}

compare() {
    if [[ ! -f ${host_run}/results.csv ]]; then
        say "no host run at ${host_run} (run nox -s reproduce first, or set HOST_RUN): comparison skipped"
        return
    fi
    if cmp -s "${host_run}/results.csv" "${out}/bundle/results.csv"; then
        say "results.csv: byte-identical to ${host_run}/results.csv"
    else
        say "results.csv differs from ${host_run}/results.csv:"
        diff "${host_run}/results.csv" "${out}/bundle/results.csv" | head -20 >&2 || true
    fi
    say "bundle files that differ from the host run's:"
    diff -rq --exclude=report "${host_run}" "${out}/bundle" >&2 || true
}

timed tools install_tools
timed base make_base
timed context make_context
timed build build
timed run run
compare
say "steps and seconds: ${steps}"
