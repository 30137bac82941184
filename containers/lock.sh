#!/usr/bin/env bash
# Regenerate containers/requirements.lock: the hashed Python dependencies for the image: the project with its `runner`,
# `gpu` (onnxruntime-gpu, whose CUDA execution provider `--device cuda` needs) and `ray` (`--executor ray`) extras.
# Platform: linux x86_64, glibc 2.35 (Ubuntu 22.04 of the base image), CPython 3.11 (the base image's conda Python);
# torch's PyPI wheels for that platform are its CUDA 12.8 build, the CUDA of the base image.
# --exclude-newer freezes the resolution date, so the same pyproject.toml always gives the same lock.
# Run from anywhere; needs `uv` (pip install 'uv==0.13.8') and access to PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
uv pip compile pyproject.toml --extra runner --extra gpu --extra ray --generate-hashes --python-version 3.11 --python-platform x86_64-manylinux_2_35 --exclude-newer 2026-11-30T00:00:00Z --no-config -c containers/constraints.txt -o containers/requirements.lock
