"""The tts node as a ROS-native node (issue 17), as a real process on a real DDS graph
(headless output):

- lifecycle: an engine voice or an output device it cannot use leaves it alive, unconfigured
  and not ready, with the reason on /diagnostics, and say goals end with that reason; set
  right live, it configures and speaks without a restart; deactivate stops the audio
  (speaking=false), ends a goal in progress, and nothing is spoken until it is active again;
- live parameters through the node's own parameter service: rate and voice apply from the
  next sentence (exactly the audio the engine makes with the new settings), wav_dir too; a
  read-only one is refused with the reason, an invalid value with the pydantic message, a
  voice the engine does not have with the engine's.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

from body_rig import ACTIVATE, CONFIGURE, DEACTIVATE, change_state, get_parameter, lifecycle_state, set_parameter
from fay_msgs.action import Say
from fay_msgs.msg import Utterance
from fay_ros.common import topics
from fay_ros.common.wav import read_wav
from fay_ros.ros_side.ros_tools import ThreadSafeActionClient
from fay_ros.voice.engine_types import VoiceSettings
from harness import DEFAULT_TIMEOUT
from test_say_action import Goal, Rig

TTS = "fay_ros.nodes.tts"
STATE = "fay/tts: state"
SENTENCE = "How are you today, my friend?"


def reply(conversation: str, text: str = SENTENCE) -> Utterance:
    return Utterance(
        user_id="user", conversation_id=conversation, seq=0, text=text, is_first=True, is_end=True, source="llm"
    )


def spoken(rig: Rig, conversation: str):
    """The track of `conversation`:0 once it has played to its end (speaking back to false)."""
    uid = f"{conversation}:0"
    track = rig.tracks.wait_for_match(lambda t: t.utterance_id == uid, what=f"the track of {uid}")
    rig.speaking.wait_for(
        lambda msgs: any(m.utterance_id == uid for m in msgs) and not msgs[-1].speaking, what=f"{uid} spoken"
    )
    return track


_LENGTH = """
import sys
from fay_ros.voice.engines import create_engine
from fay_ros.voice.engine_types import VoiceSettings
engine = create_engine("espeak-ng", VoiceSettings(english_voice=sys.argv[1], rate_wpm=int(sys.argv[2])))
print(len(engine.synthesize(sys.argv[3]).samples))
"""


def engine_length(settings: VoiceSettings, text: str = SENTENCE) -> int:
    """How many samples the espeak-ng engine makes of `text` with `settings`, in a fresh
    process (libespeak-ng's output drifts a little with what its process said before)."""
    done = subprocess.run(
        [sys.executable, "-c", _LENGTH, settings.english_voice, str(settings.rate_wpm), text],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def made_with(samples: np.ndarray, settings: VoiceSettings) -> bool:
    """The audio is what the engine makes of SENTENCE with `settings`: espeak-ng varies the
    length of one text by a few samples from call to call (about 0.02 %), while another voice
    or rate changes it by percents (en-us and en-GB-scotland at 90 wpm: 4 %)."""
    return abs(len(samples) - engine_length(settings)) <= 0.002 * len(samples)


def state_status(diagnostics, level: int) -> DiagnosticStatus:
    array = diagnostics.wait_for_match(
        lambda a: any(s.name == STATE and s.level == level for s in a.status),
        timeout=30,
        what=f"{STATE} at level {level}",
    )
    return next(s for s in array.status if s.name == STATE and s.level == level)


# ---------------------------------------------------------------------------- live parameters


def test_live_rate_voice_and_wav_dir_apply_from_the_next_sentence_and_bad_values_are_refused(
    ros, launch_node, tmp_path
):
    rig = Rig(ros, launch_node, wav_dir=str(tmp_path / "a"))
    rig.reply_pub.publish(reply("before"))
    before = spoken(rig, "before")
    assert made_with(read_wav(tmp_path / "a" / "before_0.wav").samples, VoiceSettings())

    assert set_parameter(ros, "tts", "rate_wpm", 90).successful
    result = set_parameter(ros, "tts", "english_voice", "en-GB-scotland")
    assert result.successful, result.reason
    result = set_parameter(ros, "tts", "wav_dir", str(tmp_path / "b"))
    assert result.successful, result.reason
    rig.reply_pub.publish(reply("after"))
    after = spoken(rig, "after")
    # Slower: the same text takes longer (espeak-ng: about 175/90 times as long), and it is
    # what the engine says with the new voice and rate, not with the old voice.
    assert after.duration > 1.6 * before.duration, (before.duration, after.duration)
    changed = VoiceSettings(english_voice="en-GB-scotland", rate_wpm=90)
    heard = read_wav(tmp_path / "b" / "after_0.wav").samples
    assert made_with(heard, changed) and not made_with(heard, VoiceSettings(rate_wpm=90))
    assert not (tmp_path / "a" / "after_0.wav").exists()

    # Refused, each with its reason; nothing of it is taken.
    engine = set_parameter(ros, "tts", "engine", "pyttsx3")
    assert not engine.successful and "read-only" in engine.reason
    slow = set_parameter(ros, "tts", "rate_wpm", 10)
    assert not slow.successful
    assert "parameter 'rate_wpm'" in slow.reason and "greater than or equal to 80" in slow.reason, slow.reason
    unknown = set_parameter(ros, "tts", "english_voice", "nosuchvoice")
    assert not unknown.successful and "espeak-ng has no voice 'nosuchvoice'" in unknown.reason, unknown.reason
    broken = set_parameter(ros, "tts", "chinese_voice", "cmn")
    assert not broken.successful and "broken on Debian 12" in broken.reason, broken.reason
    (tmp_path / "a_file").write_text("not a directory")
    unwritable = set_parameter(ros, "tts", "wav_dir", str(tmp_path / "a_file" / "wavs"))
    assert not unwritable.successful and "cannot be created" in unwritable.reason, unwritable.reason
    assert get_parameter(ros, "tts", "rate_wpm") == 90
    assert get_parameter(ros, "tts", "english_voice") == "en-GB-scotland"
    assert get_parameter(ros, "tts", "engine") == "espeak-ng"
    rig.reply_pub.publish(reply("still"))
    spoken(rig, "still")
    assert made_with(read_wav(tmp_path / "b" / "still_0.wav").samples, changed), "the settings in use stayed"
    assert rig.node.alive()


# ---------------------------------------------------------------------------- lifecycle


def test_deactivate_stops_the_audio_and_nothing_is_spoken_until_it_is_active_again(ros, launch_node):
    rig = Rig(ros, launch_node)
    readiness = ros.readiness("tts")
    goal = rig.say(
        "This is a rather long announcement that is going to be stopped before it reaches its end, "
        "because the voice is deactivated. Nobody hears this second sentence."
    )
    goal.wait_feedback(1)
    assert change_state(ros, "tts", DEACTIVATE) and lifecycle_state(ros, "tts") == "inactive"
    result = goal.wait_result()
    assert (result.spoken, result.reason, result.sentences_spoken) == (False, "interrupted", 0)
    rig.speaking.wait_for(lambda msgs: len(msgs) >= 3 and not msgs[-1].speaking, what="speaking=false")
    track = rig.tracks.wait_for_count(1)[0]
    stopped = rig.speaking.messages[-1].header.stamp
    assert (
        stopped.sec + stopped.nanosec * 1e-9
        < track.header.stamp.sec + track.header.stamp.nanosec * 1e-9 + track.duration
    ), "cut mid-sentence"
    readiness.wait_for(lambda msgs: msgs and msgs[-1].data is False, what="not ready while inactive")

    # While inactive: a reply is dropped; a goal ends at once with the reason.
    rig.reply_pub.publish(reply("unheard"))
    refused = rig.say("Hello?")
    assert refused.wait_result().reason == "rejected: the voice is not active (deactivated)"
    assert refused.status == GoalStatus.STATUS_ABORTED

    assert change_state(ros, "tts", ACTIVATE)
    readiness.wait_for(lambda msgs: msgs[-1].data is True, what="ready again")
    # (same publisher, same topic: "unheard" reached the node before "heard")
    rig.reply_pub.publish(reply("heard"))
    spoken(rig, "heard")
    # (a track can come twice: a start announced later than its lead is announced again)
    assert list(dict.fromkeys(t.utterance_id for t in rig.tracks.messages)) == [track.utterance_id, "heard:0"]
    assert rig.node.alive()


@pytest.mark.parametrize(
    "params, reason",
    [
        ({"english_voice": "nosuchvoice"}, "espeak-ng has no voice 'nosuchvoice'"),
        ({"output_device": "no-such-sound-card"}, "cannot open audio output device 'no-such-sound-card'"),
    ],
)
def test_an_unusable_voice_or_output_leaves_the_node_alive_not_ready_and_saying_why(ros, launch_node, params, reason):
    diagnostics = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 50)
    readiness = ros.readiness("tts")
    node = launch_node(TTS, {"output_device": "none", **params})
    status = state_status(diagnostics, DiagnosticStatus.ERROR)
    assert status.message.startswith(f"not ready: {reason}"), status.message
    device = params.get("output_device", "none")
    assert status.hardware_id == f"audio output {device!r}"
    readiness.wait_for(lambda msgs: msgs and msgs[-1].data is False, what="false on tts/ready")
    assert node.alive() and lifecycle_state(ros, "tts") == "unconfigured"
    assert not any(m.data for m in readiness.messages)
    # A goal ends with the reason.
    client = ThreadSafeActionClient(ros.node, Say, topics.ACTION_SAY)
    assert client.wait_for_server(timeout_sec=DEFAULT_TIMEOUT), "no say action server"
    goal = Goal(ros, client, text="Hello.")
    goal.accepted()
    assert goal.wait_result().reason == f"rejected: the voice is not active ({status.message[len('not ready: ') :]})"
    if "english_voice" not in params:
        return
    # The way back without a restart: a voice it has (live while unconfigured), then
    # configure and activate.
    assert set_parameter(ros, "tts", "english_voice", "en-us").successful
    assert change_state(ros, "tts", CONFIGURE) and change_state(ros, "tts", ACTIVATE)
    readiness.wait_for(lambda msgs: msgs[-1].data is True, what="ready once configured with a voice it has")
    ready = state_status(diagnostics, DiagnosticStatus.OK)
    assert ready.message == "ready" and ready.hardware_id.startswith("simulated real-time output")
    goal = Goal(ros, client, text="Hello again.")
    goal.accepted()
    assert goal.wait_result().reason == "spoken"
