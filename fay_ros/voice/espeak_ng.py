"""libespeak-ng through ctypes: audio plus phoneme events that are aligned to it.

espeak-ng is initialised once per process in AUDIO_OUTPUT_SYNCHRONOUS mode with
espeakINITIALIZE_PHONEME_EVENTS | espeakINITIALIZE_PHONEME_IPA: espeak_Synth() returns after
calling our callback with every audio buffer and every event, and each phoneme event carries
its IPA name and `sample`, the index of the audio sample where the phoneme starts. That index
is the timing the viseme track uses (pyttsx3 2.99 initialises the same library without
phoneme events and drops event positions, which is why this binding exists).

libespeak-ng keeps global state and is not thread-safe: every call goes through one lock.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    Union,
    c_char,
    c_char_p,
    c_int,
    c_short,
    c_size_t,
    c_ubyte,
    c_uint,
    c_void_p,
)
from typing import TypedDict

import numpy as np

from . import libespeak_owner
from .engine_types import Synthesis, VoicedRun, VoiceError, VoiceSettings
from .language_runs import Language, split_runs
from .visemes import TimedPhoneme

LIBRARY = "libespeak-ng.so.1"

AUDIO_OUTPUT_SYNCHRONOUS = 2
INITIALIZE_PHONEME_EVENTS = 0x0001
INITIALIZE_PHONEME_IPA = 0x0002
INITIALIZE_DONT_EXIT = 0x8000
CHARS_UTF8 = 1
ENDPAUSE = 0x1000
POS_CHARACTER = 1
PARAM_RATE = 1
PARAM_VOLUME = 2

EVENT_LIST_TERMINATED = 0
EVENT_PHONEME = 7


class _EventId(Union):
    _fields_ = [("number", c_int), ("name", c_char_p), ("string", c_char * 8)]


class _Event(Structure):
    _fields_ = [
        ("type", c_int),
        ("unique_identifier", c_uint),
        ("text_position", c_int),
        ("length", c_int),
        ("audio_position", c_int),
        ("sample", c_int),
        ("user_data", c_void_p),
        ("id", _EventId),
    ]


class _Voice(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("languages", c_char_p),
        ("identifier", c_char_p),
        ("gender", c_ubyte),
        ("age", c_ubyte),
        ("variant", c_ubyte),
        ("xx1", c_ubyte),
        ("score", c_int),
        ("spare", c_void_p),
    ]


_SynthCallback = CFUNCTYPE(c_int, POINTER(c_short), c_int, POINTER(_Event))

_lock = threading.RLock()
_state: dict = {"dll": None, "sample_rate": 0, "callback": None, "sink": None}


def _library() -> tuple[ctypes.CDLL, int]:
    """Load and initialise libespeak-ng once; return it and its sample rate."""
    with _lock:
        if _state["dll"] is not None:
            return _state["dll"], _state["sample_rate"]
        with libespeak_owner.starting("espeak-ng"):
            return _load_library()


def _load_library() -> tuple[ctypes.CDLL, int]:
    """dlopen and initialise libespeak-ng (called once, with _lock held)."""
    try:
        dll = ctypes.CDLL(LIBRARY)
    except OSError as exc:
        raise VoiceError(f"cannot load {LIBRARY} ({exc}); install the Debian package libespeak-ng1") from None
    dll.espeak_Initialize.argtypes = [c_int, c_int, c_char_p, c_int]
    dll.espeak_Initialize.restype = c_int
    dll.espeak_SetSynthCallback.argtypes = [_SynthCallback]
    dll.espeak_SetSynthCallback.restype = None
    dll.espeak_SetVoiceByName.argtypes = [c_char_p]
    dll.espeak_SetVoiceByName.restype = c_int
    dll.espeak_SetParameter.argtypes = [c_int, c_int, c_int]
    dll.espeak_SetParameter.restype = c_int
    dll.espeak_Synth.argtypes = [c_char_p, c_size_t, c_uint, c_int, c_uint, c_uint, c_void_p, c_void_p]
    dll.espeak_Synth.restype = c_int
    dll.espeak_ListVoices.argtypes = [c_void_p]
    dll.espeak_ListVoices.restype = POINTER(POINTER(_Voice))
    rate = dll.espeak_Initialize(
        AUDIO_OUTPUT_SYNCHRONOUS, 0, None, INITIALIZE_PHONEME_EVENTS | INITIALIZE_PHONEME_IPA | INITIALIZE_DONT_EXIT
    )
    if rate <= 0:
        raise VoiceError("espeak_Initialize failed (is espeak-ng-data installed?)")
    callback = _SynthCallback(_on_synth)
    dll.espeak_SetSynthCallback(callback)
    _state.update(dll=dll, sample_rate=rate, callback=callback)
    return dll, rate


class _Sink(TypedDict):
    """Where the synth callback puts one run's output."""

    chunks: list[np.ndarray]  # int16 audio blocks
    phonemes: list[tuple[int, str]]  # (sample offset, IPA)
    cancelled: Callable[[], bool]


