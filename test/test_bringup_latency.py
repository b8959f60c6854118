"""LatencyTracker turns observed moments into per-stage durations."""

import pytest

from fay_ros.bringup.latency import LatencyTracker


def test_full_turn_yields_every_stage():
    t = LatencyTracker()
    t.on_final_transcript(speech_end=10.0, received=10.3)
    t.on_llm_first_token(0.4)
    t.on_first_reply(10.8, "c7")
    turn = t.on_speaking(True, 11.0)
    assert turn is not None and turn.conversation_id == "c7"
    assert turn.stages["speech_end_to_transcript"] == pytest.approx(0.3)
    assert turn.stages["transcript_to_first_reply"] == pytest.approx(0.5)
    assert turn.stages["first_reply_to_first_audio"] == pytest.approx(0.2)
    assert turn.stages["voice_to_first_audio"] == pytest.approx(1.0)
    assert turn.stages["pipeline_share"] == pytest.approx(0.6)


def test_speaking_without_a_turn_is_ignored_and_new_speech_abandons_open_turn():
    t = LatencyTracker()
    assert t.on_speaking(True, 1.0) is None  # e.g. a broadcast, not an answer to speech
    t.on_final_transcript(1.0, 1.2)
    t.on_final_transcript(2.0, 2.1)
    t.on_first_reply(2.5, "c2")
    turn = t.on_speaking(True, 2.7)
    assert turn.conversation_id == "c2" and turn.stages["speech_end_to_transcript"] == pytest.approx(0.1)
    assert "llm_time_to_first_token" not in turn.stages
    assert t.on_speaking(True, 3.0) is None  # second sentence of the same reply


def test_milestones_place_each_moment_after_the_end_of_speech():
    t = LatencyTracker()
    t.on_speculative(10.15)
    t.on_final_transcript(speech_end=10.0, received=10.2)
    t.on_llm_first_token(0.3, at=10.45)  # the model started on the speculative text
    t.on_first_reply(10.6, "c1")
    turn = t.on_speaking(True, 10.65)
    assert turn.milestones == pytest.approx(
        {"speculative": 0.15, "final": 0.2, "llm_first_token": 0.45, "first_reply": 0.6, "first_audio": 0.65}
    )
    assert turn.stages["voice_to_first_audio"] == pytest.approx(0.65)


def test_a_withdrawn_speculation_is_not_the_turns():
    t = LatencyTracker()
    t.on_speculative(1.1)
    t.on_speculative(1.3, withdrawn=True)  # the person went on
    t.on_final_transcript(speech_end=2.0, received=2.2)
    t.on_llm_first_token(0.2)  # no stamp: its moment is unknown
    t.on_first_reply(2.6, "c2")
    turn = t.on_speaking(True, 2.7)
    assert set(turn.milestones) == {"final", "first_reply", "first_audio"}
    # a speculation stands for the next final only
    t.on_speculative(3.1)
    t.on_final_transcript(speech_end=3.0, received=3.2)
    t.on_final_transcript(speech_end=4.0, received=4.2)
    t.on_first_reply(4.5, "c3")
    assert "speculative" not in t.on_speaking(True, 4.6).milestones


