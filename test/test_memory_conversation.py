"""The two parts MemoryService is built from besides the store: the conversation recorder
(turns heard, the evidence window, exchanges as conversation memories) and forget matching
(what a forget request designates, one owner at a time). Through the service in
test_memory_service.py; here each on its own, with the manual clock."""

from __future__ import annotations

import pytest

from fay_ros.memory.conversation import ConversationRecorder
from fay_ros.memory.forget import ForgetMatcher
from fay_ros.memory.model import CONFIRMED, CONVERSATION_SOURCE_TAG
from fay_ros.memory.policy import RememberRequest
from fay_ros.memory.service import build_service


def test_a_turn_is_the_users_words_until_a_reply_ends_and_they_expire(clock):
    recorder = ConversationRecorder(clock, explicit_window=120.0)
    recorder.hear_user("alice", "记住")
    recorder.hear_user("alice", "我不吃香菜")
    assert recorder.heard_recently("alice") == ["记住", "我不吃香菜"]
    assert recorder.current_turn("alice")[1] == 1
    assert recorder.hear_reply("alice", "c1", "好的。", is_end=True) is not None
    recorder.hear_user("alice", "今天天气不错")  # the first words after a reply open a new turn
    assert recorder.heard_recently("alice") == ["今天天气不错"]
    assert recorder.said_recently("alice") == ["记住", "我不吃香菜", "今天天气不错"]
    assert recorder.current_turn("alice") == (recorder.session, 2)
    assert recorder.heard_recently("bob") == [] and recorder.current_turn("bob")[1] == 0
    clock.t += 120.5
    assert recorder.heard_recently("alice") == [] and recorder.said_recently("alice") == []


def test_an_exchange_becomes_one_conversation_memory(clock):
    recorder = ConversationRecorder(clock, conversation_ttl=86400.0, user_label="Tom", assistant_label="Fay")
    recorder.hear_user("tom", "What's the weather?")
    assert recorder.hear_reply("tom", "c7", "It is sunny.", is_end=False) is None
    assert recorder.hear_reply("tom", "other", "Unrelated.", is_end=False) is None
    node = recorder.hear_reply("tom", "c7", "Take a hat.", is_end=True)
    assert node.content == "Tom: What's the weather?\nFay: It is sunny. Take a hat."
    assert node.node_type == "conversation" and node.status == CONFIRMED and node.source_session == "c7"
    assert node.tags[:2] == [CONVERSATION_SOURCE_TAG, "session:c7"] and node.tags[2].startswith("date:")
    assert node.expires == clock.t + 86400.0
    recorder.hear_user("tom", "谢谢")
    recorder.hear_reply("tom", "c8", "不客气。", is_end=False)
    chinese = recorder.hear_reply("tom", "c8", "再见。", is_end=True)
    assert chinese.content == "Tom: 谢谢\nFay: 不客气。再见。"  # Chinese sentences join without spaces


@pytest.mark.parametrize("owner, source", [("", "llm"), ("tom", "filler")])
def test_guests_and_fillers_are_not_recorded(clock, owner, source):
    recorder = ConversationRecorder(clock)
    recorder.hear_user(owner, "hello")
    assert recorder.hear_reply(owner, "c1", "One moment.", is_end=True, source=source) is None


@pytest.mark.parametrize("source", ["say", "proactive"])
def test_words_said_unasked_are_the_companions_alone_and_leave_the_users_turn_open(clock, source):
    recorder = ConversationRecorder(clock, user_label="Tom", assistant_label="Fay")
    recorder.hear_user("tom", "What's the weather?")
    said = recorder.hear_reply("tom", "say-1", "The battery is low.", is_end=True, source=source)
    assert said.content == "Fay: The battery is low."
    assert recorder.current_turn("tom")[1] == 1 and recorder.heard_recently("tom") == ["What's the weather?"]
    answer = recorder.hear_reply("tom", "c9", "It is sunny.", is_end=True, source="llm")
    assert answer.content == "Tom: What's the weather?\nFay: It is sunny."


