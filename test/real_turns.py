"""The real-speech end-of-turn set (issue 38): turns built from the human recordings of
test/data/speech/en as test/data/turns/real_speech.json defines them (its "about" says how),
for bench/bench_turns.py and the end-of-turn tests. No synthetic speech: the only sound added
is each recording's own background, taken from its quiet start or end."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fay_ros.common.wav import read_wav

RATE = 16000
FRAME = 480  # 30 ms, the VAD's frame
SET_FILE = Path(__file__).resolve().parent / "data" / "turns" / "real_speech.json"
SPEECH_DIR = Path(__file__).resolve().parent / "data" / "speech" / "en"
SNAP_S = 0.12  # a cut or pause lands on the quietest 10 ms this close to Whisper's word end


@dataclass(frozen=True)
class RealTurn:
    id: str
    kind: str  # whole | cut | pause (see real_speech.json)
    audio: np.ndarray  # int16 16 kHz: the turn as said, from the recording's start
    speech_end: float  # s into `audio`: the last voiced sample
    pauses: tuple[float, ...]  # s: the pauses inserted inside the turn
    room: np.ndarray  # the recording's own background, to pad the turn with

    @property
    def finished(self) -> bool:
        """A cut turn stops mid-sentence: the person is not done."""
        return self.kind != "cut"

    def background(self, seconds: float) -> np.ndarray:
        return room_tone(self.room, seconds)

    def in_room(self, before_s: float, after_s: float) -> np.ndarray:
        """The turn with its recording's own background before and after it, as a microphone in
        that room hears it."""
        return np.concatenate([self.background(before_s), self.audio, self.background(after_s)])


def frame_rms(samples: np.ndarray) -> np.ndarray:
    frames = len(samples) // FRAME
    return np.sqrt(np.mean(samples[: frames * FRAME].astype(np.float64).reshape(frames, FRAME) ** 2, axis=1))


def voiced_frames(samples: np.ndarray) -> np.ndarray:
    """Which 30 ms frames are voice: louder than 300 RMS and 3x the recording's noise floor."""
    rms = frame_rms(samples)
    return rms > max(300.0, 3 * float(np.percentile(rms, 20)))


def quiet_stretch(samples: np.ndarray) -> np.ndarray:
    """The recording's background: its longest run of 30 ms frames no louder than its quietest
    fifth (the ends of a clip still hold breaths and the fringes of words)."""
    rms = frame_rms(samples)
    quiet = np.concatenate([[False], rms <= np.percentile(rms, 20), [False]])
    edges = np.flatnonzero(np.diff(quiet.astype(np.int8)))
    starts, ends = edges[::2], edges[1::2]
    longest = int(np.argmax(ends - starts))
    return samples[int(starts[longest]) * FRAME : int(ends[longest]) * FRAME]


def room_tone(quiet: np.ndarray, seconds: float) -> np.ndarray:
    """`seconds` of a recording's background: its quiet stretch played forwards and backwards in
    turn (no click where the copies meet)."""
    n = int(round(seconds * RATE))
    if n <= 0:
        return np.zeros(0, np.int16)
    both = np.concatenate([quiet, quiet[::-1]])
    return np.tile(both, n // len(both) + 1)[:n].astype(np.int16)


def snap(samples: np.ndarray, at_s: float) -> int:
    """The sample index of the quietest 10 ms within SNAP_S of `at_s`."""
    step = RATE // 100
    lo, hi = max(0, int((at_s - SNAP_S) * RATE)), min(len(samples) - step, int((at_s + SNAP_S) * RATE))
    starts = range(lo, max(lo + 1, hi), step // 2)
    energy = [float(np.sum(samples[s : s + step].astype(np.float64) ** 2)) for s in starts]
    return int(starts[int(np.argmin(energy))]) + step // 2


def last_voiced_s(samples: np.ndarray, noise_of: np.ndarray) -> float:
    """The end of the last voiced frame of `samples`, with the noise floor of `noise_of`."""
    rms = frame_rms(samples)
    floor = max(300.0, 3 * float(np.percentile(frame_rms(noise_of), 20)))
    loud = np.flatnonzero(rms > floor)
    return (int(loud[-1]) + 1) * FRAME / RATE if len(loud) else 0.0


def whole_turns() -> list[RealTurn]:
    """Each recording's whole turn (one per recording)."""
    return [turn for turn in load_real_turns() if turn.kind == "whole"]


def load_real_turns(set_file: Path = SET_FILE) -> list[RealTurn]:
    spec = json.loads(set_file.read_text(encoding="utf-8"))
    turns = []
    for item in spec["turns"]:
        clip = item["clip"]
        samples = read_wav(SPEECH_DIR / f"{clip}.wav").samples
        quiet = quiet_stretch(samples)
        words = spec["words"][clip]
        kind = item["kind"]
        pauses: tuple[float, ...] = ()
        if kind == "whole":
            audio, turn_id = samples, f"{clip}/whole"
        else:
            word, _start, end = words[item["after"] - 1]
            if word != item["word"]:
                raise ValueError(f"{set_file.name}: turn {item}: word {item['after']} of {clip} is {word!r}")
            at = snap(samples, end)
            if kind == "cut":
                audio, turn_id = samples[:at], f"{clip}/cut-after-{item['after']}"
            elif kind == "pause":
                pauses = (float(item["pause_s"]),)
                audio = np.concatenate([samples[:at], room_tone(quiet, pauses[0]), samples[at:]])
                turn_id = f"{clip}/pause-after-{item['after']}"
            else:
                raise ValueError(f"{set_file.name}: turn {item}: kind must be whole, cut or pause")
        turns.append(RealTurn(turn_id, kind, audio, last_voiced_s(audio, samples), pauses, quiet))
    return turns
