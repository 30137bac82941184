"""The device a run asks for: checked for every encoder before any work, never a silent CPU fallback.

This machine has no CUDA (asserted, not assumed): ``--device cuda`` must stop ``interbias run`` and
``interbias reproduce`` with one line naming every label and what torch and onnxruntime offer, exit 2.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from runner.encoders import EncoderConfigError, load_encoder
from runner.encoders.device import check_session_provider, device_type, onnx_provider
from runner.encoders.preflight import check_devices
from schemas.errors import InputError

pytestmark = pytest.mark.runner

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module", autouse=True)
def no_cuda_here() -> None:
    import onnxruntime
    import torch

    assert not torch.cuda.is_available(), "these tests check refusals on a machine without CUDA"
    assert "CUDAExecutionProvider" not in onnxruntime.get_available_providers()


@pytest.mark.parametrize("device", ["cpu", "cuda", "cuda:1"])
def test_device_types(device: str) -> None:
    assert device_type(device, "x") == device.split(":")[0]


@pytest.mark.parametrize("device", ["gpu", "cuda:", "cuda:x", "cpu:0", "mps", ""])
def test_unknown_devices_are_refused(device: str) -> None:
    with pytest.raises(EncoderConfigError, match="not supported"):
        device_type(device, "x")


def test_cuda_is_refused_for_torch_and_onnx_labels_in_one_line() -> None:
    import onnxruntime

    labels = [
        ("ecapa-tdnn", "speechbrain"),
        ("campplus", "onnx"),
        ("mfcc-stats", "mfcc"),
        ("hubert", "transformers_ssl"),
    ]
    with pytest.raises(InputError) as caught:
        check_devices("cuda", labels)
    line = caught.value.line()
    assert "\n" not in line
    assert line.startswith("device 'cuda': not available for ecapa-tdnn (")
    assert "torch" in line and "sees no CUDA device" in line
    assert f"campplus (device 'cuda' needs CUDAExecutionProvider; this onnxruntime {onnxruntime.__version__}" in line
    assert str(onnxruntime.get_available_providers()) in line
    assert "hubert (" in line and "mfcc-stats" not in line  # numpy only: runs on the CPU, records the request
    check_devices("cpu", labels)  # the CPU is always there


def test_onnx_provider_options() -> None:
    assert onnx_provider("cpu", "x") == ("CPUExecutionProvider", None)


class _Session:
    def __init__(self, providers: list[str]) -> None:
        self._providers = providers

    def get_providers(self) -> list[str]:
        return self._providers


def test_a_session_that_fell_back_to_the_cpu_is_an_error() -> None:
    # onnxruntime-gpu creates a CPU-only session, with a warning, when the CUDA libraries fail to load.
    with pytest.raises(EncoderConfigError, match=r"asked for CUDAExecutionProvider.*\['CPUExecutionProvider'\]"):
        check_session_provider(_Session(["CPUExecutionProvider"]), "CUDAExecutionProvider", "campplus")
    check_session_provider(_Session(["CUDAExecutionProvider", "CPUExecutionProvider"]), "CUDAExecutionProvider", "x")


def test_loading_an_onnx_label_on_cuda_names_the_label_and_providers(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"not reached: the provider is checked first")
    with pytest.raises(EncoderConfigError, match=r"encoder 'rawnet3'.*CUDAExecutionProvider.*offers \["):
        load_encoder("onnx", "rawnet3", tmp_path, device="cuda", input="waveform")


def test_loading_a_torch_label_on_cuda_is_refused() -> None:
    with pytest.raises(EncoderConfigError, match=r"encoder 'resemblyzer'.*sees no CUDA device"):
        load_encoder("resemblyzer", "resemblyzer", None, device="cuda:0")
    mfcc = load_encoder("mfcc", "mfcc-stats", None, device="cuda")
    assert mfcc.checkpoint.runtime["device"] == "cpu" and mfcc.checkpoint.runtime["requested_device"] == "cuda"
    assert mfcc.embed([np.sin(np.arange(8000) / 7).astype(np.float32)], 16000).shape == (1, 38)


def cli(*args: str) -> tuple[int, str]:
    """The command in process (typer's runner): its exit code and what it wrote to stderr."""
    from typer.testing import CliRunner

    from runner.cli import app

    done = CliRunner().invoke(app, list(args))
    return done.exit_code, done.stderr


@pytest.mark.parametrize("command", ["run", "reproduce"])
def test_cli_device_cuda_without_cuda_is_one_line_exit_2_before_any_work(
    tmp_path: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTERBIAS_CORPORA", str(tmp_path / "no-corpora"))  # never read: the device comes first
    monkeypatch.setenv("INTERBIAS_CHECKPOINTS", str(tmp_path / "no-checkpoints"))
    monkeypatch.setenv("INTERBIAS_CACHE", str(tmp_path / "cache"))
    config, out = str(ROOT / "configs" / "full.toml"), str(tmp_path / "bundle")
    arguments = [command, config] if command == "run" else [command, "--config", config]
    code, stderr = cli(*arguments, "--out", out, "--device", "cuda")
    assert code == 2, stderr
    (line,) = stderr.strip().splitlines()
    assert line.startswith("error: device 'cuda': not available for ecapa-tdnn (")
    for label in ("ecapa-tdnn-large", "campplus", "eres2net", "rawnet3", "wavlm-large", "data2vec-audio-base"):
        assert f"; {label} (" in line
    assert "CUDAExecutionProvider" in line
    assert not (tmp_path / "bundle").exists() and not (tmp_path / "cache").exists()


def test_cli_refuses_a_malformed_image_digest_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INTERBIAS_CACHE", str(tmp_path / "cache"))
    config = str(ROOT / "configs" / "default.toml")
    code, stderr = cli("run", config, "--out", str(tmp_path / "b"), "--image-digest", "interbias:latest")
    assert code == 2
    assert stderr.strip() == (
        "error: image digest: expected 'sha256:<64 lowercase hex>' or 'name@sha256:<64 lowercase hex>', "
        "got 'interbias:latest'"
    )
    assert not (tmp_path / "b").exists()


def test_cuda_provider_options_are_set_for_variable_lengths(monkeypatch: pytest.MonkeyPatch) -> None:
    """A build that offers CUDA (the provider list faked; this machine has none) gets heuristic cuDNN algorithm
    search, an arena that grows by what is asked, and an arena limit of a quarter of the device's memory."""
    import onnxruntime

    from runner.encoders import device

    monkeypatch.setattr(
        onnxruntime, "get_available_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"]
    )
    monkeypatch.setattr(onnxruntime, "preload_dlls", lambda: None, raising=False)
    options = {"cudnn_conv_algo_search": "HEURISTIC", "arena_extend_strategy": "kSameAsRequested"}
    assert onnx_provider("cuda:1", "x") == ("CUDAExecutionProvider", [{"device_id": 1, **options}])  # no torch CUDA
    monkeypatch.setattr(device, "_cuda_total_memory", lambda index: 80 * 1024**3)
    _, (chosen,) = onnx_provider("cuda", "x")  # type: ignore[misc]
    assert chosen == {"device_id": 0, **options, "gpu_mem_limit": 20 * 1024**3}


def test_node_placement_is_read_from_onnxruntimes_profile(tmp_path: Path) -> None:
    """The profile of a real session lists every node of the graph (optimisation off, so the oracle is the graph
    file's own node list) with the provider it ran on; heavy nodes off the asked-for provider are refused."""
    from collections import Counter

    import onnx
    import onnxruntime
    import torch

    from runner.encoders.device import check_node_placement, profiled_placement

    model = torch.nn.Sequential(torch.nn.Conv1d(4, 8, 3), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool1d(1))
    torch.onnx.export(model, (torch.randn(1, 4, 50),), str(tmp_path / "m.onnx"), dynamo=False)
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.enable_profiling = True
    options.profile_file_prefix = str(tmp_path / "profile")
    session = onnxruntime.InferenceSession(str(tmp_path / "m.onnx"), options, providers=["CPUExecutionProvider"])
    session.run(None, {session.get_inputs()[0].name: np.ones((1, 4, 50), np.float32)})
    placement = profiled_placement(Path(session.end_profiling()))
    graph_ops = Counter(node.op_type for node in onnx.load(str(tmp_path / "m.onnx")).graph.node)
    assert placement == {"CPUExecutionProvider": graph_ops} and graph_ops["Conv"] == 1
    assert check_node_placement(placement, "CPUExecutionProvider", "x") == {
        "nodes": {"CPUExecutionProvider": sum(graph_ops.values())},
        "elsewhere": {},
    }
    with pytest.raises(
        EncoderConfigError, match=r"asked for CUDAExecutionProvider, but nodes \['Conv'\] run elsewhere"
    ):
        check_node_placement(placement, "CUDAExecutionProvider", "campplus")
    by_design = {"CUDAExecutionProvider": Counter(Conv=3, MatMul=2), "CPUExecutionProvider": Counter(Shape=2, Gather=1)}
    assert check_node_placement(by_design, "CUDAExecutionProvider", "x") == {
        "nodes": {"CPUExecutionProvider": 3, "CUDAExecutionProvider": 5},
        "elsewhere": {"CPUExecutionProvider": {"Gather": 1, "Shape": 2}},
    }
    with pytest.raises(EncoderConfigError, match="lists no node"):
        check_node_placement({}, "CUDAExecutionProvider", "x")


def test_the_device_class_names_the_cuda_device_and_its_capability(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from runner.encoders.device import device_class, label_device_class

    assert device_class("cpu") == "cpu"
    with pytest.raises(EncoderConfigError, match="sees no such CUDA device"):
        device_class("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index: ["NVIDIA H200", "NVIDIA A100-SXM4-80GB"][index])
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda index: [(9, 0), (8, 0)][index])
    assert device_class("cuda") == "cuda NVIDIA H200 sm_90"
    assert device_class("cuda:1") == "cuda NVIDIA A100-SXM4-80GB sm_80"
    assert label_device_class("speechbrain", "cuda NVIDIA H200 sm_90") == "cuda NVIDIA H200 sm_90"
    assert label_device_class("onnx", "cuda NVIDIA H200 sm_90") == "cuda NVIDIA H200 sm_90"
    assert label_device_class("mfcc", "cuda NVIDIA H200 sm_90") == "cpu"  # numpy: the CPU whatever the run asks
