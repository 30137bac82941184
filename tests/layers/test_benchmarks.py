"""Every benchmark takes ``--quick`` (issue 43 point 7: a run that checks the script works, in seconds), read from
its source without importing it (a benchmark may need the runner's extra)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
# Not benchmarks: the lent GPU's check (benchmarks/gpu_check.sh) writes its inputs and probes the device once; the
# benchmarks' child processes' environment (installed.py).
NOT_BENCHMARKS = {"gpu_check_inputs.py", "gpu_probe.py", "installed.py"}


def options(source: str) -> set[str]:
    """The option strings of every ``add_argument`` call in ``source``.

    >>> sorted(options('p.add_argument("--quick", action="store_true"); p.add_argument("x")'))
    ['--quick', 'x']
    """
    return {
        argument.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
        for argument in node.args
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str)
    }


@pytest.mark.parametrize(
    "script", sorted(path.name for path in BENCHMARKS.glob("*.py") if path.name not in NOT_BENCHMARKS)
)
def test_every_benchmark_takes_quick(script: str) -> None:
    assert "--quick" in options((BENCHMARKS / script).read_text(encoding="utf-8")), f"benchmarks/{script}"


def test_a_script_without_the_option_is_found() -> None:
    assert "--quick" not in options('import argparse\nargparse.ArgumentParser().add_argument("--repeats")')
