"""Playback on a shared audio clock: sample-accurate start times, exact speaking state,
instant stop.

An output (`AudioSink`) pulls audio block by block: it calls `render(out, play_time)` where
`play_time` is the monotonic time at which `out[0]` reaches the speaker (for a sounddevice
stream, PortAudio's DAC time of the buffer -- so the device latency is included; for the
headless `SimulatedSink`, a real-time clock ticking one block at a time). The `Player` keeps
a timeline of scheduled segments in that clock:

- `schedule()` picks the segment's start (right after the audio already queued, or
  `lead` seconds from now), lets the caller publish it (the viseme track is stamped with
  that start, before any of it plays), then commits it; the renderer copies exactly the
  samples that belong to each block, so the first sample plays at the announced time.
- `speaking=true` is reported at the start of each segment, `speaking=false` at the end of
  the last one (the end of its last sample at the speaker) unless another segment follows
  without a gap. Notifications run on their own thread at their due time, never in the audio
  callback.
- `stop()` empties the timeline at once: the next rendered block is silence, so the audio
  stops when the blocks already handed to the output have played (one block plus the device
  latency), and `speaking=false` is reported with that moment.
- `pause()` holds the voice without losing a sample: the next rendered block is silence (the
  audio stops, like a stop, after the blocks already handed over), the queued audio and the
  speaking state wait, and `resume()` plays on from the first sample not handed over, `lead`
  from then. Every waiting segment moves by the pause, its starts and ends with it, and is
  announced again with its moved start (the viseme track of the sentence cut by the pause is
  re-published so that its frames meet the audio that is left). Used while a person talks over
  the robot, before it is known whether they take the turn (a stop) or not (a resume).
- `on_rendered(block, play_time)` (optional) sees every block with sound in it as it is handed
  to the output (on the audio thread: it must only copy and queue), so the mic can take the
  robot's voice out of what it hears (the tts node's `audio/played`).
- `on_segment(kind, key, when)` (optional) reports what became of each committed segment:
  "started" at its first sample, then exactly one of "finished" (its last sample played),
  "cut" (a stop silenced it part-way; `when` = the moment the audio stopped) or "dropped"
  (a stop came before any of it played). Like the speaking state, on the notifier thread.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

RenderFn = Callable[[np.ndarray, float], None]
StateFn = Callable[[bool, str, float], None]  # (speaking, utterance id, monotonic time)
SegmentFn = Callable[[str, str, float], None]  # (started|finished|cut|dropped, key, monotonic time)


class AudioSink(Protocol):
    sample_rate: int
    ahead: float  # how long before play time render() is called for a block (latency + block)
    description: str

    def start(self, render: RenderFn) -> None: ...

    def close(self) -> None: ...


class SimulatedSink:
    """A headless output: a real-time clock that 'plays' one block every block period.

    Nothing is audible; timing, speaking state and interruption behave as with a device
    whose latency is one block.
    """

    def __init__(
        self, sample_rate: int, block_seconds: float = 0.02, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.sample_rate = sample_rate
        self.block_frames = max(1, int(round(block_seconds * sample_rate)))
        self.block_seconds = self.block_frames / sample_rate
        self.ahead = self.block_seconds
        self.description = f"simulated real-time output ({self.block_seconds * 1000:.0f} ms blocks, nothing audible)"
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, render: RenderFn) -> None:
        def run() -> None:
            buffer = np.zeros(self.block_frames, dtype=np.int16)
            t0 = self._clock() + self.block_seconds
            for k in itertools.count():
                play_time = t0 + k * self.block_seconds
                # Render one block ahead of its play time, like a device buffer.
                wait = play_time - self.ahead - self._clock()
                if wait > 0 and self._stop.wait(wait):
                    return
                if self._stop.is_set():
                    return
                render(buffer, play_time)

        self._thread = threading.Thread(target=run, name="simulated-audio-out", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)


class SoundDeviceSink:
    """A sounddevice (PortAudio) output stream, running for the life of the node."""

    def __init__(
        self, device: int | str | None, sample_rate: int, block_seconds: float = 0.02, latency: float | str = "low"
    ) -> None:
        import sounddevice as sd

        self.sample_rate = sample_rate
        self.underflows = 0  # blocks the device ran dry (audible glitches)
        self._render: RenderFn | None = None
        block = max(64, int(round(block_seconds * sample_rate)))
        self.stream = sd.OutputStream(
            samplerate=sample_rate,
            channels=1,
            dtype="int16",
            device=device,
            blocksize=block,
            latency=latency,
            callback=self._callback,
        )
        info = sd.query_devices(self.stream.device)
        self.ahead = float(self.stream.latency) + block / sample_rate
        self.description = (
            f"sound device {info['name']!r} ({sample_rate} Hz, output latency {self.stream.latency * 1000:.0f} ms)"
        )

    def _callback(self, outdata, frames, time_info, status) -> None:  # PortAudio thread
        now = time.monotonic()
        if status.output_underflow:
            self.underflows += 1
        dac, current = time_info.outputBufferDacTime, time_info.currentTime
        # Some host APIs report 0 for both; then the stream's nominal latency is the best guess.
        play_time = now + (dac - current if dac and current else self.stream.latency)
        block = outdata[:, 0]
        if self._render is None:
            block.fill(0)
        else:
            self._render(block, play_time)

    def start(self, render: RenderFn) -> None:
        self._render = render
        self.stream.start()

    def close(self) -> None:
        try:
            self.stream.abort()
        finally:
            self.stream.close()


def open_sink(
    output_device: str,
    sample_rate: int,
    block_seconds: float = 0.02,
    log: Callable[[str], None] = print,
    latency: float | str = "low",
) -> AudioSink:
    """ "auto": the default output device if one opens, else headless; "none": headless;
    anything else names a device (index or name) that must open."""
    if output_device == "none":
        return SimulatedSink(sample_rate, block_seconds)
    device: int | str | None = (
        None if output_device == "auto" else (int(output_device) if output_device.strip().isdigit() else output_device)
    )
    try:
        import sounddevice as sd

        # Raises when there is no default output device / no such device.
        if device is None:
            sd.query_devices(kind="output")
        else:
            sd.query_devices(device)
        return SoundDeviceSink(device, sample_rate, block_seconds, latency)
    except Exception as exc:  # noqa: BLE001 - PortAudio raises several types for "no device"
        if output_device != "auto":
            raise RuntimeError(f"cannot open audio output device {output_device!r}: {exc}") from None
        log(f"no usable audio output device ({exc}); running headless")
        return SimulatedSink(sample_rate, block_seconds)


@dataclass(eq=False)
class Segment:
    key: str
    samples: np.ndarray
    start: float
    sample_rate: int
    generation: int
    played: int = 0  # samples handed to the output so far
    announce: Callable[[float], None] | None = None  # publishes its start (again after a pause)
    followed: bool = False  # the next segment starts on the sample after this one
    outcome: str = ""  # "finished", "cut" or "dropped" once decided (reported once)

    @property
    def end(self) -> float:
        return self.start + len(self.samples) / self.sample_rate


@dataclass(order=True)
class _Due:
    when: float
    order: int
    action: Callable[[], None] = field(compare=False)
    kind: str = field(default="other", compare=False)  # "start", "end" (of `segment`) or "other"
    segment: Segment | None = field(default=None, compare=False)


class Player:
    """Schedules audio segments on a sink's clock and reports the speaking state."""

    def __init__(
        self,
        sink: AudioSink,
        on_state: StateFn,
        *,
        margin: float = 0.01,
        clock: Callable[[], float] = time.monotonic,
        on_cut: Callable[[str, float, float], None] | None = None,
        on_segment: SegmentFn | None = None,
        on_rendered: RenderFn | None = None,
    ) -> None:
        self.sink = sink
        self._on_rendered = on_rendered
        self.sample_rate = sink.sample_rate
        self.lead = sink.ahead + margin
        self._on_state = on_state
        self._on_cut = on_cut  # (key, seconds played, seconds total) when stop() cuts a segment
        self._on_segment = on_segment
        self._clock = clock
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        # Committed segments until they have finished playing (not just finished rendering).
        self._segments: list[Segment] = []
        self._generation = 0
        self._rendered_until = 0.0
        self._speaking_key = ""  # key last reported as speaking ("" = silent)
        self._due: list[_Due] = []
        self._due_order = itertools.count()
        self._closed = False
        # While paused: where the audio stopped, and the starts and ends that wait for the resume.
        self._paused_from: float | None = None
        self._held_due: list[_Due] = []
        self.held_key = ""  # the segment the last pause cut (or the next to play)
        self._notifier = threading.Thread(target=self._notify_loop, name="speaking-state", daemon=True)
        self._notifier.start()
        sink.start(self._render)

    # -- scheduling ---------------------------------------------------------------------
    def wait_until_queue_below(self, seconds: float, generation: int) -> bool:
        """Block until less than `seconds` of audio is queued; False if stopped meanwhile."""
        with self._changed:
            while True:
                if self._closed or self._generation != generation:
                    return False
                if self._paused_from is not None:  # the queue is frozen until resume() or stop()
                    self._changed.wait()
                    continue
                now = self._clock()
                queued = self._queued_end(default=now) - now
                if queued <= seconds:
                    return True
                self._changed.wait(queued - seconds)

    @property
    def generation(self) -> int:
        with self._lock:
            return self._generation

    def schedule(
        self, key: str, samples: np.ndarray, announce: Callable[[float], None], generation: int | None = None
    ) -> float | None:
        """Queue `samples`; `announce(start)` runs before commit with the start time of its
        first sample. Returns the start, or None when a stop() came in between."""
        samples = np.asarray(samples, dtype=np.int16)
        while True:
            with self._changed:
                while (
                    self._paused_from is not None
                    and not self._closed
                    and (generation is None or generation == self._generation)
                ):
                    self._changed.wait()  # placed after the resume, on the moved timeline
                if self._closed or (generation is not None and generation != self._generation):
                    return None
                gen = self._generation
                start = self._next_start()
            announce(start)
            with self._lock:
                if gen != self._generation or self._closed:
                    return None
                if self._paused_from is not None:
                    continue  # paused while it announced: announce again once resumed
                # Sample-accurate only if the block holding `start` is not rendered yet, and
                # "announced before it plays" only if `start` is still in the future.
                if start >= self._rendered_until and start > self._clock():
                    segment = Segment(key, samples, start, self.sample_rate, gen, announce=announce)
                    for previous in self._segments:
                        if abs(previous.end - start) < 0.5 / self.sample_rate:
                            previous.followed = True
                    self._segments.append(segment)
                    self._at(start, functools.partial(self._segment_started, segment), "start", segment)
                    self._at(segment.end, functools.partial(self._segment_ended, segment), "end", segment)
                    return start
            # Announcing took longer than the lead (a stalled machine): pick a later start
            # and announce again, so the published stamp is always the true one.

    def _queued_end(self, default: float = 0.0) -> float:
        return max((s.end for s in self._segments), default=default)

    def _next_start(self) -> float:
        earliest = max(self._clock() + self.lead, self._rendered_until)
        queued_end = self._queued_end()
        return queued_end if queued_end >= earliest else earliest

    @property
    def idle(self) -> bool:
        """Nothing queued or playing: the next segment starts from silence."""
        with self._lock:
            return not self._segments and self._paused_from is None

    # -- holding the voice ----------------------------------------------------------------
    @property
    def paused(self) -> bool:
        with self._lock:
            return self._paused_from is not None

    def pause(self) -> float | None:
        """Hold the voice: silence after the blocks already handed over, everything queued kept.
        Returns when the audio stops, or None when there is nothing to hold (or it is held)."""
        with self._lock:
            if self._paused_from is not None or self._closed:
                return None
            handed_over = max(self._clock(), self._rendered_until)
            if not any(s.end > handed_over for s in self._segments):
                return None
            self._paused_from = handed_over
            self.held_key = min((s for s in self._segments if s.end > handed_over), key=lambda s: s.start).key
            # Starts and ends at or after the stop move with their audio: held until resume().
            self._held_due = [d for d in self._due if d.segment is not None and d.when >= handed_over]
            self._due = [d for d in self._due if not (d.segment is not None and d.when >= handed_over)]
            heapq.heapify(self._due)
            self._changed.notify_all()
            return handed_over

    def resume(self) -> float | None:
        """Play on after pause(): from the first sample not handed over, `lead` from now (or
        after the blocks already rendered). Returns how far the audio moved (seconds), or None
        when it was not paused. Every moved segment is announced again with its new start."""
        with self._lock:
            if self._paused_from is None:
                return None
            paused_from, self._paused_from = self._paused_from, None
            shift = max(self._clock() + self.lead, self._rendered_until) - paused_from
            moved = [s for s in self._segments if s.end > paused_from]
            for segment in moved:
                segment.start += shift
            for due in self._held_due:
                due.when += shift
                heapq.heappush(self._due, due)
            self._held_due = []
            self._changed.notify_all()
        for segment in moved:
            if segment.announce is not None:
                segment.announce(segment.start)
        return shift

    def stop(self) -> float:
        """Silence now and drop everything queued; returns when the audio actually stops."""
        return self.stop_and_report()[0]

    def stop_and_report(self) -> tuple[float, list[str]]:
        """stop(), and the keys of the segments that will not play at all (in start order)."""
        with self._lock:
            self._generation += 1
            now = self._clock()
            # Samples already handed to the output still play; nothing after them does (when
            # paused, nothing after the pause: the audio has stopped already).
            handed_over = (
                max(now, self._rendered_until)
                if self._paused_from is None
                else min(self._paused_from, max(now, self._rendered_until))
            )
            self._paused_from, self._held_due = None, []
            audible_end = now
            cuts = []
            for segment in self._segments:
                if segment.start < handed_over and segment.end > now:
                    audible_end = max(audible_end, min(segment.end, handed_over))
                if 0 < segment.played < len(segment.samples):
                    cuts.append(
                        (segment.key, segment.played / self.sample_rate, len(segment.samples) / self.sample_rate)
                    )
            never_played = self._decide_outcomes(handed_over, audible_end)
            self._segments.clear()
            # Keep what already happened or still will: the start of audio that plays before
            # the stop takes effect. Ends are replaced by the one "stopped" report.
            self._due = [
                d
                for d in self._due  # a "start" always carries its segment
                if d.kind == "other" or (d.kind == "start" and d.segment is not None and d.segment.start < audible_end)
            ]
            heapq.heapify(self._due)
            if self._on_cut is not None:
                for cut in cuts:
                    self._at(now, functools.partial(self._on_cut, *cut))
            self._at(audible_end, functools.partial(self._stopped, audible_end))
            return audible_end, never_played

    def _decide_outcomes(self, handed_over: float, audible_end: float) -> list[str]:
        """The outcome of every committed segment when stop() empties the timeline (lock held):
        what was handed over whole still finishes, what started is cut when the audio stops,
        the rest never plays. Reported at those moments, after the starts that still happen."""
        never_played = []
        for segment in sorted(self._segments, key=lambda s: s.start):
            if segment.outcome:
                continue
            if segment.end <= handed_over:
                segment.outcome, when = "finished", segment.end
            elif segment.start < handed_over:
                segment.outcome, when = "cut", audible_end
            else:
                segment.outcome, when = "dropped", self._clock()
                never_played.append(segment.key)
            if self._on_segment is not None:
                self._at(when, functools.partial(self._on_segment, segment.outcome, segment.key, when))
        return never_played

    def close(self, flush: float = 0.5) -> None:
        """Stop the output; state reports due within `flush` seconds are delivered first."""
        with self._changed:
            deadline = time.monotonic() + flush
            while self._due and self._due[0].when <= self._clock() + flush and time.monotonic() < deadline:
                self._changed.wait(0.01)
            self._closed = True
            self._changed.notify_all()
        self.sink.close()
        self._notifier.join(2)

    # -- audio thread ---------------------------------------------------------------------
    def _render(self, out: np.ndarray, play_time: float) -> None:
        out.fill(0)
        frames = len(out)
        sounding = False
        with self._lock:
            if self._paused_from is not None:  # held: silence, and nothing is played out
                self._rendered_until = play_time + frames / self.sample_rate
                self._changed.notify_all()
                return
            for segment in self._segments:
                offset = int(round((segment.start - play_time) * self.sample_rate))
                src, dst = max(0, -offset), max(0, offset)
                if src < segment.played:
                    # Handed over before a pause: a sample is never played twice (the resume
                    # point need not fall on a block boundary).
                    dst, src = dst + segment.played - src, segment.played
                if dst >= frames or src >= len(segment.samples):
                    continue
                n = min(frames - dst, len(segment.samples) - src)
                out[dst : dst + n] = segment.samples[src : src + n]
                segment.played = max(segment.played, src + n)
                sounding = True
            self._rendered_until = play_time + frames / self.sample_rate
            self._segments = [s for s in self._segments if s.end > play_time]
            self._changed.notify_all()
        if sounding and self._on_rendered is not None:
            self._on_rendered(out, play_time)

    # -- speaking state -------------------------------------------------------------------
    def _at(self, when: float, action: Callable[[], None], kind: str = "other", segment: Segment | None = None) -> None:
        """Run `action` at monotonic time `when` on the notifier thread (lock held)."""
        heapq.heappush(self._due, _Due(when, next(self._due_order), action, kind, segment))
        self._changed.notify_all()

    def _notify_loop(self) -> None:
        while True:
            with self._changed:
                while not self._closed and (not self._due or self._due[0].when > self._clock()):
                    timeout = None if not self._due else max(self._due[0].when - self._clock(), 0.0)
                    self._changed.wait(timeout)
                if self._closed:
                    return
                item = heapq.heappop(self._due)
                self._changed.notify_all()
            item.action()

    def _segment_started(self, segment: Segment) -> None:
        with self._lock:
            self._speaking_key = segment.key
        self._on_state(True, segment.key, segment.start)
        if self._on_segment is not None:
            self._on_segment("started", segment.key, segment.start)

    def _segment_ended(self, segment: Segment) -> None:
        with self._lock:
            finished = not segment.outcome  # a stop() in between decided (and reports) it
            segment.outcome = segment.outcome or "finished"
            silent = not segment.followed and self._speaking_key == segment.key
            if silent:
                self._speaking_key = ""
        if silent:
            self._on_state(False, "", segment.end)
        if finished and self._on_segment is not None:
            self._on_segment("finished", segment.key, segment.end)

    def _stopped(self, when: float) -> None:
        with self._lock:
            self._speaking_key = ""
        self._on_state(False, "", when)
