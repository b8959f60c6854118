"""Half duplex and barge-in: what the microphone does while the robot itself is speaking.

Without echo cancellation the microphone hears the robot's own voice; forwarding it lets the
companion answer itself (Fay's self-hearing loop). So while `robot_speaking` is true:

- barge-in off: the microphone is muted (no audio/raw, no voice activity) until the robot has
  stopped and `echo_tail_ms` of reverberation has passed;
- barge-in on: audio is still held back, but the gate watches for the person clearly talking
  over the robot: voiced frames at least `margin_db` louder than the robot's echo level, for
  `min_ms` within a short window. The echo level is learned while the robot speaks (a high
  percentile of recent frame levels, kept between turns), so the robot's own voice, however
  loud at the microphone, never qualifies. On the robot's very first turn the gate listens
  for `learn_ms` before it judges (no echo level is known yet). On barge-in the gate asks for `interrupt` once and
  opens, releasing the last `preroll_ms` of audio so the person's first words are not lost.

With echo cancellation (hearing/echo.py) the gate also gets, per frame, how much the canceller
took out (`suppression_db`, the microphone level minus the cancelled level). Once the canceller
has converged on the robot's voice (the median suppression of the last second of loud robot
frames is at least `converged_db`), a voiced frame loud enough (`min_level_dbfs`) from which
the canceller took at most `double_talk_db` is a person talking too (what is left is mostly not
the robot), even when it is no louder than the echo -- but at least as loud as the echo usually
is (in a quiet stretch of the robot's voice the canceller has little to take out, and its own
echo would pass). Both rules need `min_ms` of such frames, so
a backchannel ("yeah", 嗯, 对, 嗯嗯: 200-550 ms of voice) does not barge in at the mic's default
600 ms (at 500 ms espeak-ng's 嗯嗯 sometimes did). While the canceller settles on a new phrase
of the robot's voice (`settling`, from the mic's core) a frame is double talk only with at most
SETTLING_DOUBLE_TALK_DB taken out of it, and for the hold only.

Holding the voice: deciding a barge-in takes `min_ms` of talk-over, too long to leave the
robot talking over the person. So after `hold_ms` of consecutive talk-over frames (or of
talk-over within twice that which began with a first consonant: see below) the gate asks
the voice to hold (a pause, nothing dropped); if the talk-over stops for `release_ms` before it
is a barge-in (a backchannel, a cough) it asks the voice to go on; a barge-in stops it for good.
A hold that lasts `long_hold_ms` with no such pause is a barge-in too: the person keeps talking,
though too little of it stands out of the echo for the window's count. Given how periodic each
frame is at a voice's pitch, that needs `long_hold_voiced_ms` of voiced talk-over in the hold:
typing close to the mic keeps a hold going as well (a click every 100-200 ms), but it is no voice.

The first consonant of a person ("s" of "Stop" or "Sorry") is soft and hides under the robot's
voiced echo for 100-150 ms, but it is loud above 3.5 kHz, where the cancelled robot's voice has
little. With echo cancellation, a voiced frame whose high band stands
`high_band_margin_db` over that band's usual level in the robot's cancelled echo (the 99th
percentile of its recent frames) counts as talk-over for the hold only: a hold is undone in
`release_ms`, a barge-in is not, so the window's count keeps to the two rules above. After
such a consonant the hold's talk-over need not be consecutive: "S-t-op" is the "s", the "t"
closure under the echo, the vowel (with consecutive frames only, 30 ms later). Talk-over that
starts without one still needs consecutive frames: a played block a few ms late leaves two
lone frames of the robot's own echo close together now and then.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from .turn_timing import SETTLING_DOUBLE_TALK_DB

# The robot's usual high band: this percentile of its cancelled echo's recent frames.
HIGH_BAND_PERCENTILE = 99.0
# What a frame was, for the hold (DuplexGate._hold_recent).
QUIET, TALK, CONSONANT = 0, 1, 2
# A frame at least this periodic at a voice's pitch (audio.periodicity) is voiced: a vowel is
# 0.4-0.7 through the canceller, typing, hiss, a clap or a cough stay under 0.25.
VOICED_PERIODICITY = 0.3


@dataclass(frozen=True)
class DuplexSettings:
    barge_in: bool = False
    margin_db: float = 10.0  # person over echo, in dB
    min_ms: int = 300  # talk-over time needed
    window_ms: int = 450  # ... within this window
    echo_tail_ms: int = 300  # stay muted this long after the robot stops
    min_level_dbfs: float = -45.0  # talk-over must also be at least this loud
    echo_history_ms: int = 3000
    learn_ms: int = 600  # first turn only: listen to the echo this long before judging
    echo_percentile: float = 90.0
    double_talk_db: float = 6.0  # with echo cancellation: at most this much taken out = a person
    converged_db: float = 10.0  # ... once the canceller takes this much out of the robot's voice
    hold_ms: int = 60  # consecutive talk-over that holds the voice (0: never hold)
    release_ms: int = 400  # no talk-over this long while held: the voice goes on
    long_hold_ms: int = 1200  # held this long without a release: the person is talking, a barge-in
    high_band_margin_db: float = 14.0  # with echo cancellation: high band this far over the echo's = hold (0: off)
    long_hold_voiced_ms: int = 300  # ... of voiced talk-over (periodic at a pitch) in a long hold


@dataclass
class GateDecision:
    forward: bool  # publish this frame's audio
    interrupt: bool = False  # the person barged in now: publish `interrupt`, then the held pre-roll
    hold: bool = False  # the person started talking over the robot: hold the voice
    release: bool = False  # ... and stopped without barging in: the voice goes on


class DuplexGate:
    """Frame-level decision. Times are in seconds on any monotonic clock."""

    def __init__(self, settings: DuplexSettings, frame_ms: int) -> None:
        self.settings = settings
        self.frame_ms = frame_ms
        self.robot_speaking = False
        self._muted_until = float("-inf")
        self._barged = False  # person took the turn during this robot turn
        self._holding = False  # the voice is asked to hold (talk-over, no barge-in yet)
        self._quiet_run = 0  # consecutive frames without talk-over
        self._held_frames = 0  # frames since the hold began
        self._held_voiced = 0  # ... of them voiced talk-over (periodic at a pitch)
        self._echo: deque[float] = deque()  # levels (dB) of the robot's echo
        self._echo_threshold: float | None = None  # carried over between turns
        self._recent: deque[bool] = deque()  # frame over threshold?
        self._suppression: deque[float] = deque(maxlen=max(1, 1000 // frame_ms))  # of loud robot frames
        self._high_band: deque[float] = deque()  # high-band levels (dB) of the robot's cancelled echo
        self._hold_recent: deque[int] = deque()  # the last frames (QUIET, TALK or CONSONANT), for the hold
        self.update(settings)

    def update(self, settings: DuplexSettings) -> None:
        """New barge-in settings (live parameters) from the next frame on; what was learned of
        the echo stays. An echo-tail mute already running keeps its end."""
        self.settings = settings
        self._echo = deque(self._echo, maxlen=max(1, settings.echo_history_ms // self.frame_ms))
        self._high_band = deque(self._high_band, maxlen=max(1, settings.echo_history_ms // self.frame_ms))
        self._recent = deque(self._recent, maxlen=max(1, settings.window_ms // self.frame_ms))
        self._needed = max(1, settings.min_ms // self.frame_ms)
        self._learn_frames = max(5, settings.learn_ms // self.frame_ms)
        self._hold_frames = max(1, -(-settings.hold_ms // self.frame_ms)) if settings.hold_ms > 0 else 0
        self._hold_recent = deque(self._hold_recent, maxlen=max(1, 2 * self._hold_frames))
        self._release_frames = max(1, -(-settings.release_ms // self.frame_ms))
        self._long_hold_frames = max(1, settings.long_hold_ms // self.frame_ms)
        self._long_hold_voiced = settings.long_hold_voiced_ms // self.frame_ms

    def set_robot_speaking(self, speaking: bool, now: float) -> None:
        if speaking != self.robot_speaking:
            self._holding = False  # a hold lasts while the robot speaks (an interrupt ends both)
            # (and its count with it: a long hold left over from the last turn barged in on the
            # first frame of the next, a resume loop)
            self._quiet_run = self._held_frames = self._held_voiced = 0
            self._hold_recent.clear()
        if speaking and not self.robot_speaking:
            self._barged = False
            self._recent.clear()
        if not speaking and self.robot_speaking:
            # After a barge-in the person is talking: no echo-tail mute over their words.
            self._muted_until = float("-inf") if self._barged else now + self.settings.echo_tail_ms / 1000.0
            if len(self._echo) >= 5:
                self._echo_threshold = self._threshold()
        self.robot_speaking = speaking

    def _echo_db(self) -> float:
        """The robot's echo level as the gate hears it (a high percentile of recent frames)."""
        if len(self._echo) >= 5:
            return float(np.percentile(np.fromiter(self._echo, float), self.settings.echo_percentile))
        if self._echo_threshold is not None:
            return self._echo_threshold - self.settings.margin_db
        return self.settings.min_level_dbfs - self.settings.margin_db

    def _threshold(self) -> float:
        if len(self._echo) < 5 and self._echo_threshold is not None:
            return self._echo_threshold
        return max(self._echo_db() + self.settings.margin_db, self.settings.min_level_dbfs)

    @property
    def echo_threshold_db(self) -> float:
        return self._threshold()

    @property
    def canceller_converged(self) -> bool:
        return (
            2 * len(self._suppression) >= (self._suppression.maxlen or 1)
            and float(np.median(np.fromiter(self._suppression, float))) >= self.settings.converged_db
        )

    def _high_band_over(self, voiced: bool, high_band_db: float | None) -> bool:
        """A consonant over the robot's cancelled echo (the hold's rule only: see the module)."""
        known = self._high_band
        if (
            high_band_db is None
            or not voiced
            or not self.settings.high_band_margin_db
            or 10 * len(known) < 3 * (known.maxlen or 1)
            or not self.canceller_converged
        ):
            return False
        usual = float(np.percentile(np.fromiter(known, float), HIGH_BAND_PERCENTILE))
        return high_band_db >= usual + self.settings.high_band_margin_db

    def step(
        self,
        voiced: bool,
        level_db: float,
        now: float,
        suppression_db: float | None = None,
        input_db: float | None = None,
        high_band_db: float | None = None,
        periodicity: float | None = None,
        settling: bool = False,
    ) -> GateDecision:
        """`suppression_db`, `input_db`, `high_band_db`: with echo cancellation, how much the
        canceller took out of this frame, the level before it did, and the level of what is left
        above 3.5 kHz. `periodicity`: how periodic the frame is at a voice's pitch (None: not
        known, a long hold needs no voiced frames). `settling`: the canceller is settling on a
        new phrase of the robot's voice (SETTLING_DOUBLE_TALK_DB)."""
        if not self.robot_speaking and now >= self._muted_until:
            return GateDecision(True)
        if not self.robot_speaking or not self.settings.barge_in:
            return GateDecision(False)
        if self._barged:
            return GateDecision(True)
        if self._echo_threshold is None and len(self._echo) < self._learn_frames:
            # No echo level known yet (the robot's first turn): learn it before judging.
            self._echo.append(level_db)
            return GateDecision(False)
        over = voiced and level_db >= self._threshold()
        # Double talk also needs the frame at least as loud as the echo usually is: in a quiet
        # stretch of the robot's voice the canceller has little to take out of its own echo.
        double_talk = (
            suppression_db is not None
            and voiced
            and level_db >= self.settings.min_level_dbfs
            and level_db >= self._echo_db()
            and suppression_db <= (SETTLING_DOUBLE_TALK_DB if settling else self.settings.double_talk_db)
            and self.canceller_converged
        )
        talk = over or (double_talk and not settling)
        self._recent.append(talk)
        settling_talk = double_talk and settling  # (the hold's only, like a consonant)
        consonant = not talk and not settling_talk and self._high_band_over(voiced, high_band_db)
        holding_talk = talk or settling_talk or consonant
        self._quiet_run = 0 if holding_talk else self._quiet_run + 1
        self._hold_recent.append(CONSONANT if consonant else TALK if talk or settling_talk else QUIET)
        if not holding_talk and high_band_db is not None:
            self._high_band.append(high_band_db)
        if not (talk or settling_talk):
            self._echo.append(level_db)
            if (
                suppression_db is not None
                and input_db is not None
                and input_db >= self.settings.min_level_dbfs
                and not settling
            ):
                self._suppression.append(suppression_db)
        self._held_frames += self._holding
        voiced_talk = holding_talk and (periodicity is None or periodicity >= VOICED_PERIODICITY)
        self._held_voiced += self._holding and voiced_talk
        long_hold = self._held_frames >= self._long_hold_frames and self._held_voiced >= self._long_hold_voiced
        if sum(self._recent) >= self._needed or long_hold:
            # (a hold that no pause of `release_ms` ended: talk-over too sparse under the echo for
            # the window's count, yet going on; a backchannel is over well before)
            self._barged, self._holding = True, False
            return GateDecision(True, interrupt=True)
        if not self._holding and self._hold_frames and holding_talk and self._hold_due():
            self._holding, self._held_frames, self._held_voiced = True, 0, 0
            return GateDecision(False, hold=True)
        if self._holding and self._quiet_run >= self._release_frames:
            self._holding = False
            return GateDecision(False, release=True)
        return GateDecision(False)

    def _hold_due(self) -> bool:
        """`hold_ms` of talk-over up to this frame (a talk-over one): consecutive, or within
        twice that after a first consonant (its closure under the echo, then the vowel: "S-t-op")."""
        recent, needed = list(self._hold_recent), self._hold_frames
        if all(kind != QUIET for kind in recent[-needed:]) and len(recent) >= needed:
            return True
        return CONSONANT in recent[:-1] and sum(kind != QUIET for kind in recent) >= needed

    @property
    def open(self) -> bool:
        return not self.robot_speaking or self._barged
