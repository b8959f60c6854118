"""Acoustic echo cancellation of the robot's own voice: Xiph's speexdsp echo canceller (the
Debian package libspeexdsp1, loaded with ctypes; no PyPI binding of it is kept up: `speexdsp`
needs swig and dates from 2018, `webrtc-audio-processing` ships only a CPython 3.6 build).

`EchoCanceller.cancel(mic, reference)` takes what the microphone captured and, sample-aligned,
what the loudspeaker played (the playback reference) and returns the microphone signal with
the robot's voice removed, so barge-in (turns/duplex_gate.py) can hear a person under the robot's
echo. The adaptive filter covers `tail_ms` of echo path (delay plus room reverberation); it
converges within a few seconds of the robot's speech and keeps what it learned between turns.

The mic node runs it when `echo_cancel` is on, with the reference the tts node publishes on
`audio/played` (what its output renders, stamped with the moment the first sample plays):
`PlayedReference` keeps that audio on the monotonic audio clock and cuts out, resampled to the
microphone's rate, the samples that were playing while each microphone chunk was captured.
`RoomEcho` is the headless stand-in for a loudspeaker heard by a microphone (a delay, a gain
and one reflection), used when the mic runs on a WAV source with `simulated_echo_db` set.
"""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np

from ..common.errors import FayError

SPEEX_ECHO_SET_SAMPLING_RATE = 24
LIBRARY = "libspeexdsp.so.1"


class EchoCancellerUnavailable(FayError, RuntimeError):
    """libspeexdsp is not installed (Debian: libspeexdsp1, installed by `make setup`)."""


def _load() -> ctypes.CDLL:
    name = ctypes.util.find_library("speexdsp") or LIBRARY
    try:
        lib = ctypes.CDLL(name)
    except OSError as exc:
        raise EchoCancellerUnavailable(
            f"echo cancellation needs libspeexdsp (apt-get install libspeexdsp1): {exc}"
        ) from None
    lib.speex_echo_state_init.restype = ctypes.c_void_p
    lib.speex_echo_state_init.argtypes = [ctypes.c_int, ctypes.c_int]
    lib.speex_echo_cancellation.restype = None
    lib.speex_echo_cancellation.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.speex_echo_ctl.restype = ctypes.c_int
    lib.speex_echo_ctl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    lib.speex_echo_state_destroy.restype = None
    lib.speex_echo_state_destroy.argtypes = [ctypes.c_void_p]
    return lib