def test_latency_monitor_publishes_each_turn_as_a_typed_message(ros, launch_node):
    import math

    from std_msgs.msg import Header, String

    from fay_msgs.msg import LlmLatency, SpeechState, Transcript, TurnLatency, Utterance
    from fay_ros.common import qos
    from fay_ros.common.rostime import to_time_msg
    from harness import wait_until

    node = launch_node("fay_ros.nodes.latency_monitor", {"print_events": True})
    turns = ros.collect(TurnLatency, "latency/turns")
    events = ros.collect(String, "/fay/latency_monitor/events")
    final = ros.publisher(Transcript, "speech/final")
    reply = ros.publisher(Utterance, "reply")
    speaking = ros.publisher(SpeechState, "robot_speaking", qos.LATCHED)
    llm = ros.publisher(LlmLatency, "dialogue/llm_latency")
    speculative = ros.publisher(Transcript, "speech/speculative")
    for pub in (final, reply, speaking, llm, speculative):
        ros.wait_for_subscribers(pub)
    node.wait_ready(probe=ros)
    wait_until(lambda: events.subscription.get_publisher_count() >= 1, message="the monitor's events")
    wait_until(lambda: turns.subscription.get_publisher_count() >= 1, message="the monitor's turns")

    def taken(kind: str) -> None:
        events.wait_for(lambda msgs: msgs and msgs[-1].data == kind, what=f"the monitor taking in {kind}")

    now = ros.node.get_clock().now().nanoseconds * 1e-9
    # Topics are not ordered against each other: send each event once the monitor has
    # reported the previous one (~/events), as causality orders them in a real turn.
    said, answer = "what time is it", "It is noon."
    speculative.publish(Transcript(user_id="alice", text=said, header=Header(stamp=to_time_msg(now - 0.25))))
    taken("speculative")
    final.publish(Transcript(user_id="alice", text=said, is_final=True, header=Header(stamp=to_time_msg(now - 0.25))))
    taken("final")
    first_token = LlmLatency(conversation_id="c1", time_to_first_token=0.120, context_seconds=0.01)
    first_token.header.stamp = to_time_msg(now + 0.25)
    llm.publish(first_token)
    taken("llm_first_token")
    reply.publish(Utterance(user_id="alice", conversation_id="c1", seq=0, text=answer, is_first=True))
    taken("first_reply")
    speaking.publish(SpeechState(speaking=True, utterance_id="c1:0", header=Header(stamp=to_time_msg(now + 0.5))))
    turn = turns.wait_for_count(1)[0]
    assert turn.voice_to_first_audio == pytest.approx(0.750, abs=0.001)
    assert turn.speech_end_to_transcript > 0
    assert turn.llm_time_to_first_token == pytest.approx(0.120)
    assert all(
        math.isfinite(v) for v in (turn.transcript_to_first_reply, turn.first_reply_to_first_audio, turn.pipeline_share)
    )
    # the turn is known by its conversation id, never by its words
    assert turn.conversation_id == "c1"
    assert node.stop() == 0  # exited: the line it prints per turn is in its output
    assert "voice_to_first_audio 750 ms" in node.output()
    assert "llm_first_token 500 ms" in node.output() and "first_audio 750 ms" in node.output()
    assert [m.data for m in events.messages] == ["speculative", "final", "llm_first_token", "first_reply"]
    assert all(f"[latency] event {kind}" in node.output() for kind in ("final", "llm_first_token", "first_reply"))
    assert said not in node.output() and answer not in node.output()


def test_a_turn_without_an_llm_token_has_nan_for_it(ros, launch_node):
    import math

    from std_msgs.msg import Header, String

    from fay_msgs.msg import SpeechState, Transcript, TurnLatency, Utterance
    from fay_ros.common import qos
    from fay_ros.common.rostime import to_time_msg

    node = launch_node("fay_ros.nodes.latency_monitor")
    turns = ros.collect(TurnLatency, "latency/turns")
    events = ros.collect(String, "/fay/latency_monitor/events")
    final = ros.publisher(Transcript, "speech/final")
    reply = ros.publisher(Utterance, "reply")
    speaking = ros.publisher(SpeechState, "robot_speaking", qos.LATCHED)
    for pub in (final, reply, speaking):
        ros.wait_for_subscribers(pub)
    node.wait_ready(probe=ros)
    ros.wait_matched(events, "latency_monitor")
    ros.wait_matched(turns, "latency_monitor")
    now = ros.node.get_clock().now().nanoseconds * 1e-9
    final.publish(Transcript(text="hi", is_final=True, header=Header(stamp=to_time_msg(now - 0.2))))
    events.wait_for(lambda msgs: msgs and msgs[-1].data == "final")
    reply.publish(Utterance(conversation_id="qa1", seq=0, text="Hello.", is_first=True))
    events.wait_for(lambda msgs: msgs and msgs[-1].data == "first_reply")
    speaking.publish(SpeechState(speaking=True, utterance_id="qa1:0", header=Header(stamp=to_time_msg(now + 0.3))))
    turn = turns.wait_for_count(1)[0]
    assert turn.conversation_id == "qa1" and math.isnan(turn.llm_time_to_first_token)
    assert math.isnan(turn.pipeline_share) and turn.voice_to_first_audio == pytest.approx(0.5, abs=0.001)


def test_a_model_reply_waits_for_the_models_timing_whatever_order_the_topics_come_in():
    t = LatencyTracker()
    t.on_final_transcript(speech_end=10.0, received=10.2)
    t.on_first_reply(10.6, "c1", from_model=True)
    assert t.on_speaking(True, 10.7) is None  # the first audio came before the model's timing
    turn = t.on_llm_first_token(0.3, at=10.5, conversation_id="c1")
    assert turn is not None and turn.stages["llm_time_to_first_token"] == pytest.approx(0.3)
    assert turn.stages["voice_to_first_audio"] == pytest.approx(0.7)
    assert t.on_llm_first_token(0.2, conversation_id="c1") is None  # once


def test_a_held_turn_whose_timing_never_comes_is_completed_by_the_next_final():
    t = LatencyTracker()
    t.on_final_transcript(speech_end=1.0, received=1.1)
    t.on_first_reply(1.5, "c1", from_model=True)
    assert t.on_speaking(True, 1.6) is None
    held = t.on_final_transcript(speech_end=5.0, received=5.1)
    assert held is not None and held.conversation_id == "c1" and "llm_time_to_first_token" not in held.stages
    assert held.stages["voice_to_first_audio"] == pytest.approx(0.6)
