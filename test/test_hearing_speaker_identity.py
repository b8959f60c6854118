"""The asr node's speaker identity from REP-155 (identity_source: rep155), as a real process:
the test is the speaker-identification node (it says which voice is speaking) and the mic (it
streams synthetic speech). The Transcript's user id is the person of the voice that spoke, from
the people file; with no known voice it is the guest "", whatever the words say. An edited
people file is used from the next utterance."""

from __future__ import annotations

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import QoSProfile
from std_msgs.msg import Bool

from fay_msgs.msg import AudioChunk, Transcript
from fay_ros.common import qos, topics
from fay_ros.common.diagnostics import status_name
from fay_ros.common.rostime import to_time_msg
from fay_ros.hearing.voices import is_speaking_topic
from harness import REPO, repeat_until
from synthetic_speech import silence, speak

pytestmark = pytest.mark.slow

RATE = 16000
CHUNK = 480  # 30 ms


def test_the_voice_that_spoke_names_the_speaker_never_the_words(ros, launch_node, tmp_path):
    household = (REPO / "test" / "data" / "household_people.yaml").read_text(encoding="utf-8")
    people = tmp_path / "people.yaml"
    people.write_text(household.replace("    voices: [voice_mia]\n", ""), encoding="utf-8")  # Mia's voice unknown
    finals = ros.collect(Transcript, topics.SPEECH_FINAL)
    files = ros.collect(DiagnosticArray, "/diagnostics", QoSProfile(depth=100))
    audio = ros.publisher(AudioChunk, topics.AUDIO_RAW, qos.AUDIO)
    mia_speaking = ros.publisher(Bool, is_speaking_topic("voice_mia"))
    asr = launch_node(
        "fay_ros.nodes.asr",
        {
            "language": "en",
            "identity_source": "rep155",
            "people_file": str(people),
        },
    )
    asr.wait_ready(timeout=60)
    ros.wait_for_subscribers(audio)
    ros.wait_for_publishers(topics.SPEECH_FINAL)
    clock = [ros.node.get_clock().now().nanoseconds * 1e-9]

    def say(text: str) -> None:
        """`text` in 30 ms chunks stamped from the test's clock on, all at once (as a mic would
        release held audio)."""
        samples = np.concatenate([silence(0.5), speak(text, "en-us"), silence(1.2)])
        clock[0] = max(clock[0], ros.node.get_clock().now().nanoseconds * 1e-9)
        for i in range(0, len(samples), CHUNK):
            msg = AudioChunk(sample_rate=RATE, channels=1)
            msg.header.stamp = to_time_msg(clock[0])
            msg.header.frame_id = "test"
            msg.data = samples[i : i + CHUNK].astype(np.int16).tolist()
            audio.publish(msg)
            clock[0] += len(msg.data) / RATE

    def final_with(word: str):
        return lambda: next((m for m in finals.messages if word in m.text.lower()), None)

    # No known voice is speaking: a guest, even when the words claim the owner.
    say("I am Anna, the owner of this house.")
    claimed = finals.wait_for_match(lambda m: "owner" in m.text.lower(), timeout=60, what="the first final")
    assert claimed.user_id == "", claimed

    # The speaker-identification node knows Mia's voice now: the file says so, and is re-read.
    people.write_text(household, encoding="utf-8")
    files.wait_for_match(
        lambda a: any(s.name == status_name("asr", "files") and "reloaded" in s.message for s in a.status),
        timeout=30,
        what="the people file reloaded",
    )
    ros.wait_for_subscribers(mia_speaking)

    # Mia's voice speaks (the speaker-id node says so; repeated: it is a state, saying it again
    # changes nothing) while her words are heard.
    mia_speaking.publish(Bool(data=True))
    say("What time is it now?")
    heard = repeat_until(
        lambda: mia_speaking.publish(Bool(data=True)), final_with("time"), timeout=60, message="Mia's final"
    )
    mia_speaking.publish(Bool(data=False))
    assert heard.user_id == "mia", heard
    assert asr.alive()
