"""Transcribe recordings that have a reference transcript and score them (WER/CER, real-time
factor): what `fay-ros transcribe --bench DIR` prints and bench/bench_real_speech.py tabulates.

A clip is a recording anywhere under the folder (WAV, FLAC, MP3, Ogg, M4A, WebM: common.wav's
AUDIO_SUFFIXES, read by `read_audio`) with a reference transcript (UTF-8): NAME.txt beside it, or
its line in a transcript list, the way speech corpora ship them: "NAME text" lines (LibriSpeech's
CHAPTER.trans.txt, found under the folder; a Kaldi `text` file; AISHELL's transcript) or a TSV
with `path` and `sentence` columns (Common Voice), given as `references`.
Each clip goes through the path a live utterance takes (VAD segmenter -> recogniser, AsrCore),
so a recording with pauses is heard as the node would hear it; its finals joined are the
hypothesis. A quiet recording is raised to a microphone's usual level first
(audio.recording_gain_db): the VAD takes nothing under -50 dBFS for voice.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..common.errors import FayError
from ..common.wav import AUDIO_SUFFIXES, read_audio
from .asr_core import AsrCore, TranscriptEvent
from .audio import amplified, recording_gain_db
from .recognition import Recognizer
from .scoring import Score, is_chinese, max_repeats, score
from .vad import VadSettings


@dataclass
class Clip:
    path: Path
    reference: str

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def chinese(self) -> bool:
        return is_chinese(self.reference)


@dataclass
class ClipResult:
    clip: Clip
    hypothesis: str
    score: Score
    duration: float  # seconds of audio
    seconds: float  # decoding time
    repeats: int  # most back-to-back repeats of a phrase in the hypothesis
    reference_repeats: int

    @property
    def rtf(self) -> float:
        return self.seconds / self.duration if self.duration else 0.0


class TranscriptListError(FayError, ValueError):
    """A transcript list that cannot be read; the message names the file and the line."""


def audio_files(folder: str | Path) -> list[Path]:
    """Every recording under `folder` (by its suffix), sorted by path."""
    return sorted(p for p in Path(folder).rglob("*") if p.suffix.lower() in AUDIO_SUFFIXES and p.is_file())


def read_transcript_list(path: str | Path) -> dict[str, str]:
    """NAME -> reference from a corpus's transcript list: "NAME text" lines (LibriSpeech, Kaldi,
    AISHELL; blank lines skipped) or a TSV whose header has `path` and `sentence` (Common Voice;
    NAME is the file name in `path` without its suffix). Raises TranscriptListError naming the file
    and line for a line with no text or a name given two different texts."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except OSError as exc:
        raise TranscriptListError(f"{path}: cannot read the transcript list ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise TranscriptListError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    header = lines[0].split("\t") if lines else []
    pairs: list[tuple[int, str, str]] = []  # (line number, NAME, text)
    if "path" in header and "sentence" in header:
        rows = csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
        pairs = [(n, Path(row.get("path") or "").stem, row.get("sentence") or "") for n, row in enumerate(rows, 2)]
    else:
        for n, line in enumerate(lines, start=1):
            fields = line.split(maxsplit=1)  # (a space or a tab after the name)
            if fields:
                pairs.append((n, fields[0], fields[1] if len(fields) > 1 else ""))
    references: dict[str, str] = {}
    for number, name, text in pairs:
        text = text.strip()
        if not name or not text:
            raise TranscriptListError(
                f"{path}:{number}: expected a recording's name and its text, got {name or 'nothing'!r}"
            )
        if references.get(name, text) != text:
            raise TranscriptListError(f"{path}:{number}: {name} has two different texts in the list")
        references[name] = text
    return references


def find_clips(folder: str | Path, references: str | Path | None = None) -> list[Clip]:
    """Every recording under `folder` with a reference: NAME.txt beside it first, else its line
    in `references` (a transcript list) or in a LibriSpeech CHAPTER.trans.txt under the folder.
    Sorted by path; recordings with no reference are left out (audio_files lists them all)."""
    listed: dict[str, str] = {}
    for trans in sorted(Path(folder).rglob("*.trans.txt")):
        listed.update(read_transcript_list(trans))
    if references:
        listed.update(read_transcript_list(references))
    clips = []
    for audio in audio_files(folder):
        beside = audio.with_suffix(".txt")
        if beside.is_file():
            clips.append(Clip(audio, beside.read_text(encoding="utf-8").strip()))
        elif audio.stem in listed:
            clips.append(Clip(audio, listed[audio.stem]))
    return clips


def transcribe_stream(
    recognizer: Recognizer,
    samples: np.ndarray,
    rate: int,
    endpoint_ms: int = 500,
    max_utterance_s: float = 30.0,
    gain_db: float | None = None,
) -> list[TranscriptEvent]:
    """The finals of a recording fed in 100 ms chunks through the VAD segmenter; a quiet
    recording raised by `gain_db` first (None: `recording_gain_db`'s)."""
    heard = stream_finals(recognizer, samples, rate, endpoint_ms, max_utterance_s, gain_db)
    return [final for finals, _done in heard for final in finals]


def stream_finals(
    recognizer: Recognizer,
    samples: np.ndarray,
    rate: int,
    endpoint_ms: int = 500,
    max_utterance_s: float = 30.0,
    gain_db: float | None = None,
) -> Iterator[tuple[list[TranscriptEvent], float]]:
    """`transcribe_stream` as it goes: (the finals heard, seconds of the recording fed so far)
    after each 100 ms chunk, so a caller prints each utterance once it is heard and shows how
    far a long recording has got; the last pair has the utterance the end of the file closed."""
    if gain_db is None:
        gain_db = recording_gain_db(samples, rate)
    samples = amplified(samples, gain_db)
    core = AsrCore(recognizer, VadSettings(stop_ms=endpoint_ms), max_utterance_s=max_utterance_s)
    chunk = max(1, rate // 10)
    for i in range(0, len(samples), chunk):
        yield (
            [e for e in core.feed(samples[i : i + chunk], rate, i / rate) if e.is_final],
            min(i + chunk, len(samples)) / rate,
        )
    yield [e for e in core.flush() if e.is_final], len(samples) / rate


def joined(finals: list[TranscriptEvent]) -> str:
    """The finals as one text (Chinese pieces joined without a space)."""
    out = ""
    for ev in finals:
        text = ev.text.strip()
        if out and text and not (is_chinese(out[-1:]) or is_chinese(text[:1])):
            out += " "
        out += text
    return out


def run_clip(recognizer: Recognizer, clip: Clip, endpoint_ms: int = 500) -> ClipResult:
    wav = read_audio(clip.path)
    t0 = time.perf_counter()
    finals = transcribe_stream(recognizer, wav.samples, wav.sample_rate, endpoint_ms)
    seconds = time.perf_counter() - t0
    hyp = joined(finals)
    return ClipResult(
        clip,
        hyp,
        score(clip.reference, hyp, clip.chinese),
        len(wav.samples) / wav.sample_rate,
        seconds,
        max_repeats(hyp),
        max_repeats(clip.reference),
    )


@dataclass
class Totals:
    english: Score
    chinese: Score
    duration: float
    seconds: float

    @property
    def rtf(self) -> float:
        return self.seconds / self.duration if self.duration else 0.0


def totals(results: list[ClipResult]) -> Totals:
    en, zh = Score(0, 0, "word"), Score(0, 0, "char")
    for r in results:
        if r.clip.chinese:
            zh += r.score
        else:
            en += r.score
    return Totals(en, zh, sum(r.duration for r in results), sum(r.seconds for r in results))
