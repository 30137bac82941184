"""One example spec per operator of issues 17 and 29 (every kwarg given), for the registry and round-trip tests."""

from __future__ import annotations

STRESSOR_SPECS = [
    {
        "name": "room_reverb",
        "kwargs": {
            "rt60_min": 0.3,
            "rt60_max": 0.6,
            "length_min": 4.0,
            "length_max": 7.0,
            "width_min": 3.0,
            "width_max": 5.0,
            "height_min": 2.5,
            "height_max": 3.2,
            "distance_min": 1.0,
            "distance_max": 2.5,
            "wall_margin": 0.5,
            "rt60_tolerance": 0.05,
            "max_attempts": 5,
        },
    },
    {"name": "rir_file", "kwargs": {"manifest": "rirs/rirs.csv"}},
    {"name": "band_limit", "kwargs": {"low_hz": 50.0, "high_hz": 7000.0, "order": 4}},
    {"name": "microphone", "kwargs": {"model": "laptop"}},
    {"name": "loudspeaker", "kwargs": {"model": "smartphone"}},
    {"name": "resample_chain", "kwargs": {"rate": 8000, "resampler": "soxr"}},
    {"name": "echo", "kwargs": {"delay_ms": 150.0, "decay_db": -6.0, "taps": 1}},
    {"name": "gain", "kwargs": {"dbfs": -6.0, "reference": "rms", "clip": True}},
    {
        "name": "playback_chain",
        "kwargs": {
            "codec": "opus",
            "bitrate": 16000,
            "codec_rate": 16000,
            "loudspeaker": "smartphone",
            "rt60_min": 0.3,
            "rt60_max": 0.6,
            "distance_min": 1.0,
            "distance_max": 2.5,
            "microphone": "laptop",
            "noise": "pink",
            "snr_db": 20.0,
        },
    },
    {
        "name": "adversarial",
        "kwargs": {
            "attack": "pgd",
            "norm": "l2",
            "epsilon_db": -40.0,
            "steps": 10,
            "reference_utterances": 8,
            "surrogate": "mfcc-stats",
            "surrogate_blake3": "7f459691ed677e81cf75c4a9513c0114ad20fcaf469bf4cbf4e6b786441ec69f",
        },
    },
    {
        "name": "matched_noise",
        "kwargs": {
            "attack": "fgsm",
            "norm": "linf",
            "epsilon_db": -40.0,
            "steps": 10,
            "reference_utterances": 8,
            "surrogate": "mfcc-stats",
            "surrogate_blake3": "7f459691ed677e81cf75c4a9513c0114ad20fcaf469bf4cbf4e6b786441ec69f",
        },
    },
]
