"""Degradation operators (registered frozen dataclasses) and their chains; see DESIGN.md section 10.

Importing this package registers every operator: white, pink, babble, music, codec, telephony,
packet_loss_random, packet_loss_bursty, speed, tempo, world_conversion (a voice-conversion proxy), room_reverb,
rir_file, band_limit, microphone, loudspeaker, resample_chain, echo, gain, playback_chain, adversarial (FGSM and
PGD against a declared surrogate) and matched_noise (its control: noise of the attack's size, random direction).
"""

from runner.operators import (
    adversarial,
    channels,
    codecs,
    conversion,
    echo,
    levels,
    noise,
    packet_loss,
    playback,
    rooms,
    timescale,
)
from runner.operators.base import (
    REGISTRY,
    Operator,
    OperatorSpecError,
    Outcome,
    Status,
    operator_from_spec,
    register,
    rng_for,
)
from runner.operators.chain import Chain, ChainResult, chain_id, chain_status
from runner.operators.sources import MissingMaterialError, NoiseSources

__all__ = [
    "REGISTRY",
    "Chain",
    "ChainResult",
    "MissingMaterialError",
    "NoiseSources",
    "Operator",
    "OperatorSpecError",
    "Outcome",
    "Status",
    "adversarial",
    "chain_id",
    "chain_status",
    "channels",
    "codecs",
    "conversion",
    "echo",
    "levels",
    "noise",
    "operator_from_spec",
    "packet_loss",
    "playback",
    "register",
    "rng_for",
    "rooms",
    "timescale",
]
