"""The memory node between processes: seed 002's Phase-4 scenarios through the real
services, conversation recording, profile, rules, bad start-up, and a kill -9 crash test.

The test process plays the dialogue agent: it publishes what asr/dialogue publish
(speech/final, reply) and calls the memory services as the agent would, deciding
user_confirmed from the raw user text with fay_ros.memory.policy.is_explicit_request.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time

import pytest

from fay_msgs.msg import Transcript, Utterance
from fay_msgs.srv import Confirm, Forget, GetActiveRules, GetProfile, Recall, Remember, SearchEvidence
from fay_ros.common import topics
from fay_ros.memory.backend import is_postgres, open_store
from fay_ros.memory.embeddings import HashedNgramEmbedder
from fay_ros.memory.model import MemoryNode
from fay_ros.memory.policy import is_explicit_request
from harness import NodeProcess, RosProbe, wait_until

DEBUG = ["--ros-args", "--log-level", "fay.memory:=debug"]


class MemoryUnderTest:
    """One memory node process (restartable on the same database) plus the agent's side."""

    def __init__(self, probe: RosProbe, db, **params) -> None:
        self.probe, self.db, self.params = probe, str(db), params
        self.proc: NodeProcess | None = None
        self.speech = probe.publisher(Transcript, topics.SPEECH_FINAL)
        self.reply = probe.publisher(Utterance, topics.REPLY)
        self.heard = probe.collect(Transcript, topics.MEMORY_HEARD)  # the node's word that it took a turn in
        self.turns = 0
        self.start()

    def start(self) -> None:
        where = {"db_url": self.db} if is_postgres(self.db) else {"db_path": self.db}
        self.proc = NodeProcess("fay_ros.nodes.memory", {**where, **self.params}, args=DEBUG)
        self.proc.wait_ready(timeout=40, probe=self.probe)
        self.probe.wait_for_subscribers(self.speech)
        self.probe.wait_for_subscribers(self.reply)
        wait_until(lambda: self.heard.subscription.get_publisher_count() >= 1, message="memory/heard matched")

    def restart(self) -> None:
        assert self.proc.stop() == 0, self.proc.output()[-2000:]
        self.turns = 0
        self.heard.clear()
        self.start()

    def call(self, srv, name, **fields):
        return self.probe.call(srv, name, srv.Request(**fields), timeout=40)

    def user_says(self, owner: str, text: str, reply: str = "好的。") -> None:
        """A whole turn as asr and dialogue publish it; returns once the node heard it."""
        self.turns += 1
        self.speech.publish(Transcript(user_id=owner, text=text, is_final=True, language="zh"))
        # speech/final and reply are two topics, not ordered against each other: the reply
        # goes out once the node has said it took the turn in.
        self.heard.wait_for_count(self.turns)
        assert self.heard.messages[-1].user_id == owner and self.heard.messages[-1].text == ""
        cid = f"{owner}-turn-{self.turns}"
        self.reply.publish(
            Utterance(user_id=owner, conversation_id=cid, seq=0, text=reply, is_first=True, is_end=True, source="llm")
        )
        if not owner:
            return  # a guest's turn is never recorded
        self.wait_recorded(owner, cid)

    def wait_recorded(self, owner: str, conversation_id: str) -> None:
        """Until the conversation is stored: memory/recall finds it by its session tag."""
        wait_until(
            lambda: self.recall(owner, "", tags_all=[f"session:{conversation_id}"], stateless=True).nodes,
            20,
            interval=0.1,
            message=lambda: f"conversation {conversation_id} recorded:\n{self.proc.output()[-2000:]}",
        )

    def remember_from_turn(self, owner: str, user_text: str, content: str, **fields):
        """The agent stores a memory after a turn; user_confirmed from the user's own words."""
        return self.call(
            Remember,
            topics.SRV_REMEMBER,
            owner=owner,
            content=content,
            user_confirmed=is_explicit_request(user_text),
            **fields,
        )

    def recall(self, owner: str, query: str, **fields):
        return self.call(Recall, topics.SRV_RECALL, owner=owner, query=query, **fields)

    def forget(self, owner: str, **fields):
        return self.call(Forget, topics.SRV_FORGET, owner=owner, **fields)


