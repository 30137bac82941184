#!/usr/bin/env bash
# Regenerate the image's hashed Python locks:
#   containers/requirements.lock      the project with its `runner`, `gpu` (onnxruntime-gpu, whose CUDA execution
#                                     provider `--device cuda` needs), `ray` (`--executor ray`) and `conversion`
#                                     (pyworld: the default's WORLD proxy spoofs) extras: the image on the CUDA base
#                                     (the default);
#   containers/requirements-cpu.lock  the same with the `cpu` extra (onnxruntime) instead of `gpu`: the image that
#                                     `nox -s container` builds on a Debian base on a machine without a GPU;
#   containers/build-tools.lock       pip and setuptools, installed before either lock (setuptools at the locks'
#                                     version), so that the locks' source distributions build;
#   containers/sdist-build.lock       what pyworld's build needs besides them (Cython; NumPy at the locks' version),
#                                     installed only in the stage that builds the source distributions;
#   containers/sdists.lock            the locks' entries that PyPI publishes as source only for CPython 3.11 on
#                                     linux x86_64 (typing, webrtcvad, pyworld), copied from requirements.lock: the image
#                                     builds their wheels in a stage of their own, beside its C toolchain. Which
#                                     entries those are: `pip download --only-binary=:all:` of the lock names them.
# Platform: linux x86_64, glibc 2.35 (Ubuntu 22.04 of the CUDA base; Debian 12 has 2.36), CPython 3.11; torch's PyPI
# wheels for that platform are its CUDA 12.8 build (the CPU lock takes them too: PyPI has no CPU-only torch wheel).
# --exclude-newer freezes the resolution date, so the same pyproject.toml always gives the same locks.
# Run from anywhere; needs `uv` (pip install 'uv==0.13.8') and access to PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
uv pip compile pyproject.toml --extra runner --extra gpu --extra ray --extra conversion --generate-hashes --python-version 3.11 --python-platform x86_64-manylinux_2_35 --exclude-newer 2026-11-30T00:00:00Z --no-config -c containers/constraints.txt -o containers/requirements.lock
uv pip compile pyproject.toml --extra runner --extra cpu --extra ray --extra conversion --generate-hashes --python-version 3.11 --python-platform x86_64-manylinux_2_35 --exclude-newer 2026-11-30T00:00:00Z --no-config -c containers/constraints.txt -c containers/requirements.lock -o containers/requirements-cpu.lock
uv pip compile containers/build-tools.in --generate-hashes --python-version 3.11 --python-platform x86_64-manylinux_2_35 --exclude-newer 2026-11-30T00:00:00Z --no-config -c containers/requirements.lock -o containers/build-tools.lock
uv pip compile containers/sdist-build.in --generate-hashes --python-version 3.11 --python-platform x86_64-manylinux_2_35 --exclude-newer 2026-11-30T00:00:00Z --no-config -c containers/requirements.lock -o containers/sdist-build.lock
python3 - typing webrtcvad pyworld <<'PY'
import re
import sys

lock = open("containers/requirements.lock", encoding="utf-8").read()
entries = [re.search(rf"^{re.escape(name)}==.*?(?=^\S|\Z)", lock, re.M | re.S) for name in sys.argv[1:]]
missing = [name for name, entry in zip(sys.argv[1:], entries) if entry is None]
if missing:
    sys.exit(f"lock.sh: {missing} are not in containers/requirements.lock")
header = "# The entries of containers/requirements.lock published as source only (written by containers/lock.sh).\n"
open("containers/sdists.lock", "w", encoding="utf-8").write(header + "".join(e.group(0) for e in entries))
PY
