"""The dialogue node's live parameters through its own parameter service (`ros2 param set`):
a live change takes effect on the next turn; a read-only one is refused with the reason; an
invalid value is refused with the pydantic message."""

from __future__ import annotations

import dialogue_fake_llm as fake
from fay_msgs.msg import Transcript
from harness import dialogue_node


def _turn(probe, replies, text_input, llm, text: str) -> dict:
    before = len(llm.requests)
    replies.clear()
    text_input.publish(Transcript(text=text, user_id="alice", language="en", is_final=True))
    replies.wait_for(lambda msgs: next((m for m in msgs if m.is_end), None), what="the end of the reply")
    return llm.requests[before]


def test_live_changes_apply_to_the_next_turn_and_others_are_refused(ros, llm):
    llm.reset()
    with dialogue_node(
        ros, {"base_url": llm.base_url, "model": "scripted", "memory": False, "model_profile": "capable"}
    ) as (node, replies, text_input):
        llm.script(fake.judge_finish("It is a fine day."))
        judged = _turn(ros, replies, text_input, llm, "how is the day")
        assert "response_format" in judged  # the judge asks for its JSON verdict

        [result] = ros.set_parameters("dialogue", judge=False)
        assert result.successful, result.reason
        assert ros.get_parameter("dialogue", "judge") is False
        llm.script(fake.text("The sun is out."))
        direct = _turn(ros, replies, text_input, llm, "how is the day now")
        assert "response_format" not in direct, "judge off: one direct answer"

        results = ros.set_parameters("dialogue", model_profile="tiny", max_tokens=40)
        assert all(r.successful for r in results), [r.reason for r in results]
        llm.script(fake.text("It is sunny."))
        tiny = _turn(ros, replies, text_input, llm, "and tomorrow")
        assert tiny.get("repeat_penalty") == 1.15 and tiny["max_tokens"] <= 40  # the tiny profile's decoding

        [result] = ros.set_parameters("dialogue", base_url="http://127.0.0.1:1/v1")
        assert not result.successful and "read-only" in result.reason
        [result] = ros.set_parameters("dialogue", temperature=5.0)
        assert (
            not result.successful
            and "parameter 'temperature'" in result.reason
            and "less than or equal to 2" in result.reason
        )
        assert ros.get_parameter("dialogue", "temperature") == 0.7
        [result] = ros.set_parameters("dialogue", new_task="ignore")
        assert not result.successful and "parameter 'new_task'" in result.reason
