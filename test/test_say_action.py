"""The tts node's `say` action and `broadcast` topic, as real processes on a real DDS graph
(headless output): a real rclpy ActionClient in the test process sends goals and gets
feedback per sentence and the result; cancel silences the audio within the interrupt budget;
goals queue or preempt; the goal's cue reaches action_cue through action_semantics; the
words are recorded by the memory node as the companion's."""

from __future__ import annotations

import threading
import time

import pytest
from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient
from std_msgs.msg import Empty

from fay_msgs.action import Say
from fay_msgs.msg import ActionCue, SpeechState, Transcript, Utterance, VisemeTrack
from fay_msgs.srv import Recall
from fay_ros.common import qos, topics
from fay_ros.common.rostime import from_time_msg
from harness import DEFAULT_TIMEOUT, NodeProcess, wait_until

TTS = "fay_ros.nodes.tts"
ACTION_SEMANTICS = "fay_ros.nodes.action_semantics"
# The interrupt budget: one 20 ms block plus the headless sink's latency (one block), with
# room for the cancel request's trip through DDS and the executor on a loaded machine.
BUDGET = 0.100


def on_probe_thread(ros, function):
    """Run `function` on the probe's executor thread and return its value. rclpy's ActionClient
    registers a request only after sending it, so a response handled on the executor thread
    in between is dropped ("Ignoring unexpected goal response"): requests go out from that
    thread, where nothing is handled meanwhile."""
    done, box = threading.Event(), []

    def run():
        box.append(function())
        done.set()

    ros.executor.create_task(run)
    assert done.wait(DEFAULT_TIMEOUT), "the probe's executor did not run the call"
    return box[0]


class Goal:
    """One say goal sent by a real rclpy ActionClient: its feedback and result as they come."""

    def __init__(self, ros, client: ActionClient, **fields) -> None:
        self.ros = ros
        self.feedback: list = []
        self.result_event = threading.Event()
        self.response = None
        self.result = None
        self.status = None
        self._accepted = threading.Event()

        def send():
            future = client.send_goal_async(Say.Goal(**fields), feedback_callback=self._on_feedback)
            future.add_done_callback(self._on_response)

        on_probe_thread(ros, send)

    def _on_feedback(self, msg) -> None:
        self.feedback.append(msg.feedback)

    def _on_response(self, future) -> None:
        self.response = future.result()
        self._accepted.set()
        if self.response.accepted:
            self.response.get_result_async().add_done_callback(self._on_result)

    def _on_result(self, future) -> None:
        wrapped = future.result()
        self.result, self.status = wrapped.result, wrapped.status
        self.result_event.set()

    def accepted(self, timeout: float = DEFAULT_TIMEOUT):
        assert self._accepted.wait(timeout), "no goal response"
        assert self.response.accepted
        return self.response

    def wait_result(self, timeout: float = 30.0):
        assert self.result_event.wait(timeout), f"no result after {timeout} s; feedback {self.feedback}"
        return self.result

    def wait_feedback(self, count: int = 1, timeout: float = DEFAULT_TIMEOUT):
        wait_until(lambda: len(self.feedback) >= count, timeout, message=f"{count} feedback message(s)")
        return self.feedback[count - 1]

    def cancel(self) -> None:
        on_probe_thread(self.ros, self.response.cancel_goal_async)


# -- the pure core (fay_ros.voice.say_verbatim) ------------------------------------------------------
def test_a_text_is_planned_into_sanitised_sentences_within_the_limit():
    from fay_ros.voice.say_verbatim import plan_say

    plan = plan_say("# Notice\nDinner is at **six**. ```print(1)``` 请准时。 See https://x.example/a?k=1 now.")
    assert plan.sentences == ["Notice", "Dinner is at six.", "请准时。", "See now."]
    assert set(plan.dropped) == {"markdown heading mark", "code block", "markdown emphasis", "url"}
    long = plan_say("word " * 100 + "end.", max_sentence_chars=60)
    assert all(len(piece) <= 60 for piece in long.sentences)
    assert " ".join(long.sentences).split() == ("word " * 100 + "end.").split(), "every word is said"
    assert plan_say("```only code```").sentences == []