@pytest.fixture(scope="module")
def probe():
    p = RosProbe("memory_test_probe")
    yield p
    p.close()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def memory(request, probe, tmp_path_factory):
    """The node on the default multilingual embedding model, shared by the scenarios (one owner
    each): on a SQLite file, then on a PostgreSQL database of the harness's server."""
    drop = None
    if request.param == "sqlite":
        db = tmp_path_factory.mktemp("memory") / "memory.db"
    else:
        db, drop = request.getfixturevalue("new_postgres_database")()
    m = MemoryUnderTest(probe, db, embedder="use", profile_min_evidence=2, profile_min_interval=0.0)
    yield m
    m.proc.stop()
    if drop is not None:
        drop()


DIET = dict(tags=["kind:preference", "domain:diet"], key="food.coriander")


# ---------------------------------------------------------------- seed 002, Phase 4
def test_1_explicit_remember_is_confirmed(memory):
    memory.user_says("p1", "记住我不吃香菜", "好的，我记住了。")
    res = memory.remember_from_turn("p1", "记住我不吃香菜", "我不吃香菜", **DIET)
    assert res.success and res.node.status == "confirmed" and res.node.owner == "p1"
    assert res.node.tags == ["kind:preference", "domain:diet"] and res.node.key == "food.coriander"


def test_2_recalled_after_disconnect_and_reconnect(memory):
    memory.user_says("p2", "记住我不吃香菜")
    assert memory.remember_from_turn("p2", "记住我不吃香菜", "我不吃香菜", **DIET).node.status == "confirmed"
    memory.restart()  # the node process goes away and comes back on the same database
    res = memory.recall("p2", "我不吃什么？", tags_all=["kind:preference"])
    assert res.success and [n.content for n in res.nodes] == ["我不吃香菜"]
    assert 0.0 <= res.nodes[0].score <= 1.0


def test_3_what_i_ate_today_does_not_become_a_stable_preference(memory):
    memory.user_says("p3", "记住我不吃香菜")
    memory.remember_from_turn("p3", "记住我不吃香菜", "我不吃香菜", **DIET)
    memory.user_says("p3", "我今天吃了香菜", "味道怎么样？")
    # A careless agent flags it as confirmed anyway: the policy hears no explicit request.
    res = memory.call(Remember, topics.SRV_REMEMBER, owner="p3", content="我吃香菜", user_confirmed=True, **DIET)
    assert res.success and res.node.status == "candidate" and "no explicit request" in res.message
    prefs = memory.recall("p3", "香菜", tags_all=["kind:preference"])
    assert [n.content for n in prefs.nodes] == ["我不吃香菜"]
    profile = memory.call(GetProfile, topics.SRV_PROFILE, owner="p3")
    assert profile.facts == ["preference:food.coriander=我不吃香菜"]
    # The event itself is kept as what it is: a conversation, not a preference.
    convo = memory.recall("p3", "我今天吃了香菜", tags_all=["source:fay_conversation"], n=1)
    assert convo.nodes[0].content == "User: 我今天吃了香菜\nFay: 味道怎么样？"


def test_4_a_correction_updates_the_old_preference(memory):
    memory.user_says("p4", "记住我不吃香菜")
    old = memory.remember_from_turn("p4", "记住我不吃香菜", "我不吃香菜", **DIET).node
    memory.user_says("p4", "其实我现在吃香菜了", "好的，记下了。")
    res = memory.call(Remember, topics.SRV_REMEMBER, owner="p4", content="我现在吃香菜了", user_confirmed=True, **DIET)
    assert res.node.status == "confirmed" and f"superseded {old.id}" in res.message
    prefs = memory.recall("p4", "我吃不吃香菜？", tags_all=["kind:preference"], include_candidates=True)
    assert [n.content for n in prefs.nodes] == ["我现在吃香菜了"]  # no conflicting active value
    profile = memory.call(GetProfile, topics.SRV_PROFILE, owner="p4")
    assert profile.facts == ["preference:food.coriander=我现在吃香菜了"]


