"""`[SILENCE]` on the real graph (issue 39): the dialogue, tts and action_semantics nodes as
processes, the scripted loopback LLM answering `[SILENCE]`: nothing on `reply`, no audio (no
viseme track, no speaking state) and no ActionCue for that turn, while the next turn is
answered and spoken as usual."""

from __future__ import annotations

import itertools

import pytest

import dialogue_fake_llm as fake
from fay_msgs.action import Chat
from fay_msgs.msg import ActionCue, SpeechState, Utterance, VisemeTrack
from fay_ros.common import qos, topics
from fay_ros.ros_side.ros_tools import ThreadSafeActionClient
from harness import DEFAULT_TIMEOUT, wait_until
from test_dialogue_node import ChatGoal

pytestmark = pytest.mark.slow

_warm_ups = itertools.count()


def test_a_silent_answer_gives_no_reply_no_audio_and_no_cue(ros, launch_node, llm):
    llm.reset()
    llm.responder = lambda _body: fake.judge_finish("Yes, I am here.")
    launch_node("fay_ros.nodes.action_semantics", {"reload_period": 0.0}).wait_ready(probe=ros)
    launch_node("fay_ros.nodes.tts", {"output_device": "none"}).wait_ready(probe=ros)
    launch_node(
        "fay_ros.nodes.dialogue",
        {"base_url": llm.base_url, "model": "scripted", "memory": False, "voice_examples_file": "none"},
    ).wait_ready(probe=ros)
    replies = ros.collect(Utterance, topics.REPLY)
    tracks = ros.collect(VisemeTrack, topics.VISEMES)
    speaking = ros.collect(SpeechState, topics.ROBOT_SPEAKING, qos.LATCHED)
    cues = ros.collect(ActionCue, topics.ACTION_CUE)
    chat = ThreadSafeActionClient(ros.node, Chat, topics.ACTION_CHAT)
    assert chat.wait_for_server(timeout_sec=DEFAULT_TIMEOUT), "the dialogue's chat action server"

    def spoken_and_cued(conversation_id: str, timeout: float) -> bool:
        """The reply of this conversation reached the voice (a viseme track) and action semantics (a cue)."""
        try:
            tracks.wait_for(
                lambda ms: any(m.utterance_id.startswith(conversation_id + ":") for m in ms), timeout, "a track"
            )
            cues.wait_for(lambda ms: any(m.utterance_id.startswith(conversation_id + ":") for m in ms), timeout)
        except TimeoutError:
            return False
        return True

    # Whether the dialogue's `reply` has matched the tts and action_semantics subscriptions cannot be
    # seen from here: answered turns are sent until one is spoken and cued.
    def warm_up() -> bool:
        _status, result = ChatGoal(chat, f"hello {next(_warm_ups)}").result()
        return spoken_and_cued(result.conversation_id, 3.0)

    wait_until(warm_up, DEFAULT_TIMEOUT * 2, interval=0.0, message="an answered turn spoken and cued")

    llm.script(fake.text(" [SILENCE] "))
    _status, silent = ChatGoal(chat, "you two carry on").result()
    assert (silent.reply, silent.completed) == ("", True), "the turn ended, saying nothing"
    _status, answered = ChatGoal(chat, "are you there?").result()
    assert answered.reply == "Yes, I am here."
    assert spoken_and_cued(answered.conversation_id, DEFAULT_TIMEOUT), "the next turn is spoken as usual"

    # the voice works through `reply` in order: the answered turn's audio came after anything of the silent one
    quiet = silent.conversation_id + ":"
    assert not [m for m in replies.messages if m.conversation_id == silent.conversation_id], "nothing on reply"
    assert not [m for m in tracks.messages if m.utterance_id.startswith(quiet)], "no audio"
    assert not [m for m in speaking.messages if m.utterance_id.startswith(quiet)], "no speaking state"
    assert not [m for m in cues.messages if m.utterance_id.startswith(quiet)], "no ActionCue"
    chat.destroy()
