"""The hearing nodes as ROS-native nodes (issue 17), as real processes on a real DDS graph:

- live parameters through the node's own parameter service: a live change takes effect on
  the next utterance (asr) or chunk (mic), a read-only one is refused with the reason, an
  invalid value with the pydantic message;
- sim time: the asr's awake window opens and closes on the node clock, driven by /clock
  (audio stamped from the sim clock; the end of the robot's turn read from the node clock);
- REP-155: with hri_msgs importable (a stand-in built from test/data/hri_msgs), the asr also
  publishes /humans/voices/<id>/speech, is_speaking and /humans/voices/tracked; without it,
  no /humans topic exists.

Audio is published by the test, chunk by chunk, with stamps the test chooses.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import QoSProfile
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Bool, Empty, String

from fay_msgs.msg import AudioChunk, SpeechState, Transcript
from fay_ros.common import qos, topics
from fay_ros.common.rostime import to_time_msg
from harness import NodeProcess, publish_until, wait_until
from hri_stand_in import build_hri_msgs, environment
from synthetic_speech import silence, speak, speak_to_wav

RATE = 16000
CHUNK = 480


class AudioFeed:
    """Publishes speech on audio/raw as the mic would, stamped from `t` (seconds, any clock)."""

    def __init__(self, ros: Any, t: float) -> None:
        self.publisher = ros.publisher(AudioChunk, topics.AUDIO_RAW, qos.AUDIO)
        self.t = t
        ros.wait_for_subscribers(self.publisher)

    def say(self, text: str, at: float | None = None) -> None:
        """0.5 s of silence, the sentence, 1.2 s of silence (the endpoint), from `at` if given."""
        if at is not None:
            assert at >= self.t, "stamps must not go back"
            self.t = at
        audio = np.concatenate([silence(0.5), speak(text, "en-us"), silence(1.2)])
        for i in range(0, len(audio), CHUNK):
            msg = AudioChunk(sample_rate=RATE, channels=1)
            msg.header.stamp = to_time_msg(self.t)
            msg.header.frame_id = "test"
            msg.data = audio[i : i + CHUNK].tolist()
            self.publisher.publish(msg)
            self.t += len(audio[i : i + CHUNK]) / RATE


def set_parameters(ros: Any, node: str, **values: Any) -> list[Any]:
    """`ros2 param set` through the node's own service: one SetParametersResult per value."""
    return ros.set_parameters(node, **values)


def get_parameter(ros: Any, node: str, name: str) -> Any:
    return ros.get_parameter(node, name)


def texts(collector: Any) -> list[str]:
    return [m.text for m in collector.messages]


# ---------------------------------------------------------------------------- live parameters


def test_asr_live_parameters_apply_to_the_next_utterance_and_are_refused_with_the_reason(ros, launch_node):
    finals = ros.collect(Transcript, topics.SPEECH_FINAL)
    asr = launch_node("fay_ros.nodes.asr", {"language": "en"})
    asr.wait_ready(timeout=60, probe=ros)
    ros.wait_for_publishers(topics.SPEECH_FINAL)
    feed = AudioFeed(ros, ros.node.get_clock().now().nanoseconds * 1e-9)
    # wake_mode 'always': everything is forwarded, the name included.
    feed.say("Computer, what time is it now?")
    first = finals.wait_for_match(lambda m: "time is it" in m.text, timeout=60, what="the first final")
    assert first.text.lower().startswith("computer") and first.user_id == "user"

    [mode, words, user] = set_parameters(ros, "asr", wake_mode="prefix", wake_words=["computer"], user_id="alice")
    assert mode.successful and words.successful and user.successful, (mode.reason, words.reason, user.reason)
    feed.say("Please turn on the light in the kitchen.")  # no wake word: dropped from now on
    feed.say("Computer, where did I put my keys?")
    keys = finals.wait_for_match(lambda m: "keys" in m.text, timeout=60, what="the final after the change")
    assert keys.text == "where did I put my keys?" and keys.user_id == "alice"
    assert not any("light" in t for t in texts(finals)), texts(finals)
    assert get_parameter(ros, "asr", "wake_mode") == "prefix"

    # read-only: the model stays loaded as it is
    [backend] = set_parameters(ros, "asr", backend="vosk")
    assert not backend.successful and "read-only" in backend.reason
    # invalid: refused with the model's message, nothing changes
    [window] = set_parameters(ros, "asr", awake_window_s=-1.0)
    assert not window.successful
    assert "parameter 'awake_window_s'" in window.reason and "greater than 0" in window.reason
    [empty] = set_parameters(ros, "asr", wake_words=[" "])
    assert not empty.successful and "needs at least one wake word" in empty.reason
    assert get_parameter(ros, "asr", "wake_words") == ["computer"]
    assert asr.alive()
    # Without hri_msgs (this node's environment), no REP-155 topic exists.
    assert ros.node.count_publishers("/humans/voices/tracked") == 0


