"""The speech pipeline: reply sentences in -> sanitised, synthesized, lip-synced, played.

Sentences are spoken in the order they arrive. A worker thread sanitises and synthesizes each
one as soon as it is queued, so sentence n+1 is ready while n plays and the two join without
a gap; it hands a sentence to the player only when less than `lookahead` seconds of audio are
still queued, so a viseme track goes out shortly before its audio and an interrupt has little
to take back.

`interrupt()` (and a sentence with `replace=True`) empties the queue, stops the audio within
one output block plus the device latency, reports speaking=false, and drops the rest of the
interrupted replies should more of their sentences still arrive. It keeps what it took off the
voice in `interrupted`; `resume(those)` speaks them again (after a false interruption). `hold()`
and `release()` pause the voice while a person talks over it and play on where it stopped.
`cancel(conversation_id)`
does that to one reply only: its queued sentences are dropped, and the audio is stopped only
when one of its sentences is playing or already handed to the player (the sentences of other
replies caught in that stop are queued again, in their order).

`on_sentence(SentenceEvent)` (optional) tells what became of every sentence with text:
"started" when its first sample plays, then one of "finished" (played to the end), "cut"
(stopped part-way), "dropped" (never played: interrupted, cancelled, replaced, or its reply
was dropped before it arrived), "skipped" (nothing speakable after sanitising) or "failed"
(synthesis raised). It is called from the pipeline's threads (or the caller's, for
"dropped" in interrupt/cancel/submit), never with a lock held.
"""

from __future__ import annotations

import collections
import itertools
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..common.ids import utterance_id
from ..common.wav import write_wav
from .engine_types import Engine
from .language_runs import Language
from .playback import AudioSink, Player
from .sanitize import sanitize_for_speech
from .visemes import VisemeTrackData, build_track, held_track, track_from_energy

LogFn = Callable[[str, str], None]  # (level: debug|info|warn|error, message)
TrackFn = Callable[[VisemeTrackData, float], None]  # (track, monotonic start of its audio)
SpeakingFn = Callable[[bool, str, float], None]  # (speaking, utterance id, monotonic time)
SentenceKind = Literal["started", "finished", "cut", "dropped", "skipped", "failed"]
# What ends a sentence: exactly one of these follows (a "started", when it played at all).
FINAL_KINDS: frozenset[str] = frozenset({"finished", "cut", "dropped", "skipped", "failed"})


@dataclass(frozen=True)
class SentenceRequest:
    conversation_id: str
    seq: int
    text: str
    is_first: bool = False
    is_end: bool = False
    replace: bool = False
    received: float = field(default_factory=time.monotonic)
    # Language of text without letters (digits); None = the engine's default_language.
    language: Language | None = None

    @property
    def utterance_id(self) -> str:
        return utterance_id(self.conversation_id, self.seq)


@dataclass(frozen=True)
class SentenceEvent:
    utterance_id: str
    kind: SentenceKind
    when: float  # monotonic: the first sample (started), the last one or the stop (finished, cut), else now


SentenceFn = Callable[[SentenceEvent], None]


@dataclass(frozen=True)
class SentenceTiming:
    utterance_id: str
    received: float  # monotonic
    audio_ready: float  # monotonic: synthesis finished, first sample available
    start: float  # monotonic: first sample plays
    audio_seconds: float
    synth_seconds: float