def test_a_say_job_ends_once_every_sentence_has_ended():
    from fay_ros.voice.pipeline import SentenceEvent
    from fay_ros.voice.say_verbatim import SayJob

    def run(kinds, cancel=False):
        progress, done = [], []
        job = SayJob("say-x", ["One.", "Two."], on_progress=progress.append, on_done=done.append)
        job.start()
        if cancel:
            job.cancel()
        for seq, kind in kinds:
            job.on_event(seq, SentenceEvent(f"say-x:{seq}", kind, 0.0))
        return progress, done

    progress, done = run([(0, "started"), (0, "finished"), (1, "started"), (1, "finished")])
    assert [(p.index, p.count, p.sentence, p.progress) for p in progress] == [(0, 2, "One.", 0.5), (1, 2, "Two.", 1.0)]
    assert [(o.spoken, o.reason, o.sentences, o.sentences_spoken) for o in done] == [(True, "spoken", 2, 2)]
    assert run([(0, "started"), (0, "cut"), (1, "dropped")])[1][0].reason == "interrupted"
    assert run([(0, "started"), (0, "cut"), (1, "dropped")], cancel=True)[1][0].reason == "cancelled"
    assert run([(0, "skipped"), (1, "skipped")])[1][0].reason == "nothing speakable"
    assert run([(0, "finished"), (1, "failed")])[1][0].reason == "failed"
    assert run([(0, "finished"), (1, "finished"), (1, "cut")])[1] != [], "ends once"
    assert len(run([(0, "finished"), (1, "finished"), (1, "cut")])[1]) == 1
    assert run([(0, "finished")])[1] == [], "not over before every sentence ended"
    empty: list = []
    SayJob("say-y", [], on_done=empty.append).start()
    assert [(o.spoken, o.reason) for o in empty] == [(False, "nothing speakable")]


class Rig:
    def __init__(self, ros, launch_node, **params) -> None:
        self.ros = ros
        self.node = launch_node(TTS, {"output_device": "none", **params})
        self.node.wait_ready()
        self.speaking = ros.collect(SpeechState, topics.ROBOT_SPEAKING, qos.LATCHED)
        self.tracks = ros.collect(VisemeTrack, topics.VISEMES)
        self.replies = ros.collect(Utterance, topics.REPLY)
        self.reply_pub = ros.publisher(Utterance, topics.REPLY)
        self.broadcast = ros.publisher(Transcript, topics.BROADCAST)
        self.interrupt = ros.publisher(Empty, topics.INTERRUPT)
        self.client = ActionClient(ros.node, Say, topics.ACTION_SAY)
        assert self.client.wait_for_server(timeout_sec=DEFAULT_TIMEOUT), "no say action server"
        for pub in (self.reply_pub, self.broadcast, self.interrupt):
            ros.wait_for_subscribers(pub)
        self.speaking.wait_for_match(lambda m: not m.speaking, what="the latched initial speaking=false")
        for collector in (self.tracks, self.replies):
            ros.wait_matched(collector, "tts")

    def say(self, text: str, **fields) -> Goal:
        goal = Goal(self.ros, self.client, text=text, **fields)
        goal.accepted()
        return goal

    def states(self):
        return [(m.speaking, m.utterance_id) for m in self.speaking.messages]

    def said(self, conversation_id: str) -> list[Utterance]:
        return [m for m in self.replies.messages if m.conversation_id == conversation_id]


@pytest.fixture
def rig(ros, launch_node):
    return Rig(ros, launch_node)