class EchoCanceller:
    def __init__(self, sample_rate: int, frame_ms: float = 10, tail_ms: int = 200) -> None:
        """`frame_ms`: the block the filter works on (the mic node uses its chunk, so every
        chunk comes back whole)."""
        if frame_ms <= 0 or tail_ms < frame_ms:
            raise ValueError("need 0 < frame_ms <= tail_ms")
        self._lib = _load()
        self.frame = int(round(sample_rate * frame_ms / 1000))
        self.tail_s = tail_ms / 1000.0
        self._state = self._lib.speex_echo_state_init(self.frame, sample_rate * tail_ms // 1000)
        if not self._state:
            raise EchoCancellerUnavailable("speex_echo_state_init failed")
        rate = ctypes.c_int(sample_rate)
        self._lib.speex_echo_ctl(self._state, SPEEX_ECHO_SET_SAMPLING_RATE, ctypes.byref(rate))
        self._mic = np.zeros(0, dtype=np.int16)
        self._ref = np.zeros(0, dtype=np.int16)

    def cancel(self, mic: np.ndarray, reference: np.ndarray) -> np.ndarray:
        """The echo-free microphone signal for whole frames; a partial frame waits for the next call."""
        mic, reference = np.asarray(mic, dtype=np.int16), np.asarray(reference, dtype=np.int16)
        if len(mic) != len(reference):
            raise ValueError(f"mic and reference lengths differ ({len(mic)} != {len(reference)})")
        self._mic = np.concatenate([self._mic, mic])
        self._ref = np.concatenate([self._ref, reference])
        n = len(self._mic) // self.frame * self.frame
        out = np.empty(n, dtype=np.int16)
        near = np.ascontiguousarray(self._mic[:n])
        far = np.ascontiguousarray(self._ref[:n])
        for i in range(0, n, self.frame):
            self._lib.speex_echo_cancellation(
                self._state, near[i:].ctypes.data, far[i:].ctypes.data, out[i:].ctypes.data
            )
        self._mic, self._ref = self._mic[n:], self._ref[n:]
        return out

    def close(self) -> None:
        if self._state:
            self._lib.speex_echo_state_destroy(self._state)
            self._state = None

    def __del__(self) -> None:
        self.close()


# A played block further than this from the end of the kept audio starts a new timeline (the
# output restarted, or the clocks jumped); closer gaps are filled with silence.
MAX_REFERENCE_GAP_S = 1.0
_LOWPASS_TAPS = 63


class PlayedReference:
    """The robot's played audio on the audio clock (monotonic seconds), as a contiguous
    timeline at the output's rate; `take` reads it at the microphone's sample times.

    Blocks come from the tts node (`audio/played`), each with the time its first sample plays.
    Silence is never published, so a time with no block is silence. Only `keep_s` seconds are
    kept (the echo path is far shorter)."""

    def __init__(self, keep_s: float = 2.0) -> None:
        self.keep_s = keep_s
        self.rate = 0
        self._origin = 0.0  # time of self._samples[0]
        self._samples = np.zeros(0, dtype=np.float64)

    @property
    def end(self) -> float:
        return self._origin + len(self._samples) / self.rate if self.rate else float("-inf")

    def add(self, samples: np.ndarray, rate: int, start: float) -> None:
        samples = np.asarray(samples, dtype=np.float64)
        if rate != self.rate or not len(self._samples) or not -0.05 <= start - self.end <= MAX_REFERENCE_GAP_S:
            self.rate, self._origin, self._samples = rate, start, samples.copy()
            return
        index = int(round((start - self._origin) * rate))
        if index < len(self._samples):  # overlaps what is kept (output clock jitter): newest wins
            self._samples = self._samples[: max(index, 0)]
            index = len(self._samples)
        gap = np.zeros(index - len(self._samples))
        self._samples = np.concatenate([self._samples, gap, samples])
        excess = len(self._samples) - int(self.keep_s * rate)
        if excess > 0:
            self._samples = self._samples[excess:]
            self._origin += excess / rate

    def take(self, start: float, count: int, rate: int) -> np.ndarray:
        """`count` samples at `rate` Hz from time `start` (int16; zeros where nothing played):
        band-limited to the target rate, then interpolated at the exact sample times."""
        if not self.rate or not len(self._samples) or start >= self.end or start + count / rate <= self._origin:
            return np.zeros(count, dtype=np.int16)
        margin = _LOWPASS_TAPS
        first = int(np.floor((start - self._origin) * self.rate)) - margin
        last = int(np.ceil((start + count / rate - self._origin) * self.rate)) + margin
        window = np.zeros(last - first)
        lo, hi = max(first, 0), min(last, len(self._samples))
        if hi > lo:
            window[lo - first : hi - first] = self._samples[lo:hi]
        if rate < self.rate:  # low-pass at 0.9 x the new Nyquist (as hearing.audio.resample)
            cutoff = 0.45 * rate / self.rate
            n = np.arange(_LOWPASS_TAPS) - (_LOWPASS_TAPS - 1) / 2
            kernel = 2 * cutoff * np.sinc(2 * cutoff * n) * np.hamming(_LOWPASS_TAPS)
            window = np.convolve(window, kernel / kernel.sum(), mode="same")
        positions = (start - self._origin) * self.rate - first + np.arange(count) * (self.rate / rate)
        out = np.interp(positions, np.arange(len(window)), window)
        return np.clip(np.round(out), -32768, 32767).astype(np.int16)


class RoomEcho:
    """What a microphone in the room hears of the loudspeaker (headless runs and tests): the
    played reference after `delay_ms`, at `gain_db`, plus one reflection 2.5 ms later at half
    that amplitude."""

    def __init__(self, gain_db: float, delay_ms: float = 50.0) -> None:
        self.gain = 10.0 ** (gain_db / 20.0)
        self.delay = delay_ms / 1000.0

    def add(self, mic: np.ndarray, start: float, rate: int, played: PlayedReference) -> np.ndarray:
        direct = played.take(start - self.delay, len(mic), rate).astype(np.float64)
        reflected = played.take(start - self.delay - 0.0025, len(mic), rate).astype(np.float64)
        mixed = mic.astype(np.float64) + self.gain * (direct + 0.5 * reflected)
        return np.clip(np.round(mixed), -32768, 32767).astype(np.int16)
