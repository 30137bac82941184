"""SpeechBrain checkpoint folders as they are found on disk: the Hugging Face cache (``models--<org>--<name>/
snapshots/<rev>/<file>`` links to ``../../blobs/<sha256>``, as huggingface_hub's cache-system guide lays it out) and
SpeechBrain's own ``pretrained_models/<name>/`` (links into that cache, SpeechBrain's default ``LocalStrategy.SYMLINK``
fetching), each loaded like a plain folder of the same files; a link to something that is not a regular file is
refused. And ``unused_checkpoint_keys`` for a statistics file: the oracle is SpeechBrain's own ``_save``, which
writes exactly what its ``_load`` reads."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("speechbrain")
from runner.encoders import load_encoder  # noqa: E402
from runner.encoders.checkpoint import CheckpointError  # noqa: E402
from tests.runner.encoders.test_torch import TINY_ECAPA, write_tiny_ecapa  # noqa: E402

pytestmark = pytest.mark.runner

WAVE = np.sin(np.linspace(0, 400, 16000)).astype(np.float32)
WITH_STATISTICS = TINY_ECAPA + (
    "        mean_var_norm_emb: !ref <mean_var_norm_emb>\n"
    "mean_var_norm_emb: !new:speechbrain.processing.features.InputNormalization\n"
    "    norm_type: global\n"
    "    std_norm: False\n"
)


def hub_cache(plain: Path, cache: Path) -> Path:
    """The files of ``plain`` as the Hugging Face cache stores them; returns the snapshot folder."""
    repository = cache / "models--speechbrain--tiny-ecapa"
    snapshot = repository / "snapshots" / "0123456789abcdef"
    snapshot.mkdir(parents=True)
    (repository / "blobs").mkdir()
    for file in sorted(plain.iterdir()):
        blob = repository / "blobs" / hashlib.sha256(file.read_bytes()).hexdigest()
        blob.write_bytes(file.read_bytes())
        (snapshot / file.name).symlink_to(Path("../../blobs") / blob.name)
    return snapshot


def test_hub_cache_and_pretrained_models_folders_of_links_load_as_the_plain_folder(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    write_tiny_ecapa(plain)
    snapshot = hub_cache(plain, tmp_path / "hub")
    pretrained = tmp_path / "pretrained_models" / "tiny-ecapa"
    pretrained.mkdir(parents=True)
    for link in snapshot.iterdir():
        (pretrained / link.name).symlink_to(link)  # a link to a link to a blob
    expected = load_encoder("speechbrain", "tiny", plain)
    for folder in (snapshot, pretrained):
        encoder = load_encoder("speechbrain", "tiny", folder)
        record = encoder.checkpoint.as_dict()
        assert record["files"] == expected.checkpoint.as_dict()["files"]  # link names, content digests
        assert set(record["files"]) == {"hyperparams.yaml", "embedding_model.ckpt"}
        assert record["checkpoint_blake3"] == expected.checkpoint.checkpoint_blake3
        np.testing.assert_array_equal(encoder.embed([WAVE], 16000), expected.embed([WAVE], 16000))


def test_a_link_to_what_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    snapshot = hub_cache(write_tiny_ecapa(tmp_path / "plain") and tmp_path / "plain", tmp_path / "hub")
    weights = snapshot / "embedding_model.ckpt"
    weights.unlink()
    os.mkfifo(tmp_path / "fifo")
    weights.symlink_to(tmp_path / "fifo")
    with pytest.raises(CheckpointError, match="is not a regular file"):
        load_encoder("speechbrain", "fifo", snapshot)
    weights.unlink()
    weights.symlink_to(tmp_path / "hub")  # a folder where the weights should be
    with pytest.raises(CheckpointError, match="speechbrain could not load encoder 'folder'"):
        load_encoder("speechbrain", "folder", snapshot)
    weights.unlink()
    weights.symlink_to(tmp_path / "nowhere")
    with pytest.raises(CheckpointError, match="is a link to nothing"):
        load_encoder("speechbrain", "dangling", snapshot)


def statistics_folder(folder: Path, extra: dict[str, object] | None = None, drop: str | None = None) -> Path:
    """A tiny ECAPA whose pretrainer also loads ``mean_var_norm_emb``, saved by SpeechBrain's own ``_save``."""
    from hyperpyyaml import load_hyperpyyaml

    write_tiny_ecapa(folder, WITH_STATISTICS)
    normaliser = load_hyperpyyaml(WITH_STATISTICS)["mean_var_norm_emb"]
    normaliser(torch.randn(8, 1, 16), torch.ones(8))
    normaliser._save(folder / "mean_var_norm_emb.ckpt")
    saved = torch.load(folder / "mean_var_norm_emb.ckpt")
    saved = {key: value for key, value in {**saved, **(extra or {})}.items() if key != drop}
    torch.save(saved, folder / "mean_var_norm_emb.ckpt")
    return folder


def test_statistics_speechbrain_reads_are_not_recorded_as_unused(tmp_path: Path) -> None:
    record = load_encoder("speechbrain", "stats", statistics_folder(tmp_path / "own")).checkpoint
    assert record.config["unused_checkpoint_keys"] == {}
    assert record.config["loadables"] == ["embedding_model", "mean_var_norm_emb"]
    # what an older SpeechBrain also saved (per-speaker statistics) and this one's _load does not read
    older = statistics_folder(tmp_path / "older", extra={"spk_dict_mean": {}, "spk_dict_std": {}, "spk_dict_count": {}})
    unused = load_encoder("speechbrain", "older", older).checkpoint.config["unused_checkpoint_keys"]
    assert unused == {"mean_var_norm_emb": ["spk_dict_count", "spk_dict_mean", "spk_dict_std"]}
    with pytest.raises(CheckpointError, match=r"could not load encoder 'partial': KeyError\('glob_std'\)"):
        load_encoder("speechbrain", "partial", statistics_folder(tmp_path / "partial", drop="glob_std"))
