"""Lip-sync alignment: viseme onsets against the audio energy envelope of the same audio.

The visible events of a mouth are the moments it opens after a pause and closes before one;
in the audio those are where the energy rises out of silence and falls back into it. For each
such boundary of the viseme track (a silence of at least `min_gap` before an opening or after
a closing), the error is the distance to the nearest energy transition of the same direction.
Silence in the envelope is "more than `threshold_db` below the sentence's loudest 5 ms",
measured with 5 ms windows every 1 ms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .visemes import VisemeTrackData

WINDOW = 0.005
HOP = 0.001


@dataclass(frozen=True)
class Boundary:
    kind: str  # "open" (speech starts) or "close" (speech stops)
    track_time: float
    audio_time: float | None  # nearest energy transition of the same kind

    @property
    def error(self) -> float:
        return abs(self.track_time - self.audio_time) if self.audio_time is not None else float("inf")


def energy_envelope(samples: np.ndarray, sample_rate: int) -> tuple[np.ndarray, np.ndarray]:
    """(centre times, RMS) of 5 ms windows every 1 ms."""
    audio = samples.astype(np.float64)
    hop, win = max(1, int(HOP * sample_rate)), max(1, int(WINDOW * sample_rate))
    if len(audio) <= win:
        return np.zeros(0), np.zeros(0)
    energy = np.concatenate([[0.0], np.cumsum(audio * audio)])
    starts = np.arange(0, len(audio) - win, hop)
    return starts / sample_rate + WINDOW / 2, np.sqrt((energy[starts + win] - energy[starts]) / win)


def transitions(times: np.ndarray, active: np.ndarray, min_gap: float) -> tuple[list[float], list[float]]:
    """Opening and closing times around silences of at least `min_gap` (or at either end)."""
    opens: list[float] = []
    closes: list[float] = []
    n = len(active)
    i = 0
    while i < n:
        if active[i]:
            i += 1
            continue
        j = i
        while j < n and not active[j]:
            j += 1
        at_edge = i == 0 or j == n
        if at_edge or times[min(j, n - 1)] - times[i] >= min_gap:
            if i > 0:
                closes.append(float(times[i]))
            if j < n:
                opens.append(float(times[j]))
        i = j
    return opens, closes


def track_activity(track: VisemeTrackData, times: np.ndarray) -> np.ndarray:
    starts = np.array([f.start for f in track.frames])
    index = np.clip(np.searchsorted(starts, times, side="right") - 1, 0, len(track.frames) - 1)
    silent = np.array([f.name == "sil" for f in track.frames])
    return ~silent[index]


def measure(
    track: VisemeTrackData, samples: np.ndarray, sample_rate: int, threshold_db: float = -40.0, min_gap: float = 0.05
) -> list[Boundary]:
    times, rms = energy_envelope(samples, sample_rate)
    if not len(rms) or rms.max() <= 0:
        return []
    audio_open, audio_close = transitions(times, rms > rms.max() * 10 ** (threshold_db / 20), min_gap)
    track_open, track_close = transitions(times, track_activity(track, times), min_gap)
    out = []
    for kind, ours, theirs in (("open", track_open, audio_open), ("close", track_close, audio_close)):
        for t in ours:
            nearest = min(theirs, key=lambda a: abs(a - t)) if theirs else None
            out.append(Boundary(kind, t, nearest))
    return out