def test_5_forget_deletes_an_exact_match_and_asks_when_ambiguous(memory):
    memory.user_says("p5", "记住我不吃香菜")
    memory.remember_from_turn("p5", "记住我不吃香菜", "我不吃香菜", **DIET)
    memory.user_says("p5", "记住我住在上海")
    memory.remember_from_turn("p5", "记住我住在上海", "我住在上海", tags=["kind:fact"], key="home")
    gone = memory.forget("p5", query="我的饮食偏好")
    assert gone.success and gone.message.startswith("deleted") and not gone.needs_confirmation
    assert "我不吃香菜" in [n.content for n in gone.nodes]
    assert not any("香菜" in n.content for n in memory.recall("p5", "我不吃什么？", n=20).nodes)  # transcripts too
    assert [n.content for n in memory.recall("p5", "我住哪里", tags_all=["kind:fact"]).nodes] == ["我住在上海"]

    memory.user_says("p5", "记住我不吃香菜")
    a = memory.remember_from_turn("p5", "记住我不吃香菜", "我不吃香菜", **DIET).node
    memory.user_says("p5", "记住我喜欢喝咖啡")
    b = memory.remember_from_turn(
        "p5", "记住我喜欢喝咖啡", "我喜欢喝咖啡", tags=["kind:preference", "domain:diet"], key="drink.coffee"
    ).node
    ask = memory.forget("p5", query="我的饮食偏好")
    assert not ask.success and ask.needs_confirmation and ask.message.startswith("ambiguous: confirm")
    assert {n.id for n in ask.nodes} >= {a.id, b.id}
    recalled = memory.recall("p5", "饮食", tags_all=["kind:preference"]).nodes
    assert {n.content for n in recalled} == {"我不吃香菜", "我喜欢喝咖啡"}
    done = memory.forget("p5", id=a.id)  # the user picked one
    assert done.success and [n.id for n in done.nodes if n.node_type == "observation"] == [a.id]
    assert [n.content for n in memory.recall("p5", "饮食", tags_all=["kind:preference"]).nodes] == ["我喜欢喝咖啡"]


def test_6_a_guest_can_neither_read_nor_write_private_memory(memory):
    memory.user_says("p6", "记住我不吃香菜")
    memory.remember_from_turn("p6", "记住我不吃香菜", "我不吃香菜", **DIET)
    memory.user_says("", "记住我喜欢猫", "好的。")  # heard, never recorded
    memory.user_says("p6", "你好", "你好！")  # replies arrive in order: the guest's reply was handled
    refused = [
        memory.call(Remember, topics.SRV_REMEMBER, owner="", content="我喜欢猫", user_confirmed=True),
        memory.recall("", "香菜"),
        memory.forget("", query="香菜", confirm_all=True),
        memory.call(GetActiveRules, topics.SRV_ACTIVE_RULES, owner=""),
        memory.call(GetProfile, topics.SRV_PROFILE, owner=""),
    ]
    for res in refused:
        assert not res.success and "guest has no private memory" in res.message
    assert memory.recall("p6", "香菜").nodes  # nothing of p6's was touched
    store = open_store(memory.db, HashedNgramEmbedder(), clock=time.time)
    try:
        assert store.count("") == 0
    finally:
        store.close()


