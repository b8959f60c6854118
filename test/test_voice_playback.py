"""The Player on a hand-driven audio clock: sample-accurate starts, exact speaking state,
gapless sentences, and stopping within one block plus the output latency.

The sink here is driven by the test (render block k at its time), so every timing checked is
a property of the scheduling logic, not of how busy the machine is.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from fay_ros.voice.playback import Player, SimulatedSink
from harness import wait_until
from manual_clock import Clock

RATE = 1000  # 1 sample per ms keeps the arithmetic readable
BLOCK = 10
AHEAD = 0.02


class HandSink:
    """Renders only when the test says so; records every block with its play time."""

    def __init__(self, clock: Clock) -> None:
        self.sample_rate = RATE
        self.ahead = AHEAD
        self.description = "hand-driven test output"
        self.clock = clock
        self.render = None
        self.next_play = clock.t + AHEAD
        self.blocks: list[tuple[float, np.ndarray]] = []

    def start(self, render) -> None:
        self.render = render

    def close(self) -> None:
        pass

    def run_until(self, t: float) -> None:
        """Advance the clock to `t`, rendering each block `ahead` before it plays."""
        while self.next_play - self.ahead <= t:
            self.clock.t = self.next_play - self.ahead
            out = np.zeros(BLOCK, np.int16)
            self.render(out, self.next_play)
            self.blocks.append((self.next_play, out.copy()))
            self.next_play += BLOCK / RATE
        self.clock.t = t

    def output(self) -> tuple[float, np.ndarray]:
        """(play time of the first sample, everything rendered)."""
        return self.blocks[0][0], np.concatenate([b for _t, b in self.blocks])


class States:
    def __init__(self) -> None:
        self.items: list[tuple[bool, str, float]] = []
        self.lock = threading.Lock()

    def __call__(self, speaking: bool, key: str, when: float) -> None:
        with self.lock:
            self.items.append((speaking, key, round(when, 6)))

    def wait(self, n: int) -> list[tuple[bool, str, float]]:
        wait_until(lambda: len(self.items) >= n, 5, message=lambda: f"{n} states, got {self.items}")
        return list(self.items)


@pytest.fixture
def rig():
    clock = Clock(100.0)
    sink = HandSink(clock)
    states = States()
    cuts = []
    player = Player(sink, states, margin=0.005, clock=clock, on_cut=lambda *c: cuts.append(c))
    yield clock, sink, player, states, cuts
    player.close()


def ramp(n: int, base: int = 1) -> np.ndarray:
    return np.arange(base, base + n, dtype=np.int16)


def test_first_sample_plays_exactly_at_the_announced_time(rig):
    clock, sink, player, states, _ = rig
    sink.run_until(clock.t)
    announced = []
    start = player.schedule("c:0", ramp(250), announced.append)
    assert announced == [start]
    assert start >= clock.t + player.lead - 1e-9, "announced before it plays, with the lead"
    sink.run_until(start + 0.3)
    t0, out = sink.output()
    first = int(round((start - t0) * RATE))
    assert np.all(out[:first] == 0)
    assert np.array_equal(out[first : first + 250], ramp(250)), "every sample where the timeline says"
    assert np.all(out[first + 250 :] == 0)
    assert states.wait(2) == [(True, "c:0", round(start, 6)), (False, "", round(start + 0.25, 6))]


def test_back_to_back_sentences_are_gapless_and_speaking_stays_true(rig):
    clock, sink, player, states, _ = rig
    sink.run_until(clock.t)
    a = player.schedule("c:0", ramp(200), lambda _t: None)
    sink.run_until(clock.t + 0.1)  # sentence 1 plays while sentence 2 is handed over
    b = player.schedule("c:1", ramp(150, base=1000), lambda _t: None)
    assert b == pytest.approx(a + 0.2), "the next sentence starts on the sample after the last one"
    sink.run_until(b + 0.3)
    _t0, out = sink.output()
    voiced = np.flatnonzero(out)
    assert len(voiced) == 350 and voiced[-1] - voiced[0] == 349, "no gap between the sentences"
    assert states.wait(3) == [(True, "c:0", round(a, 6)), (True, "c:1", round(b, 6)), (False, "", round(b + 0.15, 6))]


def test_a_late_sentence_leaves_a_gap_and_speaking_says_so(rig):
    clock, sink, player, states, _ = rig
    sink.run_until(clock.t)
    a = player.schedule("c:0", ramp(100), lambda _t: None)
    sink.run_until(a + 0.2)  # sentence 1 is over before sentence 2 exists
    b = player.schedule("c:1", ramp(100), lambda _t: None)
    sink.run_until(b + 0.2)
    assert b > a + 0.1
    assert states.wait(4) == [
        (True, "c:0", round(a, 6)),
        (False, "", round(a + 0.1, 6)),
        (True, "c:1", round(b, 6)),
        (False, "", round(b + 0.1, 6)),
    ]


def test_stop_silences_within_one_block_plus_latency_and_drops_the_queue(rig):
    clock, sink, player, states, cuts = rig
    sink.run_until(clock.t)
    a = player.schedule("c:0", ramp(1000), lambda _t: None)
    b = player.schedule("c:1", ramp(500, base=2000), lambda _t: None)
    sink.run_until(a + 0.3)
    stop_called = clock.t
    silent_from = player.stop()
    assert silent_from - stop_called <= AHEAD + BLOCK / RATE + 1e-9, "audio already handed over is all that plays"
    sink.run_until(b + 1.0)
    t0, out = sink.output()
    cut_index = int(round((silent_from - t0) * RATE))
    assert np.count_nonzero(out[cut_index:]) == 0, "nothing plays after the stop"
    assert 0 < np.count_nonzero(out[:cut_index]) < 1000, "the sentence was cut, not finished"
    assert not np.any(out >= 2000), "the queued sentence never plays"
    assert states.wait(2) == [(True, "c:0", round(a, 6)), (False, "", round(silent_from, 6))]
    assert len(cuts) == 1 and cuts[0][0] == "c:0" and cuts[0][1] < cuts[0][2] == pytest.approx(1.0)
    assert player.schedule("d:0", ramp(10), lambda _t: None, generation=player.generation - 1) is None, (
        "work prepared before the stop is refused"
    )


def test_stop_when_idle_still_reports_not_speaking(rig):
    clock, sink, player, states, _ = rig
    sink.run_until(clock.t)
    assert player.stop() == clock.t
    assert states.wait(1) == [(False, "", round(clock.t, 6))]


def test_a_slow_announcement_moves_the_start_and_announces_again(rig):
    clock, sink, player, states, _ = rig
    sink.run_until(clock.t)
    announced = []

    def slow_publish(at: float) -> None:
        announced.append(at)
        if len(announced) == 1:
            sink.run_until(at + 0.05)  # the machine stalled past the announced start

    start = player.schedule("c:0", ramp(100), slow_publish)
    assert len(announced) == 2 and announced[-1] == start > announced[0]
    sink.run_until(start + 0.2)
    t0, out = sink.output()
    first = int(round((start - t0) * RATE))
    assert np.array_equal(out[first : first + 100], ramp(100)), "the final announcement is the true start"


def test_pause_holds_every_sample_and_resume_plays_on_with_moved_starts(rig):
    clock, sink, player, states, cuts = rig
    sink.run_until(clock.t)
    announced: dict[str, list[float]] = {"c:0": [], "c:1": []}
    a = player.schedule("c:0", ramp(300), announced["c:0"].append)
    b = player.schedule("c:1", ramp(200, base=1000), announced["c:1"].append)
    sink.run_until(a + 0.1)
    paused_at = clock.t
    silent_from = player.pause()
    assert silent_from is not None and silent_from - paused_at <= AHEAD + BLOCK / RATE + 1e-9
    assert player.pause() is None, "held already"
    sink.run_until(a + 1.0)  # a long hold: nothing plays, nothing ends, nothing starts
    t0, out = sink.output()
    held_index = int(round((silent_from - t0) * RATE))
    assert np.count_nonzero(out[held_index:]) == 0
    assert states.wait(1)[0] == (True, "c:0", round(a, 6))  # (and no end during the hold: the full list below)
    resumed_at = clock.t
    shift = player.resume()
    assert shift is not None and player.resume() is None
    sink.run_until(b + shift + 0.5)
    t0, out = sink.output()
    voiced = out[np.flatnonzero(out)]
    assert np.array_equal(voiced, np.concatenate([ramp(300), ramp(200, base=1000)])), "not a sample lost or doubled"
    on_again = int(round((silent_from + shift - t0) * RATE))
    assert np.count_nonzero(out[held_index:on_again]) == 0 and out[on_again] != 0
    assert silent_from + shift >= resumed_at + player.lead - 1e-9, "announced before it plays on"
    # each waiting sentence is announced again with its moved start; speaking follows the audio
    assert announced == {"c:0": [a, a + shift], "c:1": [b, b + shift]}
    assert states.wait(3) == [
        (True, "c:0", round(a, 6)),
        (True, "c:1", round(b + shift, 6)),
        (False, "", round(b + shift + 0.2, 6)),
    ]
    assert cuts == []


def test_stop_while_held_ends_the_turn_at_once_and_drops_the_rest(rig):
    clock, sink, player, states, cuts = rig
    sink.run_until(clock.t)
    a = player.schedule("c:0", ramp(300), lambda _t: None)
    player.schedule("c:1", ramp(200, base=1000), lambda _t: None)
    sink.run_until(a + 0.1)
    silent_from = player.pause()
    sink.run_until(a + 0.4)
    stopped_at = clock.t
    assert player.stop_and_report() == (stopped_at, ["c:1"]), "the audio stopped already; c:1 never plays"
    assert not player.paused
    sink.run_until(a + 2.0)
    t0, out = sink.output()
    assert np.count_nonzero(out[int(round((silent_from - t0) * RATE)) :]) == 0
    assert states.wait(2) == [(True, "c:0", round(a, 6)), (False, "", round(stopped_at, 6))]
    assert len(cuts) == 1 and cuts[0][0] == "c:0" and cuts[0][1] < 0.3
    start = player.schedule("d:0", ramp(50), lambda _t: None)  # and the voice works again
    sink.run_until(start + 0.2)
    assert states.wait(4)[2:] == [(True, "d:0", round(start, 6)), (False, "", round(start + 0.05, 6))]


def test_pause_with_nothing_playing_holds_nothing(rig):
    clock, sink, player, _states, _ = rig
    sink.run_until(clock.t)
    assert player.pause() is None and not player.paused
    start = player.schedule("c:0", ramp(20), lambda _t: None)
    sink.run_until(start + 0.1)
    assert player.pause() is None, "its audio was all handed over"


def test_simulated_sink_plays_in_real_time_order():
    """The headless sink calls render with consecutive, evenly spaced play times."""
    sink = SimulatedSink(22050, block_seconds=0.01)
    seen: list[float] = []
    done = threading.Event()

    def render(out, play_time):
        seen.append(play_time)
        if len(seen) >= 5:
            done.set()

    sink.start(render)
    try:
        assert done.wait(5)
    finally:
        sink.close()
    gaps = np.diff(seen[:5])
    assert np.allclose(gaps, sink.block_frames / 22050)