def test_a_goal_gets_feedback_per_sentence_then_the_result_with_visemes_replies_and_cues(ros, launch_node):
    semantics = launch_node(ACTION_SEMANTICS, {"reload_period": 0.0})
    semantics.wait_ready()
    rig = Rig(ros, launch_node)
    cues = ros.collect(ActionCue, topics.ACTION_CUE)
    ros.wait_matched(cues, "action_semantics")

    # Whether the tts node's `reply` publisher has matched action_semantics' subscription
    # cannot be seen from here (a first message was lost seconds after both were ready), so
    # the test waits for the event itself: a broadcast's cue.
    def warm_up_cue() -> bool:
        rig.broadcast.publish(Transcript(text="Ready."))
        try:
            cues.wait_for(lambda msgs: msgs, timeout=1.0, what="a warm-up cue")
        except TimeoutError:
            return False
        return True

    wait_until(warm_up_cue, DEFAULT_TIMEOUT, interval=0.0, message="a cue for a reply of the tts node")
    override = ActionCue(
        code="custom.wave", behavior="wave", affect="excited", intensity=0.9, priority=90, sentiment=0.5
    )
    goal = rig.say(
        "Hello, I am Fay. **Nice** to meet you! 很高兴认识你。", language="en", user_id="alice", cue=[override]
    )
    result = goal.wait_result()
    assert (result.spoken, result.reason, result.sentences, result.sentences_spoken) == (True, "spoken", 3, 3)
    assert goal.status == GoalStatus.STATUS_SUCCEEDED
    cid = result.conversation_id
    assert cid.startswith("say-")
    sentences = ["Hello, I am Fay.", "Nice to meet you!", "很高兴认识你。"]
    assert [(f.sentence_index, f.sentence_count, f.sentence) for f in goal.feedback] == [
        (i, 3, s) for i, s in enumerate(sentences)
    ]
    assert [f.progress for f in goal.feedback] == pytest.approx([1 / 3, 2 / 3, 1.0])
    # The same sentences on `reply`, as the companion's words of alice's conversation.
    said = rig.replies.wait_for(
        lambda msgs: (
            len([m for m in msgs if m.conversation_id == cid]) >= 3 and [m for m in msgs if m.conversation_id == cid]
        )
    )
    assert [(m.seq, m.text, m.is_first, m.is_end, m.source, m.user_id, m.replace) for m in said] == [
        (0, sentences[0], True, False, "say", "alice", False),
        (1, sentences[1], False, False, "say", "alice", False),
        (2, sentences[2], False, True, "say", "alice", False),
    ]
    assert len(said[0].cue) == 1 and said[0].cue[0].code == "custom.wave" and not said[1].cue
    # Visemes and speaking state for each sentence, in order, gapless.
    tracks = rig.tracks.wait_for(
        lambda msgs: (
            [t for t in msgs if t.utterance_id.startswith(cid)]
            if len([t for t in msgs if t.utterance_id.startswith(cid)]) >= 3
            else None
        )
    )
    assert [t.utterance_id for t in tracks] == [f"{cid}:{i}" for i in range(3)]
    rig.speaking.wait_for(
        lambda msgs: msgs[-1].utterance_id == "" and msgs[-2].utterance_id == f"{cid}:2", what="speaking back to false"
    )
    # (after the warm-up broadcasts, which were queued before the goal)
    assert rig.states()[-5:] == [(False, "")] + [(True, f"{cid}:{i}") for i in range(3)] + [
        (False, "")
    ] or rig.states()[-4:] == [(True, f"{cid}:{i}") for i in range(3)] + [(False, "")]
    # The cue of sentence 0 is the goal's (utterance id, header and text filled in); the
    # others are derived from their text.
    got = cues.wait_for(
        lambda msgs: (
            {m.utterance_id: m for m in msgs if m.utterance_id.startswith(cid)}
            if len([m for m in msgs if m.utterance_id.startswith(cid)]) >= 3
            else None
        )
    )
    first = got[f"{cid}:0"]
    assert (first.code, first.behavior, first.affect, first.priority) == ("custom.wave", "wave", "excited", 90)
    assert first.intensity == pytest.approx(0.9) and first.text == sentences[0]
    assert from_time_msg(first.header.stamp) == from_time_msg(said[0].header.stamp)
    assert got[f"{cid}:1"].code != "custom.wave" and got[f"{cid}:1"].text == sentences[1]
    assert rig.node.alive() and semantics.alive()


def test_cancel_silences_the_audio_within_the_budget(rig):
    goal = rig.say(
        "This is a rather long sentence that is going to be cancelled before it reaches its end, "
        "because the robot program changed its mind. This second sentence is never heard."
    )
    goal.wait_feedback(1)
    cancelled_at = time.time()
    goal.cancel()
    result = goal.wait_result()
    stopped = rig.speaking.wait_for(
        lambda msgs: msgs[-1] if len(msgs) >= 3 and not msgs[-1].speaking else None,
        what="speaking=false after the cancel",
    )
    assert (result.spoken, result.reason, result.sentences, result.sentences_spoken) == (False, "cancelled", 2, 0)
    assert goal.status == GoalStatus.STATUS_CANCELED
    track = rig.tracks.wait_for_count(1)[0]
    assert from_time_msg(stopped.header.stamp) < from_time_msg(track.header.stamp) + track.duration, "cut mid-sentence"
    assert from_time_msg(stopped.header.stamp) - cancelled_at <= BUDGET
    # the second sentence never went to the speaker (a loaded machine may hold the voice and send
    # the first sentence's track again: a second track of sentence 0 is no second sentence)
    said = {t.utterance_id for t in rig.tracks.messages}
    assert said == {track.utterance_id} and track.utterance_id.endswith(":0"), said
    assert rig.states() == [(False, ""), (True, f"{result.conversation_id}:0"), (False, "")]