def test_7_user_a_never_reaches_user_b(memory):
    secret = "我的银行卡密码提示是小狗的名字"
    memory.user_says("alice7", "记住" + secret, "好的。")
    a = memory.remember_from_turn("alice7", "记住" + secret, secret, tags=["kind:fact"], key="pin-hint").node
    memory.call(
        Remember,
        topics.SRV_REMEMBER,
        owner="alice7",
        content="每天提醒我吃药",
        tags=["kind:rule", "persistent:true"],
        user_confirmed=True,
    )
    memory.user_says("bob7", "我的密码提示是什么？", "我不知道。")
    for res in [
        memory.recall("bob7", "密码提示 小狗", n=50, include_candidates=True),
        memory.recall("bob7", "", n=50, tags_all=["kind:fact"]),
    ]:
        assert res.success and all(n.owner == "bob7" for n in res.nodes)
        assert not any("小狗" in n.content or "吃药" in n.content for n in res.nodes)
    assert memory.call(GetActiveRules, topics.SRV_ACTIVE_RULES, owner="bob7").rules == []
    assert memory.call(GetProfile, topics.SRV_PROFILE, owner="bob7").facts == []
    stolen = memory.forget("bob7", id=a.id)
    assert not stolen.success and stolen.nodes == []
    assert [n.id for n in memory.recall("alice7", "密码提示", tags_all=["kind:fact"]).nodes] == [a.id]
    assert secret not in memory.proc.output() and "小狗" not in memory.proc.output()  # never in logs


# ---------------------------------------------------------------- more through the services
def test_conversation_sentences_are_joined_per_reply(memory):
    memory.user_says("p8", "今天天气怎么样？", "今天晴天。")
    for seq, text in enumerate(["明天会下雨，", "记得带伞。", ""]):
        memory.reply.publish(
            Utterance(
                user_id="p8",
                conversation_id="p8-rain",
                seq=seq,
                text=text,
                is_first=seq == 0,
                is_end=seq == 2,
                source="llm",
            )
        )
    memory.wait_recorded("p8", "p8-rain")
    res = memory.recall("p8", "下雨带伞", tags_all=["source:fay_conversation", "session:p8-rain"])
    assert [n.content for n in res.nodes] == ["Fay: 明天会下雨，记得带伞。"]
    assert res.nodes[0].node_type == "conversation" and res.nodes[0].source_session == "p8-rain"
    assert res.nodes[0].expires.sec > 0  # transcripts expire; facts do not


def test_a_reply_that_replaces_an_unheard_one_takes_its_recorded_conversation_back(memory):
    """The person went on before the answer to their first words was heard: the dialogue's next
    reply answers both parts and names the unheard one (Utterance.replaces)."""
    memory.user_says("p10", "Please call me.", "Okay, I will call you.")
    first = f"p10-turn-{memory.turns}"  # (the conversation id user_says gave it)
    memory.speech.publish(Transcript(user_id="p10", text="tomorrow morning.", is_final=True, language="en"))
    memory.heard.wait_for_count(memory.turns + 1)
    memory.turns += 1
    memory.reply.publish(
        Utterance(
            user_id="p10",
            conversation_id="p10-joined",
            seq=0,
            text="I will call you tomorrow morning.",
            is_first=True,
            is_end=True,
            replace=True,
            source="llm",
            replaces=first,
        )
    )
    memory.wait_recorded("p10", "p10-joined")
    res = memory.recall("p10", "", tags_all=["source:fay_conversation"], stateless=True)
    assert [n.content for n in res.nodes] == [
        "User: Please call me. tomorrow morning.\nFay: I will call you tomorrow morning."
    ]


def test_active_rules_and_profile_through_the_services(memory):
    memory.user_says("p9", "以后晚上十点之后别叫我")
    rule = memory.remember_from_turn(
        "p9",
        "以后晚上十点之后别叫我",
        "晚上 22:00 之后不要主动发起对话",
        tags=["kind:rule", "persistent:true", "domain:life_assistant"],
        key="quiet-hours",
    )
    res = memory.call(GetActiveRules, topics.SRV_ACTIVE_RULES, owner="p9")
    assert res.success and [r.id for r in res.rules] == [rule.node.id]
    first = memory.call(GetProfile, topics.SRV_PROFILE, owner="p9")
    # no portrait yet, but the core memory (issue 35: the portrait field) already has the rule
    assert first.success and "no portrait yet" in first.message and "22:00" in first.portrait
    memory.user_says("p9", "记住我是一名老师")
    memory.remember_from_turn(
        "p9", "记住我是一名老师", "我是一名老师", tags=["kind:fact"], key="job", source_session="s9", source_turn=2
    )
    profile = memory.call(GetProfile, topics.SRV_PROFILE, owner="p9")
    assert "我是一名老师" in profile.portrait and "22:00" in profile.portrait
    assert sorted(profile.facts) == ["fact:job=我是一名老师", "rule:quiet-hours=晚上 22:00 之后不要主动发起对话"]
    assert profile.updated.sec > 0 and profile.pending_evidence == 0


