"""The derivation rule, checked against values written out by hand and against numpy's own seeding."""

from __future__ import annotations

import blake3
import numpy as np

from provenance.derivation import derived_digest, derived_id, derived_rng, derived_seed, joined


def test_parts_are_joined_by_the_unit_separator() -> None:
    assert joined("20261130", "pool", "spk") == b"20261130\x1fpool\x1fspk"
    assert joined() == b""


def test_ids_are_prefixes_of_the_blake3_digest() -> None:
    # BLAKE3 of the empty input, from the BLAKE3 test vectors.
    empty = "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
    assert derived_digest(b"") == empty
    assert derived_id(b"") == empty[:16]
    assert derived_id(b"", 40) == empty[:40]


def test_the_seed_is_the_first_16_digest_bytes_little_endian() -> None:
    # af 13 49 ... 9b cb reversed: the last of the 16 bytes is the most significant.
    first16 = bytes.fromhex("af1349b9f5f9a1a6a0404dea36dcc949")
    assert derived_seed(b"") == sum(byte << (8 * index) for index, byte in enumerate(first16))
    data = joined("7", "trials", "D01")
    expected = np.random.Generator(np.random.PCG64(np.random.SeedSequence(derived_seed(data)))).random(3)
    np.testing.assert_array_equal(derived_rng(data).random(3), expected)
    assert derived_seed(data) == int.from_bytes(blake3.blake3(data).digest()[:16], "little")


def test_streams_differ_with_their_parts_and_repeat_with_them() -> None:
    a = derived_rng(joined("1", "u")).random(8)
    np.testing.assert_array_equal(a, derived_rng(joined("1", "u")).random(8))
    assert not np.array_equal(a, derived_rng(joined("2", "u")).random(8))
    assert not np.array_equal(a, derived_rng(joined("1", "v")).random(8))
