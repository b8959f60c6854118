"""The speech pipeline: reply sentences in -> sanitised, synthesized, lip-synced, played.

Sentences are spoken in the order they arrive. A worker thread sanitises and synthesizes each
one as soon as it is queued, so sentence n+1 is ready while n plays and the two join without
a gap; it hands a sentence to the player only when less than `lookahead` seconds of audio are
still queued, so a viseme track goes out shortly before its audio and an interrupt has little
to take back.

`interrupt()` (and a sentence with `replace=True`) empties the queue, stops the audio within
one output block plus the device latency, reports speaking=false, and drops the rest of the
interrupted replies should more of their sentences still arrive.
"""
from __future__ import annotations

import collections
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..common.ids import utterance_id
from ..common.wav import write_wav
from .playback import AudioSink, Player
from .sanitize import sanitize_for_speech
from .types import Engine
from .visemes import VisemeTrackData, build_track, track_from_energy

LogFn = Callable[[str, str], None]  # (level: debug|info|warn|error, message)
TrackFn = Callable[[VisemeTrackData, float], None]  # (track, monotonic start of its audio)
SpeakingFn = Callable[[bool, str, float], None]  # (speaking, utterance id, monotonic time)


@dataclass(frozen=True)
class SentenceRequest:
    conversation_id: str
    seq: int
    text: str
    is_first: bool = False
    is_end: bool = False
    replace: bool = False
    received: float = field(default_factory=time.monotonic)

    @property
    def utterance_id(self) -> str:
        return utterance_id(self.conversation_id, self.seq)


@dataclass(frozen=True)
class SentenceTiming:
    utterance_id: str
    received: float  # monotonic
    audio_ready: float  # monotonic: synthesis finished, first sample available
    start: float  # monotonic: first sample plays
    audio_seconds: float
    synth_seconds: float