def test_heard_turns_build_the_layered_profile(memory):
    """Issue 35: each heard user turn feeds the layered profile; memory/profile's portrait is the
    core memory, and an explicit change of taste shows at once."""
    memory.user_says("p11", "我喜欢可乐")
    memory.user_says("p11", "我不喝可乐了")

    def portrait() -> str:
        return memory.call(GetProfile, topics.SRV_PROFILE, owner="p11").portrait

    wait_until(lambda: "does not like 可乐" in portrait(), 20, interval=0.1, message=lambda: portrait())
    assert "- likes 可乐" not in portrait()
    assert memory.call(GetProfile, topics.SRV_PROFILE, owner="").portrait == ""


def test_confirm_takes_the_operators_decision_by_id_and_recall_filters_by_type_in_time_order(memory):
    """Issues 18/21: memory/confirm, and recall's node_type and time_ordered fields."""
    memory.user_says("p11", "我们聊聊天吧")  # the owner spoke, asking nothing to be remembered
    old = memory.call(
        Remember,
        topics.SRV_REMEMBER,
        owner="p11",
        content="我住在北京",
        tags=["kind:fact"],
        key="home",
        user_confirmed=False,
    )
    memory.user_says("p11", "记住我住在北京")
    confirmed_old = memory.call(Confirm, topics.SRV_CONFIRM, owner="p11", id=old.node.id)
    assert confirmed_old.success and confirmed_old.node.status == "confirmed"
    memory.user_says("p11", "天气不错")
    new = memory.call(
        Remember,
        topics.SRV_REMEMBER,
        owner="p11",
        content="我住在上海",
        tags=["kind:fact"],
        key="home",
        user_confirmed=True,
    )
    assert new.node.status == "candidate", "the policy checks user_confirmed against the owner's words"
    assert not memory.call(Confirm, topics.SRV_CONFIRM, owner="p12", id=new.node.id).success  # not p12's
    unknown = memory.call(Confirm, topics.SRV_CONFIRM, owner="p11", id="no-such-id")
    assert not unknown.success and unknown.message == "no candidate no-such-id of p11"
    out = memory.call(Confirm, topics.SRV_CONFIRM, owner="p11", id=new.node.id)
    assert out.success and out.node.status == "confirmed" and f"superseded {old.node.id}" in out.message
    assert memory.call(Confirm, topics.SRV_CONFIRM, owner="p11", id=new.node.id).message == "already confirmed"
    res = memory.recall("p11", "我住在哪里", tags_all=["kind:fact"])
    assert [n.content for n in res.nodes] == ["我住在上海"]

    ordered = memory.recall("p11", "", node_type="conversation", time_ordered=True, n=2, stateless=True)
    assert ordered.success and "in time order" in ordered.message
    # the turn that stated the old value was superseded with it, as a confirmed write does
    assert [n.content.splitlines()[0] for n in ordered.nodes] == ["User: 我们聊聊天吧", "User: 天气不错"]
    assert [n.node_type for n in memory.recall("p11", "北京", node_type="observation").nodes] == ["observation"]
    bad = memory.recall("p11", "", node_type="dream")
    assert not bad.success and "node_type 'dream'" in bad.message


def test_bad_requests_get_specific_errors(memory):
    res = memory.call(
        Remember, topics.SRV_REMEMBER, owner="p10", content="x", tags=["kind:gossip"], user_confirmed=True
    )
    assert not res.success and "unknown kind" in res.message
    res = memory.recall("p10", "x", tags_all=["not a tag"])
    assert not res.success and "namespace:value" in res.message


