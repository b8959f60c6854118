"""Acoustic echo cancellation of the robot's own voice: Xiph's speexdsp echo canceller (the
Debian package libspeexdsp1, loaded with ctypes; no PyPI binding of it is kept up: `speexdsp`
needs swig and dates from 2018, `webrtc-audio-processing` ships only a CPython 3.6 build).

`EchoCanceller.cancel(mic, reference)` takes what the microphone captured and, sample-aligned,
what the loudspeaker played (the playback reference) and returns the microphone signal with
the robot's voice removed, so barge-in (hearing/duplex.py) can hear a person under the robot's
echo. The adaptive filter covers `tail_ms` of echo path (delay plus room reverberation); it
converges within a few seconds of the robot's speech and keeps what it learned between turns.

Not wired into the mic node yet: that needs the played audio (see docs/ARCHITECTURE.md, hearing).
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
        raise EchoCancellerUnavailable(f"echo cancellation needs libspeexdsp (apt-get install libspeexdsp1): "
                                       f"{exc}") from None
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
    def __init__(self, sample_rate: int, frame_ms: int = 10, tail_ms: int = 200) -> None:
        if frame_ms <= 0 or tail_ms < frame_ms:
            raise ValueError("need 0 < frame_ms <= tail_ms")
        self._lib = _load()
        self.frame = sample_rate * frame_ms // 1000
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
            self._lib.speex_echo_cancellation(self._state, near[i:].ctypes.data, far[i:].ctypes.data,
                                              out[i:].ctypes.data)
        self._mic, self._ref = self._mic[n:], self._ref[n:]
        return out

    def close(self) -> None:
        if self._state:
            self._lib.speex_echo_state_destroy(self._state)
            self._state = None

    def __del__(self) -> None:
        self.close()
