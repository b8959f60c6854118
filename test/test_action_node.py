"""action_semantics as a real node process on a real DDS graph."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

from fay_msgs.msg import ActionCue, Transcript, Utterance
from fay_ros.action import LEXICON_FILE, default_table_path
from fay_ros.action.rules import RULE_COLUMNS
from fay_ros.common import topics
from harness import wait_until

NODE = "fay_ros.nodes.action_semantics"
HEADER = ",".join(RULE_COLUMNS)


def utterance(conversation: str, seq: int, text: str, *, sec: int = 100, is_end: bool = False) -> Utterance:
    msg = Utterance(
        conversation_id=conversation, seq=seq, text=text, is_first=seq == 0, is_end=is_end, user_id="user", source="llm"
    )
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, 250_000_000
    msg.header.frame_id = "dialogue"
    return msg


def replace_file(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def connect(ros, topic: str, msg_type):
    """Publisher on `topic` and collector on action_cue, both matched with the node under test.

    Waits for the node's own endpoints by name and for every endpoint the graph lists, so a
    stale endpoint of another test's process cannot stand in for it.
    """
    cues = ros.collect(ActionCue, topics.ACTION_CUE)
    pub = ros.publisher(msg_type, topic)
    ros.wait_subscribed(pub, "action_semantics")
    ros.wait_matched(cues, "action_semantics")
    return pub, cues


def test_reply_utterance_becomes_action_cue(ros, launch_node):
    node = launch_node(NODE)
    node.wait_ready()
    assert "tables loaded" in node.output()
    pub, cues = connect(ros, topics.REPLY, Utterance)
    subscribed = [name for name, _ in ros.node.get_subscriber_names_and_types_by_node("action_semantics", "/fay")]
    assert ros.resolve(topics.REPLY) in subscribed
    assert ros.resolve(topics.SPEECH_FINAL) not in subscribed  # transcripts are off by default

    pub.publish(utterance("turn-7", 0, "好的，这边请！", sec=1234))
    pub.publish(utterance("turn-7", 1, "", is_end=True))  # bare end marker: no cue
    pub.publish(utterance("turn-8", 0, "I know this is the history of Ohio."))
    pub.publish(utterance("turn-8", 1, "不是的，我不是很开心。", is_end=True))
    got = cues.wait_for_count(3)
    last = cues.wait_for_match(lambda m: m.utterance_id == "turn-8:1")
    assert [m.utterance_id for m in cues.messages] == ["turn-7:0", "turn-8:0", "turn-8:1"]

    invite = got[0]
    assert (invite.code, invite.behavior, invite.affect) == ("guidance.invite", "invite", "warm")
    assert invite.intensity == pytest.approx(0.74) and invite.priority == 82
    assert list(invite.matched_keywords) == ["这边请"]
    assert invite.sentiment == pytest.approx(1.3 / 4)
    assert invite.text == "好的，这边请！"
    assert (invite.header.stamp.sec, invite.header.stamp.nanosec, invite.header.frame_id) == (
        1234,
        250_000_000,
        "dialogue",
    )

    boundary = got[1]  # "hi" in this/history/Ohio, "no" in know: none fire
    assert (boundary.code, boundary.behavior, boundary.affect) == ("default.neutral", "idle", "neutral")
    assert list(boundary.matched_keywords) == []

    assert (last.code, last.behavior) == ("response.disagree", "shake")
    assert list(last.matched_keywords) == ["不是的"]
    assert last.sentiment == pytest.approx(-0.5)  # 开心 negated


def test_tables_reload_and_a_bad_table_keeps_the_last_good_one(ros, launch_node, tmp_path):
    rules = tmp_path / "rules.csv"
    lexicon = tmp_path / "lexicon.csv"
    shutil.copy(default_table_path(LEXICON_FILE), lexicon)
    rules.write_text(HEADER + "\nfruit.apple,praise,smile,0.6,50,0.5,apple|苹果\n", encoding="utf-8")
    statuses = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 10)
    node = launch_node(NODE, {"rules_file": str(rules), "lexicon_file": str(lexicon), "reload_period": 0.2})
    node.wait_ready()
    assert "tables loaded: 1 rules" in node.output()
    pub, cues = connect(ros, topics.REPLY, Utterance)
    ros.wait_matched(statuses, "action_semantics")

    def table_status(level: bytes, text: str) -> str:
        """The message of the node's status about its tables, at `level`, that says `text`."""
        return statuses.wait_for(
            lambda arrays: next(
                (
                    s.message
                    for a in arrays
                    for s in a.status
                    if s.name == "fay/action_semantics: tables" and s.level == level and text in s.message
                ),
                None,
            ),
            what=f"a tables status saying {text!r}",
        )

    def cue_for(conversation: str, text: str) -> ActionCue:
        pub.publish(utterance(conversation, 0, text))
        return cues.wait_for_match(lambda m: m.utterance_id == f"{conversation}:0", what=conversation)

    assert cue_for("c1", "一个苹果").code == "fruit.apple"

    replace_file(
        rules, HEADER + "\nfruit.apple,celebrate,excited,0.9,60,0.5,apple|苹果\nfruit.pear,nod,warm,0.4,40,0,pear\n"
    )
    table_status(DiagnosticStatus.OK, f"{rules}: reloaded: 2 rules")
    assert (cue_for("c2", "一个苹果").behavior, cue_for("c3", "a pear").code) == ("celebrate", "fruit.pear")

    replace_file(rules, HEADER + "\nfruit.apple,wave,smile,0.9,60,0.5,apple\nfruit.kiwi,nod,smile,0.4,40,0,kiwi,lime\n")
    rejected = table_status(DiagnosticStatus.ERROR, f"{rules}:3: 1 cell(s) beyond the header's columns")
    assert "keeping the last good table" in rejected
    assert f"{rules}:3: 1 cell(s) beyond the header's columns" in node.output()  # logged, too
    assert "keeping the last good table" in node.output()
    still = cue_for("c4", "一个苹果")
    assert (still.code, still.behavior) == ("fruit.apple", "celebrate")

    replace_file(lexicon, "kind,term,weight\nword,苹果,-2\n")
    table_status(DiagnosticStatus.OK, f"{lexicon}: reloaded: 2 rules")
    assert cue_for("c5", "一个苹果").sentiment == pytest.approx(-0.5)
    assert node.alive()