# ---------------------------------------------------------------- evidence and forgetting turns (issue 35)
DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def evidence(memory, owner: str, query: str, **fields):
    return memory.call(SearchEvidence, topics.SRV_SEARCH_EVIDENCE, owner=owner, query=query, n=20, **fields)


def heard_turn(memory, owner: str, text: str) -> str:
    """The id of the owner's heard user turn that said `text` (memory/search_evidence finds it)."""
    res = evidence(memory, owner, text)
    assert res.success, res.message
    ids = [e.id for e in res.items if e.kind == "turn" and e.speaker == "user" and e.text == text]
    assert len(ids) == 1, [(e.kind, e.id, e.text) for e in res.items]
    return ids[0]


def portrait(memory, owner: str) -> str:
    return memory.call(GetProfile, topics.SRV_PROFILE, owner=owner).portrait


def test_search_evidence_finds_a_heard_turn_with_its_id_and_absolute_date(memory):
    memory.user_says("ev1", "记住我养了一只叫团子的猫", "好的，我记住了。")
    cat = memory.remember_from_turn(
        "ev1", "记住我养了一只叫团子的猫", "我养了一只叫团子的猫", tags=["kind:fact"], key="pet"
    )
    assert cat.success and cat.node.status == "confirmed", cat.message
    res = evidence(memory, "ev1", "我的猫叫什么名字？")
    assert res.success and res.message == f"{len(res.items)} items"
    turns = [e for e in res.items if e.kind == "turn" and e.text == "记住我养了一只叫团子的猫"]
    assert len(turns) == 1, [(e.kind, e.text) for e in res.items]
    turn = turns[0]
    assert re.fullmatch(r".+:\d+", turn.id) and list(turn.sources) == [turn.id] and turn.speaker == "user"
    assert DAY.match(turn.date) and DAY.match(turn.said) and turn.rendered.startswith(f"[{turn.date}]")
    assert turn.rendered.endswith("User: 记住我养了一只叫团子的猫")
    # the remember made during that heard turn rests on it
    memories = [e for e in res.items if e.kind == "memory" and e.id == cat.node.id]
    assert len(memories) == 1 and list(memories[0].sources) == [turn.id] and memories[0].status == "confirmed"
    assert DAY.match(memories[0].date)
    assert "团子" not in memory.proc.output()  # the words never reach the log


def test_search_evidence_refuses_the_guest_and_an_empty_query(memory):
    memory.user_says("ev2", "我明天去杭州出差")
    guest = evidence(memory, "", "杭州")
    assert not guest.success and "guest has no private memory" in guest.message and list(guest.items) == []
    for query in ("", "   "):
        empty = evidence(memory, "ev2", query)
        assert not empty.success and "empty query" in empty.message and list(empty.items) == []
    assert evidence(memory, "ev2", "杭州").items  # the owner's own question is answered
    other = evidence(memory, "ev2-other", "杭州")  # another owner's turns are never evidence
    assert other.success and list(other.items) == []