class SpeechPipeline:
    def __init__(self, engine: Engine, sink: AudioSink, *, on_track: TrackFn, on_speaking: SpeakingFn,
                 log: LogFn, wav_dir: str | Path | None = None, lookahead: float = 0.3,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if sink.sample_rate != engine.sample_rate:
            raise ValueError(f"sink runs at {sink.sample_rate} Hz but the engine produces {engine.sample_rate} Hz")
        self.engine = engine
        self._on_track = on_track
        self._log = log
        self._clock = clock
        self.lookahead = lookahead
        self.wav_dir = Path(wav_dir) if wav_dir else None
        self.player = Player(sink, on_speaking, clock=clock, on_cut=self._on_cut)
        self.timings: collections.deque[SentenceTiming] = collections.deque(maxlen=256)
        self._cond = threading.Condition()
        self._queue: collections.deque[tuple[int, int, SentenceRequest]] = collections.deque()
        self._generation = 0
        self._current: SentenceRequest | None = None
        self._open_replies: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._dropped_replies: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._replacing_replies: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._closed = False
        self._reported_underflows = 0
        self._worker = threading.Thread(target=self._run, name="tts-worker", daemon=True)
        self._worker.start()

    # -- input ----------------------------------------------------------------------------
    def submit(self, request: SentenceRequest) -> None:
        """Queue one sentence (non-blocking; safe from any thread)."""
        with self._cond:
            # A reply replaces what is being said once; a sender that marks every sentence of
            # the replacing reply must not make it cut itself off.
            replacing = request.replace and request.conversation_id not in self._replacing_replies
            if replacing:
                _remember(self._replacing_replies, request.conversation_id)
        if replacing:
            self.interrupt(f"replaced by {request.utterance_id}")
        with self._cond:
            if request.conversation_id in self._dropped_replies:
                self._log("info", f"dropping {request.utterance_id}: its reply was interrupted")
                return
            if request.is_end:
                self._open_replies.pop(request.conversation_id, None)
            else:
                _remember(self._open_replies, request.conversation_id)
            if not request.text.strip():
                return  # a closing is_end marker carries no text
            self._queue.append((self._generation, self.player.generation, request))
            self._cond.notify_all()

    def interrupt(self, reason: str = "interrupt") -> float:
        """Stop speaking now and drop everything queued; returns when the audio stops."""
        with self._cond:
            self._generation += 1
            replies = set(self._open_replies)
            replies.update(req.conversation_id for _g, _p, req in self._queue)
            if self._current is not None:
                replies.add(self._current.conversation_id)
            for conversation in replies:
                _remember(self._dropped_replies, conversation)
            self._open_replies.clear()
            # The worker's current sentence, if any, is not playing yet (a sentence leaves the
            # worker once it is scheduled), so it is dropped too.
            dropped = len(self._queue) + (self._current is not None)
            self._queue.clear()
            stop_at = self.player.stop()
            self._cond.notify_all()
        self._log("info", f"{reason}: audio stops in {max(0.0, stop_at - self._clock()) * 1000:.0f} ms, "
                          f"{dropped} queued sentence(s) dropped")
        return stop_at

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._queue.clear()
            self._cond.notify_all()
        self.player.stop()
        self._worker.join(5)
        self.player.close()

    # -- worker ---------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                generation, player_generation, request = self._queue.popleft()
                if generation != self._generation:
                    continue
                self._current = request
            try:
                self._speak(request, generation, player_generation)
            except Exception as exc:  # noqa: BLE001 - one bad sentence must not kill the voice
                self._log("error", f"could not speak {request.utterance_id}: {exc}")
            finally:
                with self._cond:
                    self._current = None

    def _stale(self, generation: int) -> bool:
        return generation != self._generation or self._closed

    def _speak(self, request: SentenceRequest, generation: int, player_generation: int) -> None:
        uid = request.utterance_id
        cleaned = sanitize_for_speech(request.text)
        if cleaned.changed:
            self._log("warn" if cleaned.text else "info",
                      f"sanitised {uid} before speaking: dropped {cleaned.summary()}")
        if not cleaned.text:
            self._log("info", f"nothing speakable in {uid}; skipped")
            return
        t0 = time.perf_counter()
        synthesis = self.engine.synthesize(cleaned.text, cancelled=lambda: self._stale(generation))
        synth_seconds = time.perf_counter() - t0
        audio_ready = self._clock()
        if self._stale(generation) or synthesis.cancelled or not len(synthesis.samples):
            return
        if synthesis.has_timings:
            track = build_track(uid, synthesis.phonemes, synthesis.duration)
        else:
            track = track_from_energy(uid, synthesis.samples, synthesis.sample_rate)
        if self.wav_dir is not None:
            path = write_wav(self.wav_dir / f"{_file_safe(uid)}.wav", synthesis.samples, synthesis.sample_rate)
            self._log("info", f"{uid}: audio written to {path}")
        runs = ", ".join(f"{r.voice}" for r in synthesis.runs)
        self._log("debug", f"{uid}: {synthesis.duration:.2f} s of audio ({runs}) in {synth_seconds * 1000:.1f} ms")
        if not self.player.wait_until_queue_below(self.lookahead, player_generation):
            return
        start = self.player.schedule(uid, synthesis.samples, lambda at: self._on_track(track, at),
                                     generation=player_generation)
        if start is None:
            return
        self.timings.append(SentenceTiming(uid, request.received, audio_ready, start, synthesis.duration,
                                           synth_seconds))
        underflows = getattr(self.player.sink, "underflows", 0)
        if underflows > self._reported_underflows:
            self._reported_underflows = underflows
            self._log("warn", f"the audio output ran dry {underflows} time(s) so far (audible glitches); "
                              "a larger device_latency avoids that")

    def _on_cut(self, key: str, played: float, total: float) -> None:
        self._log("info", f"{key} cut after {played:.2f} s of {total:.2f} s")


def _remember(ordered: collections.OrderedDict, key: str, limit: int = 256) -> None:
    ordered[key] = None
    ordered.move_to_end(key)
    while len(ordered) > limit:
        ordered.popitem(last=False)


def _file_safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "utterance"
