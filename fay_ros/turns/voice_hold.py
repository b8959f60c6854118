"""Holding the robot's voice while a person talks over it (the tts node's side of the hold).

The mic's duplex gate (duplex_gate) says when a person starts talking over the robot
(`audio/talk_over` true) and when they stop without barging in (false). The voice then:

- holds on talk-over (a pause, nothing dropped), when `hold_on_talk_over`; the node asks the
  pipeline to hold and reports `held` when it did (nothing plays: no hold);
- goes on `release_grace_s` after the release: in that grace the recogniser may still
  interrupt for a short stop request ("stop!", 等一下: stop_request); talk-over again within
  the grace cancels the pending go-on (the hold goes on);
- goes on by itself after `hold_max_s` held with neither a release nor an interrupt;
- forgets the hold on an interrupt (the stop ends it).

Pure logic on one monotonic clock: the node feeds it the mic's messages with the time they
came and polls `due` on a timer; the decisions (hold now, go on now) are its actions.
"""

from __future__ import annotations

from dataclasses import dataclass

# Why the voice goes on (`GoOn.why`).
RELEASED = "the person stopped without barging in or asking to stop"


@dataclass(frozen=True)
class HoldSettings:
    hold_on_talk_over: bool = True  # false: never hold
    release_grace_s: float = 0.3  # after a release, before the voice goes on
    hold_max_s: float = 3.0  # held this long with neither a release nor an interrupt: go on


@dataclass(frozen=True)
class GoOn:
    why: str  # for the log
    held_s: float  # how long the voice was held


class VoiceHold:
    def __init__(self, settings: HoldSettings | None = None) -> None:
        self.settings = settings or HoldSettings()
        self._held_since: float | None = None  # when the voice was held (talk-over)
        self._go_on_at: float | None = None  # when a released hold goes on (after release_grace_s)

    @property
    def holding(self) -> bool:
        return self._held_since is not None

    def talk_over(self, talking: bool, now: float) -> bool:
        """The mic's talk-over (true: a person talks over the robot; false: they stopped without
        barging in). True: hold the voice now (then `held(now)` if it did hold)."""
        if not talking:
            if self._held_since is not None:
                self._go_on_at = now + self.settings.release_grace_s
            return False
        if self._go_on_at is not None:  # talking again before the held voice went on
            self._go_on_at = None
            return False
        return self.settings.hold_on_talk_over

    def held(self, now: float) -> None:
        """The voice holds from `now` (the pipeline paused something playing)."""
        self._held_since = now

    def interrupted(self) -> None:
        """An interrupt stopped the voice: it ends the hold too."""
        self._held_since = self._go_on_at = None

    def due(self, now: float) -> GoOn | None:
        """The voice goes on now (once), or None."""
        if self._held_since is None:
            return None
        if self._go_on_at is not None and now >= self._go_on_at:
            why = RELEASED
        elif now - self._held_since >= self.settings.hold_max_s:
            why = f"held {self.settings.hold_max_s:g} s with no release or interrupt"
        else:
            return None
        held = now - self._held_since
        self._held_since = self._go_on_at = None
        return GoOn(why, held)