def test_forget_turn_ids_deletes_the_turn_and_what_rests_only_on_it(memory):
    owner = "ev3"
    memory.user_says(owner, "记住我喜欢猫", "好的。")
    cat = memory.remember_from_turn(
        owner, "记住我喜欢猫", "我喜欢猫", tags=["kind:preference", "domain:pets"], key="pet.cat"
    ).node
    memory.user_says(owner, "记住我喜欢喝茶", "好的。")
    tea = memory.remember_from_turn(
        owner, "记住我喜欢喝茶", "我喜欢喝茶", tags=["kind:preference", "domain:diet"], key="drink.tea"
    ).node
    memory.user_says(owner, "我真的喜欢喝茶", "太好了。")
    a = heard_turn(memory, owner, "记住我喜欢猫")
    b = heard_turn(memory, owner, "记住我喜欢喝茶")
    c = heard_turn(memory, owner, "我真的喜欢喝茶")
    assert [cat.status, tea.status] == ["confirmed", "confirmed"]
    # a memory with more evidence than one turn (as the hearing of self-facts keeps one)
    store = open_store(memory.db, HashedNgramEmbedder(), clock=time.time)
    try:
        both = MemoryNode(
            owner=owner, content="我周末常去西湖", tags=["kind:event"], created=time.time(), sources=[a, c]
        )
        store.write(add=[(both, None)])
    finally:
        store.close()
    wait_until(
        lambda: "likes 猫" in portrait(memory, owner) and "likes 茶" in portrait(memory, owner),
        20,
        interval=0.1,
        message=lambda: f"the layered profile fed by the heard turns: {portrait(memory, owner)}",
    )

    out = memory.forget(owner, turn_ids=[a, b])
    # the answer came once the layered profile had forgotten them too
    assert "猫" not in portrait(memory, owner), portrait(memory, owner)
    assert out.success and out.message.startswith("forgot 2 turn(s)"), out.message
    gone = {n.id for n in out.nodes}
    assert {cat.id, tea.id} <= gone and both.id not in gone
    assert {n.node_type for n in out.nodes} == {"observation", "conversation"}  # the exchanges quoting them
    left = evidence(memory, owner, "我喜欢猫 喝茶 西湖")
    assert left.success
    ids = {e.id for e in left.items}
    assert not {a, b, cat.id, tea.id} & ids and c in ids, [(e.kind, e.id, e.text) for e in left.items]
    kept = [e for e in left.items if e.id == both.id]
    assert len(kept) == 1 and list(kept[0].sources) == [c]  # it lost only the forgotten turn
    assert not memory.recall(owner, "猫", tags_all=["kind:preference"]).nodes
    assert "likes 茶" in portrait(memory, owner)  # it rests on turn c too
    assert "猫" not in memory.proc.output() and "西湖" not in memory.proc.output()


def test_forget_turn_ids_refuses_unknown_turns_and_other_owners_turns(memory):
    memory.user_says("ev4", "记住我住在苏州", "好的。")
    memory.user_says("ev4-other", "你好", "你好！")
    memory.user_says("ev4-other", "今天天气真好", "是啊。")
    mine = heard_turn(memory, "ev4", "记住我住在苏州")
    # turn ids are unique per owner: the other owner's first turn has the same id as mine
    assert heard_turn(memory, "ev4-other", "你好") == mine
    theirs = heard_turn(memory, "ev4-other", "今天天气真好")  # an id ev4 has no turn of
    unknown = memory.forget("ev4", turn_ids=[mine, "no-such-session:7"])
    assert not unknown.success and "no-such-session:7" in unknown.message and "nothing forgotten" in unknown.message
    assert list(unknown.nodes) == [] and mine not in unknown.message
    stolen = memory.forget("ev4", turn_ids=[theirs])
    assert not stolen.success and theirs in stolen.message and list(stolen.nodes) == []
    for res in (memory.forget("", turn_ids=[mine]), memory.forget("", turn_ids=[theirs])):
        assert not res.success and "guest has no private memory" in res.message
    mixed = memory.forget("ev4", turn_ids=[mine], query="苏州")
    assert not mixed.success and "not both" in mixed.message
    assert heard_turn(memory, "ev4", "记住我住在苏州") == mine  # nothing was touched
    assert heard_turn(memory, "ev4-other", "今天天气真好") == theirs

    done = memory.forget("ev4", turn_ids=[mine])
    assert done.success and done.message.startswith("forgot 1 turn(s)"), done.message
    assert not [e for e in evidence(memory, "ev4", "记住我住在苏州").items if e.id == mine]
    # the other owner's turn of the same id is theirs, and stays
    assert heard_turn(memory, "ev4-other", "你好") == mine
    assert memory.recall("ev4-other", "你好", tags_all=["source:fay_conversation"]).nodes