def test_mic_barge_in_turned_on_live_interrupts_the_robot(ros, launch_node, tmp_path):
    # The robot speaks while a person talks (a looping WAV): the mic starts muted (barge_in
    # false); turned on live, the next talk-over publishes interrupt.
    # (4 s of quiet in each pass: the gate learns the echo level from the quiet, as in
    # test_hearing_nodes' barge-in test)
    speak_to_wav(tmp_path / "talk.wav", [4.0, ("Stop, wait a moment please.", "en-us"), 1.0], rate=RATE)
    speaking = ros.publisher(SpeechState, topics.ROBOT_SPEAKING, qos.LATCHED)
    speaking.publish(SpeechState(speaking=True, utterance_id="c1:0"))
    interrupts = ros.collect(Empty, topics.INTERRUPT)
    listening = ros.collect(Bool, "/fay/mic/listening", qos.LATCHED)
    mic = launch_node(
        "fay_ros.nodes.mic", {"source": str(tmp_path / "talk.wav"), "loop": True, "wait_for_listener": False}
    )
    mic.wait_ready(probe=ros)
    listening.wait_for(lambda msgs: msgs and msgs[-1].data is False, what="the mic holding the person back")
    assert interrupts.messages == []

    results = set_parameters(ros, "mic", barge_in=True)
    assert all(r.successful for r in results), [r.reason for r in results]
    interrupts.wait_for_count(1, timeout=30)
    listening.wait_for(lambda msgs: msgs and msgs[-1].data is True, what="the mic listening after the barge-in")

    [source] = set_parameters(ros, "mic", source="")
    assert not source.successful and "read-only" in source.reason
    [stop] = set_parameters(ros, "mic", vad_stop_ms=0)
    assert not stop.successful and "parameter 'vad_stop_ms'" in stop.reason and "greater than 0" in stop.reason
    assert mic.alive()


# ---------------------------------------------------------------------------- sim time