class SpeechPipeline:
    def __init__(
        self,
        engine: Engine,
        sink: AudioSink,
        *,
        on_track: TrackFn,
        on_speaking: SpeakingFn,
        log: LogFn,
        wav_dir: str | Path | None = None,
        lookahead: float = 0.3,
        clock: Callable[[], float] = time.monotonic,
        on_sentence: SentenceFn | None = None,
        on_played: Callable[[np.ndarray, float], None] | None = None,
    ) -> None:
        if sink.sample_rate != engine.sample_rate:
            raise ValueError(f"sink runs at {sink.sample_rate} Hz but the engine produces {engine.sample_rate} Hz")
        self.engine = engine
        # `lookahead` and `wav_dir` may be changed while it runs (the node's live parameters):
        # each is one attribute, read once per sentence by the worker.
        self._on_track = on_track
        self._log = log
        self._clock = clock
        self.lookahead = lookahead
        self.wav_dir = Path(wav_dir) if wav_dir else None
        self._on_sentence = on_sentence
        self.player = Player(
            sink, on_speaking, clock=clock, on_cut=self._on_cut, on_segment=self._on_segment, on_rendered=on_played
        )
        self.timings: collections.deque[SentenceTiming] = collections.deque(maxlen=256)
        self._cond = threading.Condition()
        # (pipeline generation, player generation, submission number, request)
        self._queue: collections.deque[tuple[int, int, int, SentenceRequest]] = collections.deque()
        self._submitted = itertools.count()
        self._generation = 0
        self._current: SentenceRequest | None = None
        self._current_number = 0
        # Sentences handed to the player and not yet over, by utterance id (to queue them again
        # when another reply's cancel stops the player before they played).
        self._in_player: dict[str, tuple[int, SentenceRequest]] = {}
        # Those queued again: the player's "dropped" for them is not their end.
        self._requeued: set[str] = set()
        self._open_replies: collections.OrderedDict[str, None] = collections.OrderedDict()
        # Replies with a sentence handed to the player (heard, or about to be)
        self._started_replies: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._dropped_replies: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._replacing_replies: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._closed = False
        # A sentence about to start from silence waits up to this long while the person talks
        # again after their last turn (set_person_talking; 0: never waits; a live parameter).
        self.wait_for_person_s = 0.0
        self._person_talking = False
        self._waiting_for_person = ""  # the reply whose first sentence waits (its conversation id)
        self.interrupted: list[SentenceRequest] = []  # what the last interrupt() took off the voice
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
                remember(self._replacing_replies, request.conversation_id)
        if replacing:
            self.interrupt(f"replaced by {request.utterance_id}")
        with self._cond:
            # Closed (the node was cleaned up): nothing will speak it, and a say waits for its end.
            dropped = self._closed or request.conversation_id in self._dropped_replies
            if not dropped:
                if request.is_end:
                    self._open_replies.pop(request.conversation_id, None)
                else:
                    remember(self._open_replies, request.conversation_id)
                if request.text.strip():  # a closing is_end marker carries no text
                    self._queue.append((self._generation, self.player.generation, next(self._submitted), request))
                    self._cond.notify_all()
        if dropped:
            self._log(
                "info",
                f"dropping {request.utterance_id}: "
                + ("the voice is closed" if self._closed else "its reply was interrupted"),
            )
            if request.text.strip():
                self._emit(request.utterance_id, "dropped")

    def set_person_talking(self, talking: bool) -> None:
        """The person has talked again since their last turn and that talk's final is due
        (turns/talking_again.py): a reply about to start waits."""
        with self._cond:
            self._person_talking = talking
            self._cond.notify_all()

    def unstarted_replies(self) -> list[str]:
        """The replies none of whose sentences has reached the player yet: queued, being
        synthesised, waiting for the person, or open with more to come (conversation ids)."""
        with self._cond:
            replies = dict.fromkeys(self._open_replies)
            replies.update(dict.fromkeys(entry[3].conversation_id for entry in self._queue))
            if self._current is not None:
                replies[self._current.conversation_id] = None
            return [reply for reply in replies if reply not in self._started_replies]

    def interrupt(self, reason: str = "interrupt") -> float:
        """Stop speaking now and drop everything queued; returns when the audio stops."""
        with self._cond:
            self._generation += 1
            replies = set(self._open_replies)
            replies.update(entry[3].conversation_id for entry in self._queue)
            if self._current is not None:
                replies.add(self._current.conversation_id)
            for conversation in replies:
                remember(self._dropped_replies, conversation)
            self._open_replies.clear()
            # The worker's current sentence, if any, is not playing yet (a sentence leaves the
            # worker once it is scheduled), so it is dropped too (the worker reports it).
            dropped = len(self._queue) + (self._current is not None)
            queued = [entry[3].utterance_id for entry in self._queue]
            # What this stop takes off the voice, in submission order: the sentence playing
            # (cut), those handed to the player, the worker's, the queued ones (for `resume`).
            taken = sorted(
                list(self._in_player.values())
                + [(e[2], e[3]) for e in self._queue]
                + ([(self._current_number, self._current)] if self._current is not None else []),
                key=lambda entry: entry[0],
            )
            self.interrupted = [request for _n, request in taken]
            self._queue.clear()
            stop_at = self.player.stop()
            self._cond.notify_all()
        self._log(
            "info",
            f"{reason}: audio stops in {max(0.0, stop_at - self._clock()) * 1000:.0f} ms, "
            f"{dropped} queued sentence(s) dropped",
        )
        for uid in queued:
            self._emit(uid, "dropped")
        return stop_at

    def hold(self) -> float | None:
        """The person talks over the robot: hold the voice, everything queued kept (Player.pause);
        returns when the audio stops, None when nothing plays. An interrupt still stops it all.
        The held sentence's mouth closes then (a closed track; its own comes again, moved, on
        release)."""
        silent_from = self.player.pause()
        if silent_from is not None:
            self._on_track(held_track(self.player.held_key), silent_from)
        return silent_from

    def release(self) -> float | None:
        """The person stopped without taking the turn: play on where the voice was held
        (Player.resume); returns how far the audio moved, None when it was not held."""
        return self.player.resume()

    def resume(self, requests: list[SentenceRequest]) -> None:
        """Speak again what an interrupt took off the voice (a false interruption): their
        replies are no longer dropped, and each sentence is queued anew in its order."""
        with self._cond:
            for request in requests:
                self._dropped_replies.pop(request.conversation_id, None)
        for request in requests:
            self.submit(
                SentenceRequest(
                    request.conversation_id,
                    request.seq,
                    request.text,
                    request.is_first,
                    request.is_end,
                    False,
                    language=request.language,
                )
            )

    def cancel(self, conversation_id: str, reason: str = "cancelled") -> float | None:
        """Stop one reply: drop its queued sentences (and any that still arrive); stop the audio
        only if one of its sentences is playing or handed to the player. Returns when the
        audio stops, or None when none of it was in the player (nothing else is touched)."""
        with self._cond:
            remember(self._dropped_replies, conversation_id)
            self._open_replies.pop(conversation_id, None)
            queued = [e[3].utterance_id for e in self._queue if e[3].conversation_id == conversation_id]
            in_player = any(req.conversation_id == conversation_id for _n, req in self._in_player.values())
            current_is_ours = self._current is not None and self._current.conversation_id == conversation_id
            self._queue = collections.deque(e for e in self._queue if e[3].conversation_id != conversation_id)
            stop_at = None
            if in_player or current_is_ours:
                # The worker's sentence becomes stale; the others keep their place, re-tagged.
                self._generation += 1
                if in_player:
                    stop_at, never_played = self.player.stop_and_report()
                    # Other replies' sentences the stop caught before they played are queued
                    # again (synthesized anew), in the order they were submitted.
                    for uid in never_played:
                        entry = self._in_player.pop(uid, None)
                        if entry is not None and entry[1].conversation_id != conversation_id:
                            self._requeued.add(uid)
                            self._insert(*entry)
                player_generation = self.player.generation
                self._queue = collections.deque(
                    (self._generation, player_generation, n, r) for _g, _p, n, r in self._queue
                )
            self._cond.notify_all()
        if stop_at is not None:
            self._log(
                "info",
                f"{reason} {conversation_id}: audio stops in "
                f"{max(0.0, stop_at - self._clock()) * 1000:.0f} ms, {len(queued)} queued sentence(s) "
                "dropped",
            )
        else:
            self._log("info", f"{reason} {conversation_id}: {len(queued)} queued sentence(s) dropped")
        for uid in queued:
            self._emit(uid, "dropped")
        return stop_at

    def _insert(self, number: int, request: SentenceRequest) -> None:
        """Queue `request` again at the place its submission number gives it (lock held)."""
        entry = (self._generation, self.player.generation, number, request)
        position = next((i for i, e in enumerate(self._queue) if e[2] > number), len(self._queue))
        self._queue.insert(position, entry)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            queued = [entry[3].utterance_id for entry in self._queue]
            self._queue.clear()
            self._cond.notify_all()
        for uid in queued:
            self._emit(uid, "dropped")
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
                generation, player_generation, number, request = self._queue.popleft()
                self._current, self._current_number = request, number
            outcome: SentenceKind | None = "dropped"
            try:
                if generation == self._generation:
                    outcome = self._speak(request, number, generation, player_generation)
            except Exception as exc:  # noqa: BLE001 - one bad sentence must not kill the voice
                self._log("error", f"could not speak {request.utterance_id}: {exc}")
                outcome = "failed"
            with self._cond:
                self._current = None
                if outcome == "dropped" and not self._closed and request.conversation_id not in self._dropped_replies:
                    # Made stale by another reply's cancel, not by its own end: it is still wanted.
                    self._insert(number, request)
                    outcome = None
            if outcome is not None:
                self._emit(request.utterance_id, outcome)

    def _stale(self, generation: int) -> bool:
        return generation != self._generation or self._closed

    def _speak(
        self, request: SentenceRequest, number: int, generation: int, player_generation: int
    ) -> SentenceKind | None:
        """Synthesize and hand over one sentence: None once the player has it (the player
        reports the rest), else "skipped" or "dropped"."""
        uid = request.utterance_id
        cleaned = sanitize_for_speech(request.text)
        if cleaned.changed:
            self._log(
                "warn" if cleaned.text else "info", f"sanitised {uid} before speaking: dropped {cleaned.summary()}"
            )
        if not cleaned.text:
            self._log("info", f"nothing speakable in {uid}; skipped")
            return "skipped"
        t0 = time.perf_counter()
        synthesis = self.engine.synthesize(
            cleaned.text, cancelled=lambda: self._stale(generation), language=request.language
        )
        synth_seconds = time.perf_counter() - t0
        audio_ready = self._clock()
        if self._stale(generation) or synthesis.cancelled:
            return "dropped"
        if not len(synthesis.samples):
            self._log("info", f"no audio for {uid}; skipped")
            return "skipped"
        if synthesis.has_timings:
            track = build_track(uid, synthesis.phonemes, synthesis.duration)
        else:
            track = track_from_energy(uid, synthesis.samples, synthesis.sample_rate)
        wav_dir = self.wav_dir  # (a live parameter: read once)
        if wav_dir is not None:
            path = write_wav(wav_dir / f"{_file_safe(uid)}.wav", synthesis.samples, synthesis.sample_rate)
            self._log("info", f"{uid}: audio written to {path}")
        runs = ", ".join(f"{r.voice}" for r in synthesis.runs)
        self._log("debug", f"{uid}: {synthesis.duration:.2f} s of audio ({runs}) in {synth_seconds * 1000:.1f} ms")
        if not self.player.wait_until_queue_below(self.lookahead, player_generation):
            return "dropped"
        self._wait_for_person(request, generation)
        with self._cond:
            if self._stale(generation):  # cancelled while it waited for its turn
                return "dropped"
            # Registered before it is committed: a cancel in between must know it is there.
            self._in_player[uid] = (number, request)
            remember(self._started_replies, request.conversation_id)
        start = self.player.schedule(
            uid, synthesis.samples, lambda at: self._on_track(track, at), generation=player_generation
        )
        if start is None:
            with self._cond:
                self._in_player.pop(uid, None)
            return "dropped"
        self.timings.append(
            SentenceTiming(uid, request.received, audio_ready, start, synthesis.duration, synth_seconds)
        )
        underflows = getattr(self.player.sink, "underflows", 0)
        if underflows > self._reported_underflows:
            self._reported_underflows = underflows
            self._log(
                "warn",
                f"the audio output ran dry {underflows} time(s) so far (audible glitches); "
                "a larger device_latency avoids that",
            )
        return None

    @property
    def waiting_for_person(self) -> str:
        """The conversation id of the reply waiting for the person to finish ("" = none)."""
        with self._cond:
            return self._waiting_for_person

    def _wait_for_person(self, request: SentenceRequest, generation: int) -> None:
        """Before a reply's first sentence starts from silence: while the person talks again
        after their last turn, wait (up to `wait_for_person_s`) for them to finish, or for this
        reply to be replaced, cancelled or interrupted (then it is stale). A later sentence does
        not wait: a "yeah" in the gap between two sentences brings no final, and the reply
        stalled until FINAL_DUE_S passed (~0.5 s in a rig test)."""
        limit = self.wait_for_person_s
        if limit <= 0 or not request.is_first or not self.player.idle:
            return
        with self._cond:
            if not self._person_talking:
                return

            def dropped() -> bool:
                return self._stale(generation) or request.conversation_id in self._dropped_replies

            began = self._clock()
            self._waiting_for_person = request.conversation_id
            try:
                self._cond.wait_for(lambda: not self._person_talking or dropped(), limit)
            finally:
                self._waiting_for_person = ""
            waited, talking, stale = self._clock() - began, self._person_talking, dropped()
        outcome = (
            "dropped meanwhile" if stale else "speaking now" if not talking else "speaking anyway (wait_for_person_s)"
        )
        self._log(
            "info", f"{request.utterance_id}: waited {waited * 1000:.0f} ms for the person to finish talking; {outcome}"
        )

    def _on_segment(self, kind: str, key: str, when: float) -> None:
        if kind != "started":
            with self._cond:
                self._in_player.pop(key, None)
                if kind == "dropped" and key in self._requeued:
                    self._requeued.discard(key)
                    return
        self._emit(key, kind, when)  # type: ignore[arg-type]

    def _emit(self, uid: str, kind: SentenceKind, when: float | None = None) -> None:
        if self._on_sentence is None:
            return
        try:
            self._on_sentence(SentenceEvent(uid, kind, self._clock() if when is None else when))
        except Exception as exc:  # noqa: BLE001 - a listener's bug must not stop the voice
            self._log("error", f"sentence listener failed on {kind} {uid}: {exc}")

    def _on_cut(self, key: str, played: float, total: float) -> None:
        self._log("info", f"{key} cut after {played:.2f} s of {total:.2f} s")


def check_wav_dir(wav_dir: str) -> Path | None:
    """The directory where every sentence is also written ('' = none), created if needed;
    ValueError with the reason when it cannot be created or written."""
    if not wav_dir:
        return None
    path = Path(wav_dir).expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"wav_dir {str(path)!r} cannot be created: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"wav_dir {str(path)!r} is not writable")
    return path


def remember(ordered: collections.OrderedDict, key: str, value: Any = None, limit: int = 256) -> None:
    """Put `key` (with `value`) last in `ordered`, dropping the oldest keys beyond `limit`."""
    ordered[key] = value
    ordered.move_to_end(key)
    while len(ordered) > limit:
        ordered.popitem(last=False)


def _file_safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "utterance"