def test_final_transcripts_give_cues_when_enabled(ros, launch_node):
    node = launch_node(NODE, {"cue_transcripts": True, "reload_period": 0.0})
    node.wait_ready()
    assert "tables loaded" in node.output()
    pub, cues = connect(ros, topics.SPEECH_FINAL, Transcript)
    heard = Transcript(user_id="user", text="Thank you so much!", is_final=True, language="en")
    heard.header.stamp.sec, heard.header.stamp.nanosec = 123, 4500
    pub.publish(Transcript(user_id="user", text="  ", is_final=True))  # nothing said: no cue
    pub.publish(heard)
    cue = cues.wait_for_count(1)[0]
    assert cue.utterance_id == "transcript:123.000004500"
    assert (cue.code, cue.behavior, cue.affect) == ("social.thanks", "bow", "warm")
    assert len(cues.messages) == 1


@pytest.mark.parametrize(
    "params, reason",
    [
        ({"reload_period": -1.0}, "parameter 'reload_period'"),
        ({"rules_file": "BAD"}, ":2: intensity 7 is outside 0..1"),
        ({"lexicon_file": "/nonexistent/lexicon.csv"}, "/nonexistent/lexicon.csv: file not found"),
    ],
)
def test_bad_configuration_stops_the_node_with_the_reason(launch_node, tmp_path, params, reason):
    if params.get("rules_file") == "BAD":
        bad = tmp_path / "rules.csv"
        bad.write_text(HEADER + "\nx.y,nod,smile,7,50,0,hi\n", encoding="utf-8")
        params = {"rules_file": str(bad)}
    node = launch_node(NODE, params)
    assert node.wait_exit() == 2
    assert reason in node.output()


def test_an_utterance_with_a_cue_gets_that_cue_instead_of_the_derived_one(ros, launch_node):
    node = launch_node(NODE, {"reload_period": 0.0})
    node.wait_ready()
    pub, cues = connect(ros, topics.REPLY, Utterance)
    given = ActionCue(
        code="custom.bow",
        behavior="bow",
        affect="warm",
        intensity=0.4,
        priority=95,
        sentiment=0.25,
        matched_keywords=["given"],
        utterance_id="ignored",
        text="",
    )
    first = utterance("say-1", 0, "好的，这边请！", sec=77)
    first.cue = [given]
    pub.publish(first)
    pub.publish(utterance("say-1", 1, "好的，这边请！", is_end=True))  # no cue given: derived
    labelled = utterance("say-2", 0, "Hello.")
    labelled.cue = [ActionCue(code="custom.nod", behavior="nod", affect="smile", text="its own text")]
    pub.publish(labelled)
    got = {m.utterance_id: m for m in cues.wait_for_count(3)}
    cue = got["say-1:0"]
    assert (cue.code, cue.behavior, cue.affect, cue.priority, list(cue.matched_keywords)) == (
        "custom.bow",
        "bow",
        "warm",
        95,
        ["given"],
    )
    assert cue.intensity == pytest.approx(0.4) and cue.sentiment == pytest.approx(0.25)
    assert cue.text == "好的，这边请！", "text filled from the utterance when the cue has none"
    assert (cue.header.stamp.sec, cue.header.stamp.nanosec, cue.header.frame_id) == (77, 250_000_000, "dialogue")
    assert got["say-1:1"].code == "guidance.invite", "the other sentences get derived cues"
    assert got["say-2:0"].text == "its own text" and got["say-2:0"].code == "custom.nod"