def test_goals_queue_in_order_and_an_interrupting_goal_preempts(rig):
    first = rig.say("The first goal speaks first.")
    second = rig.say("The second goal waits for it.")
    assert first.wait_result().reason == "spoken" and second.wait_result().reason == "spoken"
    a, b = first.result.conversation_id, second.result.conversation_id
    rig.speaking.wait_for(lambda msgs: not msgs[-1].speaking and len(msgs) >= 4, what="both spoken")
    assert [uid for on, uid in rig.states() if on] == [f"{a}:0", f"{b}:0"]
    assert first.result_event.is_set() and len(second.feedback) == 1

    long = rig.say(
        "A long announcement that is going to be interrupted by something more urgent, "
        "so nobody hears its end. Nor this part."
    )
    long.wait_feedback(1)
    urgent = rig.say("Urgent news!", interrupt=True)
    assert urgent.wait_result().reason == "spoken"
    result = long.wait_result()
    assert (result.spoken, result.reason, result.sentences_spoken) == (False, "interrupted", 0)
    assert long.status == GoalStatus.STATUS_ABORTED
    said = rig.said(urgent.result.conversation_id)
    assert said[0].replace and said[0].is_first
    on = [uid for on, uid in rig.states() if on]
    assert on[-2:] == [f"{long.result.conversation_id}:0", f"{urgent.result.conversation_id}:0"]


def test_an_interrupt_or_a_replacing_reply_ends_a_goal_as_interrupted(rig):
    goal = rig.say("This sentence is stopped by the interrupt topic before it gets very far at all.")
    goal.wait_feedback(1)
    rig.interrupt.publish(Empty())
    assert goal.wait_result().reason == "interrupted"

    goal = rig.say("This one is replaced by a reply from the dialogue, which says something else entirely.")
    goal.wait_feedback(1)
    rig.reply_pub.publish(
        Utterance(
            user_id="bob",
            conversation_id="bob-1",
            seq=0,
            text="Sorry, yes?",
            is_first=True,
            is_end=True,
            replace=True,
            source="llm",
        )
    )
    assert goal.wait_result().reason == "interrupted"
    rig.speaking.wait_for_match(lambda m: m.speaking and m.utterance_id == "bob-1:0", what="the reply spoken")


def test_nothing_speakable_unknown_languages_and_huge_texts_end_the_goal_with_the_reason(rig):
    nothing = rig.say('```python\nprint("hi")\n``` {"name": "remember", "arguments": {}}')
    assert (nothing.wait_result().spoken, nothing.result.reason) == (False, "nothing speakable")
    french = rig.say("Bonjour.", language="fr")
    assert french.wait_result().reason.startswith("rejected: language 'fr'")
    huge = rig.say("word " * 2000)
    assert huge.wait_result().reason.startswith("rejected: the text is 10000 characters")
    assert all(g.status == GoalStatus.STATUS_ABORTED for g in (nothing, french, huge))
    digits = rig.say("2024", language="zh")
    assert digits.wait_result().reason == "spoken"
    assert rig.node.alive()
    # Nothing of them reached the speaker but the digits. (Their track can come twice: a start
    # announced later than its lead on a stalled machine is announced again, playback.py.)
    assert {t.utterance_id for t in rig.tracks.messages} == {f"{digits.result.conversation_id}:0"}


def test_broadcast_queues_after_the_reply_being_spoken(rig):
    rig.reply_pub.publish(
        Utterance(
            user_id="bob",
            conversation_id="bob-2",
            seq=0,
            text="I am answering bob now.",
            is_first=True,
            is_end=True,
            source="llm",
        )
    )
    rig.speaking.wait_for_match(lambda m: m.speaking and m.utterance_id == "bob-2:0", what="the reply")
    rig.broadcast.publish(Transcript(text="Dinner is at six. 请准时。", language="en-US", user_id="bob"))
    said = rig.replies.wait_for(
        lambda msgs: (
            [m for m in msgs if m.source == "say"] if any(m.source == "say" and m.is_end for m in msgs) else None
        )
    )
    cid = said[0].conversation_id
    assert [m.text for m in said] == ["Dinner is at six.", "请准时。"] and not said[0].replace
    rig.speaking.wait_for(lambda msgs: not msgs[-1].speaking and len(msgs) >= 5, what="all spoken")
    assert rig.states() == [(False, ""), (True, "bob-2:0"), (True, f"{cid}:0"), (True, f"{cid}:1"), (False, "")]
    # Malformed and huge broadcasts do not stop the node.
    rig.broadcast.publish(Transcript(text="x" * 200_000))
    rig.broadcast.publish(Transcript(text="Still here.", language="tlh"))
    rig.speaking.wait_for_match(
        lambda m: (
            m.speaking
            and m.utterance_id.startswith("say-")
            and m.utterance_id != f"{cid}:0"
            and m.utterance_id != f"{cid}:1"
        ),
        what="the next broadcast spoken",
    )
    assert rig.node.alive()


