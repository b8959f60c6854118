"""The voice's hold over a talk-over (fay_ros.turns.voice_hold), on a simulated clock."""

from __future__ import annotations

from fay_ros.turns.voice_hold import RELEASED, HoldSettings, VoiceHold


def test_a_release_lets_the_voice_go_on_after_the_grace_once():
    hold = VoiceHold(HoldSettings(release_grace_s=0.3, hold_max_s=3.0))
    assert hold.talk_over(True, 1.0)
    hold.held(1.0)
    assert hold.holding and hold.due(1.2) is None
    assert not hold.talk_over(False, 1.4)
    assert hold.due(1.69) is None
    go_on = hold.due(1.7)
    assert go_on is not None and go_on.why == RELEASED and abs(go_on.held_s - 0.7) < 1e-9
    assert not hold.holding and hold.due(5.0) is None


def test_talk_over_again_within_the_grace_keeps_the_hold():
    hold = VoiceHold(HoldSettings(release_grace_s=0.3, hold_max_s=3.0))
    hold.talk_over(True, 0.0)
    hold.held(0.0)
    hold.talk_over(False, 0.5)
    assert not hold.talk_over(True, 0.6)  # (the pending go-on is cancelled, no second hold)
    assert hold.due(0.9) is None and hold.holding
    go_on = hold.due(3.0)  # ... until hold_max_s
    assert go_on is not None and "held 3 s" in go_on.why


def test_an_interrupt_ends_the_hold_and_never_hold_is_honoured():
    hold = VoiceHold()
    hold.talk_over(True, 0.0)
    hold.held(0.0)
    hold.interrupted()
    assert not hold.holding and hold.due(10.0) is None
    assert not VoiceHold(HoldSettings(hold_on_talk_over=False)).talk_over(True, 0.0)


def test_a_release_without_a_hold_changes_nothing():
    hold = VoiceHold()
    assert not hold.talk_over(False, 0.0)
    assert hold.talk_over(True, 0.1)  # (a later talk-over still holds)
    assert hold.due(100.0) is None  # (the pipeline did not hold: nothing to go on from)