def test_a_reply_that_never_reached_the_user_is_void_and_its_words_join_the_reply_that_replaces_it(clock):
    """ "Please call me." was answered, but the person went on before the answer was heard; the
    dialogue answers "Please call me. tomorrow morning." in a reply that `replaces` the first."""
    recorder = ConversationRecorder(clock, user_label="Tom", assistant_label="Fay")
    recorder.hear_user("tom", "Please call me.")
    unheard = recorder.hear_reply("tom", "c1", "Okay, I will call you.", is_end=True)
    recorder.hear_user("tom", "tomorrow morning.")
    assert recorder.current_turn("tom")[1] == 2
    assert recorder.void("tom", "c1") == unheard.id  # recorded: the store deletes it
    assert recorder.void("tom", "c1") is None  # (once)
    # one turn of the owner's, as one piece of evidence
    assert recorder.current_turn("tom")[1] == 1
    assert recorder.heard_recently("tom") == ["Please call me.", "tomorrow morning."]
    answer = recorder.hear_reply("tom", "c2", "I will call you tomorrow morning.", is_end=True)
    assert answer.content == "Tom: Please call me. tomorrow morning.\nFay: I will call you tomorrow morning."
    # a reply cut before its end: its sentences go, and a late end marker records nothing
    recorder.hear_user("tom", "Tell me a story")
    recorder.hear_reply("tom", "c3", "Once upon a time", is_end=False)
    recorder.hear_user("tom", "about a cat.")
    assert recorder.void("tom", "c3") is None
    assert recorder.heard_recently("tom") == ["Tell me a story", "about a cat."]
    assert recorder.hear_reply("tom", "c3", "", is_end=True) is None
    story = recorder.hear_reply("tom", "c4", "A cat lived by the sea.", is_end=True)
    assert story.content == "Tom: Tell me a story about a cat.\nFay: A cat lived by the sea."
    # another owner's reply of that id is no business of this one
    assert recorder.void("alice", "c4") is None
    # only the owner's last exchange can be one not heard yet
    assert recorder.void("tom", "c2") is None
    assert recorder.void("tom", "c4") == story.id


def test_a_void_reply_heard_before_the_words_that_replace_it_keeps_their_turn_open(clock):
    # (reply and speech/final are two topics: the new reply can come before the new words)
    recorder = ConversationRecorder(clock, user_label="Tom", assistant_label="Fay")
    recorder.hear_user("tom", "Please call me.")
    unheard = recorder.hear_reply("tom", "c1", "Okay, I will call you.", is_end=True)
    assert recorder.void("tom", "c1") == unheard.id
    recorder.hear_user("tom", "tomorrow morning.")
    assert recorder.current_turn("tom")[1] == 1
    assert recorder.heard_recently("tom") == ["Please call me.", "tomorrow morning."]
    answer = recorder.hear_reply("tom", "c2", "I will call you tomorrow morning.", is_end=True)
    assert answer.content == "Tom: Please call me. tomorrow morning.\nFay: I will call you tomorrow morning."
    recorder.hear_user("tom", "Thanks.")
    assert recorder.current_turn("tom")[1] == 2 and recorder.heard_recently("tom") == ["Thanks."]


def test_the_service_deletes_the_conversation_a_later_reply_replaces(tmp_path, clock):
    service = build_service(tmp_path / "memory.db", embedder="hashed", clock=clock)
    service.hear_user("tom", "Please call me.")
    service.hear_reply("tom", "c1", "Okay, I will call you.", True)
    service.hear_user("alice", "Hello.")
    service.hear_reply("alice", "c1", "Hi Alice.", True)  # (the same id, another owner)
    service.hear_user("tom", "tomorrow morning.")
    service.hear_reply("tom", "c2", "I will call you tomorrow morning.", False, replaces="c1")
    service.hear_reply("tom", "c2", "", True, replaces="c1")
    [kept] = service.store.list("tom", node_types=["conversation"])
    assert kept.content == "User: Please call me. tomorrow morning.\nFay: I will call you tomorrow morning."
    assert [n.content for n in service.store.list("alice")] == ["User: Hello.\nFay: Hi Alice."]


def test_forget_matching_finds_by_key_content_and_meaning_within_one_owner(tmp_path, clock):
    service = build_service(tmp_path / "memory.db", embedder="hashed", clock=clock)
    for owner, content, key in [
        ("alice", "我不吃香菜", "coriander"),
        ("alice", "我住在上海", ""),
        ("bob", "我不吃香菜", "coriander"),
    ]:
        service.remember(
            RememberRequest(owner=owner, content=content, key=key, user_confirmed=True, tags=["kind:preference"])
        )
    service.hear_user("alice", "我住在上海")
    service.hear_reply("alice", "c1", "上海很好。", True)  # a recorded transcript is never a match
    matcher = ForgetMatcher(service.store)
    [by_key] = matcher.match("alice", "coriander")
    [by_content] = matcher.match("alice", "我住在上海")
    assert (by_key.owner, by_key.content) == ("alice", "我不吃香菜")
    assert by_content.content == "我住在上海" and by_content.node_type == "observation"
    assert matcher.match("carol", "coriander") == []
    traces = matcher.with_traces("alice", [by_content])
    assert {n.node_type for n in traces} == {"observation", "conversation"}  # the transcript repeating it
    assert {n.owner for n in traces} == {"alice"}
    service.store.close()