def test_the_awake_window_follows_the_sim_clock(ros, launch_node):
    t0 = 1000.0
    clock = ros.publisher(Clock, "/clock", QoSProfile(depth=1))
    diagnostics = ros.collect(DiagnosticArray, "/diagnostics", QoSProfile(depth=50))
    finals = ros.collect(Transcript, topics.SPEECH_FINAL)
    asr = launch_node(
        "fay_ros.nodes.asr",
        {
            "language": "en",
            "use_sim_time": True,
            "wake_mode": "window",
            "wake_words": ["computer"],
            "awake_window_s": 10.0,
        },
    )
    asr.wait_ready(timeout=60, probe=ros)
    ros.wait_for_publishers(topics.SPEECH_FINAL)
    # matched before it is used: the end of the robot's turn must reach the asr before the
    # utterance it lets in is judged (a publisher made at that moment can still be in discovery)
    speaking = ros.publisher(SpeechState, topics.ROBOT_SPEAKING, qos.LATCHED)
    ros.wait_for_subscribers(speaking)

    def set_sim_time(t: float) -> None:
        """Publish /clock until the asr's own clock shows it (its health is stamped with it)."""

        def seen() -> bool:
            return any(
                abs(a.header.stamp.sec + a.header.stamp.nanosec * 1e-9 - t) < 1e-6
                and any(s.name == "fay/asr: state" for s in a.status)
                for a in diagnostics.messages
            )

        publish_until(clock, Clock(clock=to_time_msg(t)), seen, timeout=20, message=f"the asr at sim time {t}")

    set_sim_time(t0)
    feed = AudioFeed(ros, t0)
    feed.say("Computer, what time is it now?", at=t0)  # opens the window (ends ~t0+2.8)
    finals.wait_for_match(lambda m: m.text == "what time is it now?", timeout=60, what="the wake utterance")
    feed.say("Please turn on the light in the kitchen.", at=t0 + 6)  # in the window: forwarded, extends it
    finals.wait_for_match(lambda m: "light" in m.text, timeout=60, what="speech in the window")
    feed.say("Thank you very much for your help.", at=t0 + 40)  # 10 s of sim time later: closed
    feed.say("Computer, where did I put my keys?", at=t0 + 60)  # opens it again (until ~t0+72.8)
    finals.wait_for_match(lambda m: "keys" in m.text, timeout=60, what="the second wake utterance")
    heard = texts(finals)
    assert len(heard) == 3 and "turn on the light" in heard[1] and heard[2] == "where did I put my keys?", heard

    # The end of the robot's turn is read from the node clock: at sim time t0+70 it extends the
    # window to t0+80, so speech ending at ~t0+76 is still heard.
    set_sim_time(t0 + 70)
    speaking.publish(SpeechState(speaking=False))
    feed.say("How is the weather today?", at=t0 + 74)
    weather = finals.wait_for_match(lambda m: "weather" in m.text, timeout=60, what="speech in the extended window")
    assert weather.header.stamp.sec < t0 + 80
    assert asr.alive()


# ---------------------------------------------------------------------------- REP-155


def test_rep155_voice_topics_when_hri_msgs_is_importable(ros, launch_node):
    prefix = build_hri_msgs()  # a failed build fails the test
    hri_env = environment(prefix)
    speech = ros.collect(String, "hri_relay/speech")
    tracked = ros.collect(String, "hri_relay/tracked")
    is_speaking = ros.collect(Bool, "/humans/voices/alice/is_speaking", qos.LATCHED)
    finals = ros.collect(Transcript, topics.SPEECH_FINAL)
    relay = NodeProcess("procs.hri_relay", args=["alice"], name="hri_relay", env=hri_env)
    try:
        relay.wait_ready(timeout=30, probe=ros)
        asr = launch_node("fay_ros.nodes.asr", {"language": "en", "user_id": "alice"}, env=hri_env)
        asr.wait_ready(timeout=60, probe=ros)
        tracked.wait_for(
            lambda msgs: any(json.loads(m.data)["ids"] == ["alice"] for m in msgs),
            what="alice on /humans/voices/tracked",
        )
        ros.wait_for_publishers("/humans/voices/alice/speech")
        wait_until(lambda: relay_matched(ros), message="the relay's subscription matched by the asr")
        feed = AudioFeed(ros, ros.node.get_clock().now().nanoseconds * 1e-9)
        feed.say("Please turn on the light in the kitchen.")
        final = finals.wait_for_match(lambda m: "light" in m.text, timeout=60, what="the final transcript")
        live = speech.wait_for_match(
            lambda m: json.loads(m.data)["final"], timeout=20, what="a LiveSpeech final on /humans/voices/alice/speech"
        )
        body = json.loads(live.data)
        assert body["final"] == final.text and body["incremental"] == ""
        assert body["language"] == "en" and 0.0 < body["confidence"] <= 1.0
        stamp = final.header.stamp.sec + final.header.stamp.nanosec * 1e-9
        assert abs(body["stamp"] - stamp) < 1e-6
        is_speaking.wait_for(
            lambda msgs: "TF" in "".join("T" if m.data else "F" for m in msgs), what="is_speaking true, then false"
        )
        assert is_speaking.messages[-1].data is False
    finally:
        relay.stop()
        print(f"\n----- hri relay output -----\n{relay.output()[-2000:]}")


def relay_matched(ros: Any) -> bool:
    """The asr's LiveSpeech publisher has the relay's subscription (as seen from the graph)."""
    return ros.node.count_subscribers("/humans/voices/alice/speech") >= 1