# ---------------------------------------------------------------- start-up and crash
@pytest.mark.parametrize(
    "params, reason",
    [
        ({"weights": [1.0, 2.0]}, "needs exactly three weights"),
        ({"recall_n": 0}, "recall_n"),
        ({"profile_min_evidence": 1}, "profile_min_evidence"),
    ],
)
def test_bad_parameters_stop_the_node_with_the_reason(launch_node, tmp_path, params, reason):
    proc = launch_node("fay_ros.nodes.memory", {"db_path": str(tmp_path / "m.db"), "embedder": "hashed", **params})
    assert proc.wait_exit(30) == 2
    assert "cannot start" in proc.output() and reason in proc.output()


def test_a_bad_layers_file_stops_the_node_with_file_and_line(launch_node, tmp_path):
    """Issue 35: the layered profile's settings file is validated at start-up."""
    layers = tmp_path / "layers.yaml"
    layers.write_text("soul:\n  min_count: 0\n  min_interval: 60\n  max_buffer: 30\n", encoding="utf-8")
    proc = launch_node(
        "fay_ros.nodes.memory",
        {"db_path": str(tmp_path / "m.db"), "embedder": "hashed", "layers_file": str(layers)},
    )
    assert proc.wait_exit(30) == 2
    assert "layers_file" in proc.output() and "layers.yaml" in proc.output() and "min_count" in proc.output()


def test_a_database_from_a_newer_version_stops_the_node(launch_node, tmp_path):
    from fay_ros.memory import schema

    db = schema.connect(tmp_path / "m.db")
    db["_sqlite_migrations"].insert({"migration_set": schema.MIGRATION_SET, "name": "0042_future", "applied_at": "x"})
    db.close()
    proc = launch_node("fay_ros.nodes.memory", {"db_path": str(tmp_path / "m.db"), "embedder": "hashed"})
    assert proc.wait_exit(30) == 2 and "newer fay_ros" in proc.output()


def test_every_acknowledged_write_survives_kill_9(probe, tmp_path):
    db = tmp_path / "crash.db"
    # Its own namespace: the scenario node of this module serves /fay/memory/* meanwhile.
    proc = NodeProcess("fay_ros.nodes.memory", {"db_path": str(db), "embedder": "hashed"}, namespace="/crash")
    client = probe.node.create_client(Remember, "/crash/" + topics.SRV_REMEMBER)
    try:
        proc.wait_ready(timeout=40, probe=probe)
        assert client.wait_for_service(timeout_sec=20)
        probe.warm_up(client, Remember, "/crash/" + topics.SRV_REMEMBER, timeout=30)  # no first answer lost
        acked: list[str] = []
        lock = threading.Lock()
        enough = threading.Event()
        in_flight = threading.Semaphore(8)  # a service queue holds 10 requests; keep it fed, not flooded

        def done(future):
            result = future.result()
            if result is not None and result.success:
                with lock:
                    acked.append(result.node.id)
                    if len(acked) >= 60:
                        enough.set()
            in_flight.release()

        def send(turn: int) -> None:
            req = Remember.Request(
                owner="crash",
                content=f"第 {turn} 条记忆：一次写入压力测试",
                user_confirmed=True,
                tags=["kind:event"],
                source_session="burst",
                source_turn=turn,
            )
            client.call_async(req).add_done_callback(done)

        sent = 0
        while not enough.is_set():
            assert sent < 2000, "the node acknowledged too little"
            assert in_flight.acquire(timeout=30), f"no answer for 30 s:\n{proc.output()[-2000:]}"
            send(sent)
            sent += 1
        # A fast node may have answered everything by now, so the kill lands on a fresh burst:
        # eight writes cannot all be committed and answered between the last send and SIGKILL.
        for _ in range(8):
            send(sent)
            sent += 1
        proc.kill()  # SIGKILL with requests still in flight
        assert sent > len(acked), "nothing was in flight at the kill"
    finally:
        probe.node.destroy_client(client)
        proc.stop()
    with lock:
        acknowledged = list(acked)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        stored = {row[0] for row in conn.execute("SELECT id FROM nodes WHERE owner = 'crash'")}
    missing = [i for i in acknowledged if i not in stored]
    assert not missing, f"{len(missing)} of {len(acknowledged)} acknowledged writes lost"
