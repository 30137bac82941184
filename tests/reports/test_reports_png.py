"""The figures' PNG writer against Pillow's decoder: the same pixels, the resolution, valid chunks."""

from __future__ import annotations

import io

import numpy as np
import PIL.Image
import pytest

from reports.figures.png import png_bytes


@pytest.mark.parametrize("shape", [(1, 1, 3), (7, 5, 3), (120, 333, 4)])
def test_pillow_reads_back_the_pixels_and_the_resolution(shape: tuple[int, int, int]) -> None:
    pixels = np.random.default_rng(sum(shape)).integers(0, 256, shape, dtype=np.uint8)
    data = png_bytes(pixels, 100)
    checked = PIL.Image.open(io.BytesIO(data))
    checked.verify()  # every chunk's CRC and the stream's end
    image = PIL.Image.open(io.BytesIO(data))
    assert image.mode == "RGB" and image.size == (shape[1], shape[0])
    assert np.array_equal(np.asarray(image), pixels[..., :3])  # an alpha channel is dropped: figures are opaque
    assert image.info["dpi"] == pytest.approx((100, 100), abs=1e-3)
    assert data == png_bytes(pixels.copy(), 100)
