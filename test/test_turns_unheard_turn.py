"""The rule for a user's new words and their last turn whose answer they have not heard
(fay_ros.turns.unheard_turn); the engine's side of it is tested in test_dialogue_engine
(`test_with_a_voice_a_finished_answer_not_heard_yet_is_joined_and_leaves_the_history` and the
running-turn join)."""

from __future__ import annotations

import pytest

from fay_ros.turns.unheard_turn import Join, join_unheard, joined_text


@pytest.mark.parametrize(
    ("is_running_turn", "done", "cancelled", "expected"),
    [
        (True, False, False, Join.RUNNING),  # still answering: cancelled, both parts in one turn
        (False, False, False, Join.NONE),  # an older turn still winding down: left alone
        (False, True, False, Join.FINISHED),  # answered, the answer waits unheard: taken back
        (True, True, False, Join.FINISHED),
        (False, True, True, Join.NONE),  # cancelled (interrupted, replaced): nothing to take back
    ],
)
def test_which_unheard_turn_is_joined(is_running_turn, done, cancelled, expected):
    assert join_unheard(is_running_turn=is_running_turn, done=done, cancelled=cancelled) is expected


def test_the_joined_turn_answers_both_parts_in_the_order_they_were_said():
    assert joined_text("Please call me.", "tomorrow morning.") == "Please call me. tomorrow morning."