def _on_synth(wav, numsamples, events) -> int:
    sink = _state["sink"]
    if sink is None:
        return 1
    if numsamples > 0 and wav:
        sink["chunks"].append(np.ctypeslib.as_array(wav, shape=(numsamples,)).copy())
    i = 0
    while events[i].type != EVENT_LIST_TERMINATED:
        event = events[i]
        if event.type == EVENT_PHONEME:
            ipa = event.id.string.decode("utf-8", errors="replace")
            sink["phonemes"].append((event.sample, ipa))
        i += 1
    return 1 if sink["cancelled"]() else 0


def list_voices() -> list[tuple[str, str]]:
    """(name, identifier) of every voice espeak-ng has."""
    dll, _ = _library()
    with _lock:
        voices = dll.espeak_ListVoices(None)
        out = []
        i = 0
        while voices[i]:
            v = voices[i].contents
            out.append((v.name.decode("utf-8", "replace"), v.identifier.decode("utf-8", "replace")))
            i += 1
        return out


class EspeakNgEngine:
    name = "espeak-ng"

    def __init__(self, settings: VoiceSettings) -> None:
        self.dll, self.sample_rate = _library()
        self.settings = settings
        self.use_settings(settings)

    def use_settings(self, settings: VoiceSettings) -> None:
        """See types.Engine: the settings are swapped whole (one reference), after the check,
        and synthesize() reads them once per sentence."""
        # espeak_SetVoiceByName() quietly falls back to another voice for an unknown name, so
        # names are checked against the voice list first.
        known = {}
        for name, identifier in list_voices():
            for alias in (name, identifier, identifier.split("/")[-1]):
                known[alias.lower()] = identifier
        with _lock:
            for voice in (settings.english_voice, settings.chinese_voice):
                if voice.lower() not in known or self.dll.espeak_SetVoiceByName(voice.encode()) != 0:
                    raise VoiceError(
                        f"espeak-ng has no voice {voice!r} (see `fay-ros say --list-voices`; "
                        f"the defaults are en-us and cmn-latn-pinyin)"
                    )
        self.settings = settings

    def close(self) -> None:
        """Nothing of its own to release: libespeak-ng stays initialised for the process."""

    def voices(self) -> list[str]:
        return sorted(ident for _name, ident in list_voices())

    def synthesize(
        self, text: str, cancelled: Callable[[], bool] = lambda: False, language: Language | None = None
    ) -> Synthesis:
        settings = self.settings  # one sentence, one set of settings (use_settings may swap them)
        runs = split_runs(text, language or settings.default_language)
        chunks: list[np.ndarray] = []
        phonemes: list[TimedPhoneme] = []
        voiced: list[VoicedRun] = []
        offset = 0
        was_cancelled = False
        with _lock:
            for index, run in enumerate(runs):
                voice = settings.voice_for(run.language)
                sink: _Sink = {"chunks": [], "phonemes": [], "cancelled": cancelled}
                _state["sink"] = sink
                try:
                    if self.dll.espeak_SetVoiceByName(voice.encode()) != 0:
                        raise VoiceError(f"espeak-ng voice {voice!r} became unavailable")
                    self.dll.espeak_SetParameter(PARAM_RATE, int(settings.rate_wpm), 0)
                    self.dll.espeak_SetParameter(PARAM_VOLUME, int(round(settings.volume * 100)), 0)
                    data = run.text.encode("utf-8")
                    flags = CHARS_UTF8 | (ENDPAUSE if index == len(runs) - 1 else 0)
                    status = self.dll.espeak_Synth(data, len(data) + 1, 0, POS_CHARACTER, 0, flags, None, None)
                finally:
                    _state["sink"] = None
                if status != 0 and not cancelled():
                    raise VoiceError(f"espeak_Synth failed with status {status}")
                voiced.append(VoicedRun(run.language, voice, run.text, offset / self.sample_rate))
                for sample, ipa in sink["phonemes"]:
                    phonemes.append(TimedPhoneme((offset + sample) / self.sample_rate, ipa))
                run_audio = np.concatenate(sink["chunks"]) if sink["chunks"] else np.zeros(0, np.int16)
                chunks.append(run_audio)
                offset += len(run_audio)
                if cancelled():
                    was_cancelled = True
                    break
        samples = np.concatenate(chunks) if chunks else np.zeros(0, np.int16)
        return Synthesis(samples.astype(np.int16, copy=False), self.sample_rate, phonemes, voiced, was_cancelled)