# -- live parameters (`ros2 param set`), through the running node's set_parameters service --
def test_table_paths_are_live_and_a_table_that_does_not_load_is_refused(ros, launch_node, tmp_path):
    first, second, bad = tmp_path / "first.csv", tmp_path / "second.csv", tmp_path / "bad.csv"
    first.write_text(HEADER + "\nfruit.apple,praise,smile,0.6,50,0.5,apple\n", encoding="utf-8")
    second.write_text(HEADER + "\nfruit.apple,celebrate,excited,0.9,60,0.5,apple\n", encoding="utf-8")
    bad.write_text(HEADER + "\nfruit.apple,nod,smile,0.5,50,0,apple\nx.y,nod,smile,7,50,0,hi\n", encoding="utf-8")
    node = launch_node(NODE, {"rules_file": str(first), "reload_period": 0.0})
    node.wait_ready()
    pub, cues = connect(ros, topics.REPLY, Utterance)

    def cue_for(conversation: str) -> ActionCue:
        pub.publish(utterance(conversation, 0, "an apple"))
        return cues.wait_for_match(lambda m: m.utterance_id == f"{conversation}:0", what=conversation)

    assert cue_for("c1").behavior == "praise"
    [taken] = ros.set_parameters("action_semantics", rules_file=str(second))
    assert taken.successful, taken.reason
    assert cue_for("c2").behavior == "celebrate", "the next reply uses the new table"

    [refused] = ros.set_parameters("action_semantics", rules_file=str(bad))
    assert not refused.successful
    assert f"{bad}:3: intensity" in refused.reason, refused.reason  # file:line: problem
    [refused] = ros.set_parameters("action_semantics", lexicon_file=str(tmp_path / "missing.csv"))
    assert not refused.successful and f"{tmp_path / 'missing.csv'}: file not found" in refused.reason
    assert ros.get_parameter("action_semantics", "rules_file") == str(second), "the old value stays"
    assert ros.get_parameter("action_semantics", "lexicon_file") == ""
    assert cue_for("c3").behavior == "celebrate", "and so do its tables"

    [invalid] = ros.set_parameters("action_semantics", reload_period=-1.0)
    assert not invalid.successful and "parameter 'reload_period'" in invalid.reason, invalid.reason
    assert node.alive()


def test_reload_period_and_cue_transcripts_are_live(ros, launch_node, tmp_path):
    rules = tmp_path / "rules.csv"
    rules.write_text(HEADER + "\nfruit.apple,praise,smile,0.6,50,0.5,apple\n", encoding="utf-8")
    statuses = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 10)
    node = launch_node(NODE, {"rules_file": str(rules), "reload_period": 0.0})
    node.wait_ready()
    speech_final = ros.resolve(topics.SPEECH_FINAL)

    def subscribes_speech_final() -> bool:
        return any(i.node_name == "action_semantics" for i in ros.node.get_subscriptions_info_by_topic(speech_final))

    assert not subscribes_speech_final()
    [taken] = ros.set_parameters("action_semantics", cue_transcripts=True)
    assert taken.successful, taken.reason
    pub, cues = connect(ros, topics.SPEECH_FINAL, Transcript)
    heard = Transcript(user_id="user", text="I would like an apple.", is_final=True, language="en")
    heard.header.stamp.sec = 5
    pub.publish(heard)
    assert cues.wait_for_count(1)[0].code == "fruit.apple"

    # reload_period from 0 (never) to 0.1 s: an edit of the table is now taken
    ros.wait_matched(statuses, "action_semantics")
    [taken] = ros.set_parameters("action_semantics", reload_period=0.1)
    assert taken.successful, taken.reason
    replace_file(rules, HEADER + "\nfruit.apple,praise,smile,0.6,50,0.5,apple\nfruit.pear,nod,warm,0.4,40,0,pear\n")
    statuses.wait_for(
        lambda arrays: any(
            s.name == "fay/action_semantics: tables" and f"{rules}: reloaded: 2 rules" in s.message
            for a in arrays
            for s in a.status
        ),
        what="the edited table reloaded",
    )

    [taken] = ros.set_parameters("action_semantics", cue_transcripts=False)
    assert taken.successful, taken.reason
    wait_until(lambda: not subscribes_speech_final(), message="action_semantics no longer on speech/final")
    assert node.alive()
