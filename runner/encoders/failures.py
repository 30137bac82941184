"""A side that an encoder cannot embed is a counted failure, never the end of the run.

``embed_each`` hands a chunk of waveforms to an encoder's ``embed`` and gives, per waveform, its vector or the reason
it failed. Two kinds of failure are the side's own and leave the others to be embedded:

- degenerate input: a waveform shorter than the encoder's minimum, digitally silent, not finite, with nothing left
  after the encoder's own trimming (``WaveformError``), or one whose embedding comes out zero or not finite
  (``EmbeddingValueError``);
- out of memory (``torch.cuda.OutOfMemoryError``, onnxruntime's failed allocation, ``MemoryError``): the chunk is
  split in halves and each half tried again, down to one waveform; a waveform that does not fit alone fails. The
  sizes that fitted after a split are recorded (``MemoryLog``), so a run says what the device could hold.

Anything else stops the run as before. The reason a run counts is the failure without what varies from one waveform
to the next, so that one encoder's failures group under a few reasons in ``operators.json``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from runner.encoders.base import EmbeddingValueError
from runner.encoders.batching import WaveformError

# Words onnxruntime's error carries when its allocator or CUDA could not hand out memory.
ONNX_OUT_OF_MEMORY = ("failed to allocate memory", "out of memory", "cudaerrormemoryallocation")
TORCH_CPU_OUT_OF_MEMORY = "DefaultCPUAllocator: can't allocate memory"
OUT_OF_MEMORY_ALONE = "out of memory even as a batch of one"


class Embeds(Protocol):
    def embed(self, waves: Sequence[np.ndarray], sr: int) -> np.ndarray: ...


@dataclass
class MemoryLog:
    """What running out of memory cost one encoder: the calls that ran out, and the sizes (utterances, longest
    utterance in seconds) of the calls that fitted once their chunk had been split."""

    out_of_memory: int = 0
    fitted: set[tuple[int, float]] = field(default_factory=set)
    failed: int = 0

    def merge(self, other: MemoryLog) -> None:
        self.out_of_memory += other.out_of_memory
        self.fitted |= other.fitted
        self.failed += other.failed

    def as_dict(self) -> dict[str, Any]:
        return {
            "out_of_memory_calls": self.out_of_memory,
            "fitted_after_split": [{"utterances": n, "longest_s": s} for n, s in sorted(self.fitted)],
            "failed_alone": self.failed,
        }


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` says the device (or the host) had no memory for the batch."""
    if isinstance(error, MemoryError):
        return True
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(error, torch.cuda.OutOfMemoryError):
        return True
    if torch is not None and isinstance(error, RuntimeError) and TORCH_CPU_OUT_OF_MEMORY in str(error):
        return True
    module = type(error).__module__
    return module.startswith("onnxruntime") and any(words in str(error).lower() for words in ONNX_OUT_OF_MEMORY)


def release_memory() -> None:
    """Hand torch's cached CUDA blocks back before a smaller retry (a no-op without torch or CUDA in use)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def embed_each(encoder: Embeds, waves: Sequence[np.ndarray], sr: int, memory: MemoryLog) -> list[np.ndarray | str]:
    """Per waveform at rate ``sr``, its embedding or the reason it could not be embedded (see the module)."""
    results: list[np.ndarray | str | None] = [None] * len(waves)
    _attempt(encoder, waves, sr, list(range(len(waves))), results, memory, split=False)
    assert all(result is not None for result in results)
    return [result for result in results if result is not None]


def _attempt(
    encoder: Embeds,
    waves: Sequence[np.ndarray],
    sr: int,
    indices: list[int],
    results: list[np.ndarray | str | None],
    memory: MemoryLog,
    split: bool,
) -> None:
    """Embed ``waves[indices]`` into ``results``; a side's own failure takes it out and the rest is tried again."""
    while indices:
        try:
            vectors = encoder.embed([waves[i] for i in indices], sr)
        except WaveformError as error:
            results[indices[error.index]] = error.reason
            indices = indices[: error.index] + indices[error.index + 1 :]
            continue
        except EmbeddingValueError as error:
            for row in error.rows:
                results[indices[row]] = EmbeddingValueError.reason
            indices = [index for row, index in enumerate(indices) if row not in set(error.rows)]
            continue
        except Exception as error:
            if not is_out_of_memory(error):
                raise
            memory.out_of_memory += 1
            release_memory()
            if len(indices) == 1:
                memory.failed += 1
                results[indices[0]] = OUT_OF_MEMORY_ALONE
                return
            half = len(indices) // 2
            _attempt(encoder, waves, sr, indices[:half], results, memory, split=True)
            _attempt(encoder, waves, sr, indices[half:], results, memory, split=True)
            return
        if split:
            memory.fitted.add((len(indices), round(max(len(waves[i]) for i in indices) / sr, 3)))
        for index, vector in zip(indices, vectors, strict=True):
            results[index] = vector
        return
