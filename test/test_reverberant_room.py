"""The benchmarks' reverberant room (test/reverberant_room.py): the impulse response decays
as its RT60 says, and a recording heard in the room keeps its length and level."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fay_ros.common.wav import read_wav
from reverberant_room import RATE, ROOMS, impulse_response, reverberant

SPEECH = Path(__file__).resolve().parent / "data" / "speech" / "en"


def test_the_impulse_response_falls_60_db_in_its_rt60():
    for _label, rt60, _drr in ROOMS:
        energy = np.cumsum(impulse_response(rt60)[::-1] ** 2)[::-1]  # Schroeder's backward integral
        decay_db = 10 * np.log10(energy / energy[0])
        # the -5 .. -25 dB stretch of the decay, extrapolated to 60 dB (T20)
        start, end = np.argmax(decay_db <= -5), np.argmax(decay_db <= -25)
        measured = 3 * (end - start) / RATE
        assert abs(measured - rt60) < 0.1 * rt60, (rt60, measured)


def test_a_recording_in_the_room_keeps_its_length_and_level_and_gains_a_tail():
    dry = read_wav(SPEECH / "cards_003.wav").samples
    wet = reverberant(dry, 0.7, -3.0)
    assert len(wet) == len(dry) and wet.dtype == np.int16
    rms = [float(np.sqrt(np.mean(x.astype(np.float64) ** 2))) for x in (dry, wet)]
    assert abs(20 * np.log10(rms[1] / rms[0])) < 0.5, rms
    # the room smears the voice: its quiet frames (the quietest quarter) are louder than the dry one's
    quarter = len(dry) // 480 // 4
    assert _frame_levels(wet)[quarter] > 2 * _frame_levels(dry)[quarter]
    assert np.array_equal(reverberant(dry, 0.7, -3.0), wet)  # seeded: the same room every run


def _frame_levels(samples: np.ndarray) -> np.ndarray:
    """Mean absolute amplitude of each 30 ms frame, quietest first."""
    frames = samples[: len(samples) // 480 * 480].astype(np.float64).reshape(-1, 480)
    return np.sort(np.abs(frames).mean(axis=1))