def test_broadcast_preempts_in_preempt_mode(ros, launch_node):
    rig = Rig(ros, launch_node, broadcast_mode="preempt")
    rig.reply_pub.publish(
        Utterance(
            user_id="bob",
            conversation_id="bob-3",
            seq=0,
            # long (about 12 s of speech): a loaded test process may publish the announcement
            # seconds after the reply began, and it must still find the reply playing
            text=(
                "A long answer for bob that the announcement is going to cut off before its end, "
                "one that goes on about the weather, the garden, the neighbours and the cat, "
                "and then about the long walk by the river that they both took last Sunday."
            ),
            is_first=True,
            is_end=True,
            source="llm",
        )
    )
    rig.speaking.wait_for_match(lambda m: m.speaking and m.utterance_id == "bob-3:0", what="the reply")
    rig.broadcast.publish(Transcript(text="Attention please.", user_id="bob"))
    said = rig.replies.wait_for_match(lambda m: m.source == "say", what="the broadcast on reply")
    assert said.replace
    uid = f"{said.conversation_id}:0"
    rig.speaking.wait_for(
        lambda msgs: not msgs[-1].speaking and any(m.utterance_id == uid for m in msgs), what="the broadcast spoken"
    )
    # (the stop's speaking=false and the broadcast's true can fall on the same sample: the
    # latched topic keeps one of them for a slow reader, so the tracks show the cut)
    # The reply's track comes first, then the broadcast's. A loaded machine can add a track of
    # the reply's own (one CI run saw three tracks; a held voice closes the mouth with an empty
    # track and sends the moved one again): the reply is its first track with a duration.
    tracks = rig.tracks.wait_for(
        lambda msgs: list(msgs) if any(t.utterance_id == uid for t in msgs) else None, what="the broadcast's track"
    )
    ids = [t.utterance_id for t in tracks]
    first_broadcast = ids.index(uid)
    assert first_broadcast > 0 and set(ids[:first_broadcast]) == {"bob-3:0"} and set(ids[first_broadcast:]) == {uid}, (
        ids
    )
    reply = next(t for t in tracks[:first_broadcast] if t.duration > 0)
    broadcast = tracks[first_broadcast]
    assert from_time_msg(broadcast.header.stamp) < from_time_msg(reply.header.stamp) + reply.duration - 1.0, (
        "the reply was cut, not finished"
    )


def test_the_memory_node_records_said_words_as_the_companions(ros, launch_node, tmp_path):
    memory = NodeProcess("fay_ros.nodes.memory", {"db_path": str(tmp_path / "memory.db"), "embedder": "hashed"})
    try:
        memory.wait_ready(timeout=40, probe=ros)
        rig = Rig(ros, launch_node)

        def recorded(owner: str, tag: str):
            return ros.call(
                Recall,
                topics.SRV_RECALL,
                Recall.Request(owner=owner, query="", stateless=True, tags_all=[tag]),
                timeout=20,
            ).nodes

        # The tts node's `reply` publisher matching the memory node's subscription cannot be
        # seen from here: wait for the event itself, a broadcast recorded.
        def warm_up() -> bool:
            rig.broadcast.publish(Transcript(text="Ready.", user_id="warmup"))
            try:
                wait_until(lambda: recorded("warmup", "source:fay_conversation"), 1.0, interval=0.1)
            except TimeoutError:
                return False
            return True

        wait_until(warm_up, 30, interval=0.0, message="a broadcast recorded by the memory node")
        goal = rig.say("Time for your medicine. 记得喝水。", user_id="carol")
        cid = goal.wait_result().conversation_id
        nodes = wait_until(
            lambda: recorded("carol", f"session:{cid}"), 20, interval=0.1, message=f"conversation {cid} recorded"
        )
        assert [n.content for n in nodes] == ["Fay: Time for your medicine. 记得喝水。"]
        assert "User:" not in nodes[0].content and nodes[0].owner == "carol"
    finally:
        memory.stop()
