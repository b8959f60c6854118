"""The turn log (issue 35): heard turns with evidence sources, forgetting a turn, hybrid recall
with absolute dates, `fay-ros memory replay` and `search --evidence --json`. Storage tests run
on SQLite and PostgreSQL (the memory_location fixture)."""

from __future__ import annotations

import datetime
import json
import subprocess
import sys

import pytest

from fay_ros.memory.evidence import WORDS_ONLY, tokens
from fay_ros.memory.migrate import migrate
from fay_ros.memory.model import CANDIDATE, CONFIRMED, SUPERSEDED
from fay_ros.memory.policy import RememberRequest
from fay_ros.memory.service import build_service
from fay_ros.memory.temporal import asks_when, question_window, resolve_dates


def at(*args) -> float:
    """A local time as seconds since the epoch."""
    return datetime.datetime(*args).timestamp()


@pytest.fixture
def svc(memory_location, clock):
    service = build_service(memory_location, embedder="hashed", clock=clock)
    yield service
    service.store.close()


# ---------------------------------------------------------------- the log
def test_turns_are_stored_per_owner_and_idempotent(svc):
    assert svc.hear_turn("alice", "s1-1", at(2026, 11, 3, 19), "user", "I went to the lake", "s1").success
    assert svc.hear_turn("alice", "s1-2", at(2026, 11, 3, 19, 1), "assistant", "How was the lake?", "s1").success
    again = svc.hear_turn("alice", "s1-1", at(2026, 11, 3, 19), "user", "I went to the lake", "s1")
    assert again.success and "already stored" in again.message
    assert svc.hear_turn("bob", "s1-1", at(2026, 11, 4, 8), "user", "bob's own words").success

    turns = svc.store.list_turns("alice")
    assert [(t.turn_id, t.speaker, t.session, t.text) for t in turns] == [
        ("s1-1", "user", "s1", "I went to the lake"),
        ("s1-2", "assistant", "s1", "How was the lake?"),
    ]
    assert turns[0].time == at(2026, 11, 3, 19)
    assert [t.text for t in svc.store.get_turns("bob", ["s1-1", "s1-2"])] == ["bob's own words"]
    assert svc.store.count_turns("alice") == 2 and svc.store.count_turns() == 3
    assert svc.store.list_turns("alice", since=at(2026, 11, 3, 19, 0, 30)) == turns[1:]
    assert not svc.hear_turn("", "g-1", at(2026, 11, 3), "user", "a guest").success
    assert not svc.hear_turn("alice", "x", at(2026, 11, 3), "robot", "who speaks?").success
    assert not svc.hear_turn("alice", "", at(2026, 11, 3), "user", "no id").success


def test_a_relative_named_in_an_earlier_session_is_known_by_name_alone(svc, clock):
    """ "Claire is getting married in June" a week after "my daughter Claire is a nurse": the
    daughter's plan, written from the heard turn and confirmed when the dialogue asks for it."""
    clock.t = at(2029, 5, 4, 10)
    svc.hear_turn("alan", "t1", at(2029, 5, 4, 10), "user", "my daughter claire is a nurse in leeds", "s1")
    out = svc.hear_turn("alan", "t2", at(2029, 5, 11, 17), "user", "claire is getting married in june", "s2")
    assert [(n.key, n.content, n.status) for n in out.nodes] == [
        ("plan:daughter_in_june", "User's daughter Claire is getting married in June 2029.", CONFIRMED)
    ]
    # the dialogue's own request for the same fact, in a later session still: confirmed too
    svc.hear_turn("alan", "t3", at(2029, 5, 12, 9), "user", "claire is getting engaged next friday", "s3")
    asked = svc.remember(
        RememberRequest(
            owner="alan",
            content="User's daughter Claire is getting engaged on Friday, 18 May 2029.",
            key="plan:daughter_next_friday",
            tags=["kind:event", "source:user"],
            user_confirmed=True,
        )
    )
    assert asked.success and asked.nodes[0].status == CONFIRMED, asked.message


def test_a_user_turn_writes_its_self_facts_at_its_own_time_resting_on_it(svc, clock):
    clock.t = at(2030, 1, 1)  # the wall clock is years later: nothing derived may use it
    heard = []
    svc.turn_listeners.append(lambda turn, nodes: heard.append((turn.turn_id, [n.content for n in nodes])))
    out = svc.hear_turn("alice", "t1", at(2026, 11, 3, 19), "user", "I like cola", "s1")
    assert [(n.content, n.key, n.status, n.sources) for n in out.nodes] == [
        ("User likes cola.", "taste:cola", CONFIRMED, ["t1"])
    ]
    assert out.nodes[0].created == at(2026, 11, 3, 19)
    svc.hear_turn("alice", "t2", at(2026, 11, 5, 19), "user", "I like cola", "s2")  # said again: more evidence
    svc.hear_turn("alice", "t3", at(2026, 11, 9, 19), "user", "I don't like cola anymore", "s3")
    svc.hear_turn("alice", "t4", at(2026, 11, 9, 19, 1), "assistant", "I like cola", "s3")  # not the owner's words
    nodes = {n.content: n for n in svc.store.list("alice", statuses=[CONFIRMED, SUPERSEDED])}
    assert set(nodes) == {"User likes cola.", "User no longer likes cola."}
    assert nodes["User likes cola."].status == SUPERSEDED and nodes["User likes cola."].sources == ["t1", "t2"]
    assert nodes["User no longer likes cola."].status == CONFIRMED
    assert nodes["User no longer likes cola."].sources == ["t3"]
    assert heard == [
        ("t1", ["User likes cola."]),
        ("t2", ["User likes cola."]),
        ("t3", ["User no longer likes cola."]),
        ("t4", []),
    ]
    recalled = svc.recall("alice", "cola").nodes
    assert [n.sources for n in recalled] == [["t3"]], "recall returns the evidence"


@pytest.mark.parametrize("learn", [False, True])
def test_hearing_feeds_the_turn_log_and_the_exchange_rests_on_its_turns(memory_location, clock, learn):
    svc = build_service(memory_location, embedder="hashed", clock=clock, learn_heard_facts=learn)
    svc.hear_user("alice", "我喜欢喝可乐")
    clock.t += 2
    node = svc.hear_reply("alice", "c1", "好的，记住了。", is_end=True)
    turns = svc.store.list_turns("alice")
    assert [(t.speaker, t.text) for t in turns] == [("user", "我喜欢喝可乐"), ("assistant", "好的，记住了。")]
    assert len({t.turn_id for t in turns}) == 2 and all(t.session == svc.recorder.session for t in turns)
    assert node is not None and node.sources == [t.turn_id for t in turns]
    stored = svc.store.get("alice", node.id)
    assert stored is not None and stored.sources == node.sources
    fact = svc.store.find_keyed("alice", "preference", "taste:可乐", [CONFIRMED])
    assert [n.sources for n in fact] == ([[turns[0].turn_id]] if learn else [])
    svc.hear_user("alice", "记住我住在上海")  # the dialogue's write during a heard turn rests on it
    out = svc.remember(RememberRequest("alice", "我住在上海", tags=["kind:fact"], key="home", user_confirmed=True))
    assert out.node is not None and out.node.sources == [svc.store.list_turns("alice")[-1].turn_id]
    svc.store.close()


def test_a_reply_that_never_reached_the_owner_leaves_the_log_and_its_words_join_the_next(svc, clock):
    svc.hear_user("tom", "Please call me.")
    svc.hear_reply("tom", "c1", "Okay, I will call you.", True)
    svc.hear_user("tom", "tomorrow morning.")
    svc.hear_reply("tom", "c2", "I will call you tomorrow morning.", False, replaces="c1")
    kept = svc.hear_reply("tom", "c2", "", True, replaces="c1")
    turns = svc.store.list_turns("tom")
    assert [(t.speaker, t.text) for t in turns] == [
        ("user", "Please call me."),
        ("user", "tomorrow morning."),
        ("assistant", "I will call you tomorrow morning."),
    ]
    assert kept is not None and kept.sources == [t.turn_id for t in turns]


def test_sources_survive_a_migration_with_the_turns(tmp_path, postgres_url, clock):
    source = build_service(str(tmp_path / "m.db"), embedder="hashed", clock=clock)
    source.hear_turn("alice", "t1", at(2026, 11, 3, 19), "user", "My sister is called Anna", "s1")
    source.hear_turn("alice", "t2", at(2026, 11, 3, 19, 1), "user", "Yesterday I went hiking", "s1")
    target = build_service(postgres_url, embedder="hashed", clock=clock)
    try:
        first = migrate(source.store, target.store)
        again = migrate(source.store, target.store)
        assert (first.turns_copied, again.turns_copied) == (2, 0)
        assert target.store.list_turns("alice") == source.store.list_turns("alice")
        assert target.store.list_turns("alice")[1].dates == [datetime.date(2026, 11, 2).isoformat()]
        (fact,) = target.store.list("alice")
        assert fact.content == "User's sister is called Anna." and fact.sources == ["t1"]
        assert [n.sources for n, _v in target.store.export_rows()] == [["t1"]]
        back = build_service(str(tmp_path / "back.db"), embedder="hashed", clock=clock)
        try:  # and back again: PostgreSQL's pages of turns
            assert migrate(target.store, back.store, page=1).turns_copied == 2
            assert back.store.list_turns("alice") == source.store.list_turns("alice")
            assert [n.sources for n in back.store.list("alice")] == [["t1"]]
        finally:
            back.store.close()
    finally:
        source.store.close()
        target.store.close()


# ---------------------------------------------------------------- forgetting a turn
def test_a_candidate_written_during_a_heard_turn_rests_on_it_and_goes_with_it(svc, clock):
    """Not asked to be kept, the memory is a candidate; it is still the turn's evidence, so
    forgetting the turn takes it back."""
    svc.hear_user("bea", "I might take up the cello")
    out = svc.remember(RememberRequest("bea", "Bea might take up the cello.", tags=["kind:preference"]))
    assert out.node is not None and out.node.status == CANDIDATE
    (turn,) = svc.store.list_turns("bea")
    assert out.node.sources == [turn.turn_id]
    assert svc.store.get("bea", out.node.id).sources == [turn.turn_id]
    gone = svc.forget_turn("bea", turn.turn_id)
    assert gone.success and out.node.id in [n.id for n in gone.nodes]
    assert svc.store.get("bea", out.node.id) is None


def test_forget_turn_takes_back_what_rests_only_on_it(svc, clock):
    forgotten = []
    svc.forget_listeners.append(lambda owner, ids: forgotten.append((owner, ids)))
    svc.hear_turn("alice", "t1", at(2026, 11, 3, 19), "user", "I like coffee", "s1")
    svc.hear_turn("alice", "t2", at(2026, 11, 4, 19), "user", "I like coffee", "s2")
    svc.hear_turn("alice", "t3", at(2026, 11, 5, 19), "user", "My dog is called Rex", "s3")
    svc.hear_user("alice", "I like tea")
    tea = RememberRequest("alice", "User likes tea.", tags=["kind:preference"], key="taste:tea", user_confirmed=True)
    assert svc.remember(tea).node.status == CONFIRMED  # as the dialogue writes it, during the turn
    exchange = svc.hear_reply("alice", "c1", "Tea it is.", is_end=True)
    assert exchange is not None
    tea_turn = exchange.sources[0]

    out = svc.forget_turn("alice", "t1")
    assert out.success and out.nodes == []
    (coffee,) = svc.store.find_keyed("alice", "preference", "taste:coffee", [CONFIRMED])
    assert coffee.sources == ["t2"], "kept: it rests on another turn too"
    out = svc.forget_turn("alice", "t3")
    assert [n.content for n in out.nodes] == ["User's dog is called Rex."]
    out = svc.forget_turn("alice", tea_turn)
    assert {n.content for n in out.nodes} == {"User likes tea.", exchange.content}, "and the exchange quoting it"
    assert [t.turn_id for t in svc.store.list_turns("alice")] == ["t2", exchange.sources[1]]
    assert not svc.forget_turn("bob", "t2").success and svc.store.get_turns("alice", ["t2"])
    assert forgotten == [("alice", ["t1"]), ("alice", ["t3"]), ("alice", [tea_turn])]
    assert [e.id for e in svc.search_evidence("alice", "dog Rex", now=at(2026, 11, 6)) if "Rex" in e.text] == []


# ---------------------------------------------------------------- time words
def test_time_words_resolve_against_the_reference_time():
    said = at(2026, 11, 3, 19)  # a Tuesday
    assert resolve_dates("Yesterday I went hiking", said) == ["2026-11-02"]
    assert resolve_dates("I met Anna last Saturday", said) == ["2026-10-31"]
    assert resolve_dates("three days ago, and the day before yesterday", said) == ["2026-10-31", "2026-11-01"]
    assert resolve_dates("on Nov 2nd we ate out", said) == ["2026-11-02"]
    assert resolve_dates("I may go, the sun is out", said) == []
    assert resolve_dates("昨天我去爬山了", said) == ["2026-11-02"]
    assert resolve_dates("上周六我去了长城", said) == ["2026-10-31"]
    assert resolve_dates("前天和三天前", said) == ["2026-11-01", "2026-10-31"]
    assert resolve_dates("十月二十号我搬家了", said) == ["2026-10-20"]
    assert resolve_dates("去年12月28日", at(2027, 1, 5)) == ["2026-12-28"]
    # "next Wednesday" said on a Tuesday is next week's, as the plan's own fact dates it
    assert resolve_dates("next wednesday I have a hospital appointment", said) == ["2026-11-11"]
    assert resolve_dates("next Tue", said) == ["2026-11-10"]

    now = at(2026, 11, 20, 9)  # a Friday
    window = question_window("What did I do last week?", now)
    assert window is not None and (window.first, window.last) == (
        datetime.date(2026, 11, 9),
        datetime.date(2026, 11, 15),
    )
    window = question_window("上个月我去了哪里？", now)
    assert window is not None and (window.first, window.last) == (
        datetime.date(2026, 10, 1),
        datetime.date(2026, 10, 31),
    )
    window = question_window("what happened in November", now)
    assert window is not None and window.first == datetime.date(2026, 11, 1)
    window = question_window("上周六我做了什么", now)
    assert window is not None and window.first == window.last == datetime.date(2026, 11, 14)
    assert question_window("what is my sister's name", now) is None
    assert asks_when("When did I go hiking?") and asks_when("我什么时候去的长城") and not asks_when("do I like tea")
    assert tokens("I went hiking") == ["went", "hik"] and "长城" in tokens("我去了长城")


# ---------------------------------------------------------------- hybrid recall
def _history(svc) -> None:
    """Four weeks of weekday talk sharing the question's words, and one weekend trip."""
    day = datetime.datetime(2026, 10, 5, 19)  # a Monday
    for week in range(4):
        for k in range(5):
            when = (day + datetime.timedelta(days=7 * week + k)).timestamp()
            svc.hear_turn("alice", f"w{week}-{k}", when, "user", f"I watched a weekend show about boats, part {k}")
    svc.hear_turn("alice", "trip", at(2026, 10, 26, 9), "user", "On Saturday I went kayaking with Tom", "s9")
    svc.hear_turn("alice", "quinoa", at(2026, 10, 6, 9), "user", "I cooked quinoa with mushrooms", "s2")


def test_hybrid_recall_finds_the_evidence_where_words_alone_fail(svc):
    _history(svc)
    now = at(2026, 10, 30, 12)
    question = "What did I do last weekend?"
    words_only = [e.id for e in svc.search_evidence("alice", question, n=5, now=now, weights=WORDS_ONLY)]
    assert "trip" not in words_only, "the words 'weekend' match the distractors"
    found = svc.search_evidence("alice", question, n=5, now=now)
    assert found[0].id == "trip" and found[0].sources == ["trip"]
    assert found[0].dates == ["2026-10-24"] and "[2026-10-24]" in found[0].render()
    # and where the words are what matters, hybrid finds them as words alone do
    assert svc.search_evidence("alice", "quinoa", n=3, now=now, weights=WORDS_ONLY)[0].id == "quinoa"
    assert svc.search_evidence("alice", "quinoa", n=3, now=now)[0].id == "quinoa"


def test_temporal_answers_carry_absolute_dates_and_facts_their_history(svc):
    svc.hear_turn("alice", "h1", at(2026, 11, 3, 19), "user", "Yesterday I went hiking in the hills", "s1")
    svc.hear_turn("alice", "c1", at(2026, 11, 4, 19), "user", "I like cola", "s2")
    svc.hear_turn("alice", "c2", at(2026, 11, 12, 19), "user", "I don't like cola anymore", "s3")
    svc.hear_turn("alice", "z1", at(2026, 11, 13, 19), "user", "上周六我去了长城", "s4")
    now = at(2026, 11, 20, 9)
    (hike, *_rest) = svc.search_evidence("alice", "When did I go hiking?", n=3, now=now)
    assert hike.id == "h1" and hike.date == "2026-11-02" and "2026-11-02" in hike.render()
    (wall, *_rest) = svc.search_evidence("alice", "我什么时候去的长城", n=3, now=now)
    assert wall.id == "z1" and wall.date == "2026-11-07"
    items = svc.search_evidence("alice", "Do I still like cola?", n=5, now=now)
    memories = {e.text: e for e in items if e.kind == "memory"}
    assert memories["User no longer likes cola."].current and memories["User no longer likes cola."].sources == ["c2"]
    assert memories["User likes cola."].status == SUPERSEDED and "superseded" in memories["User likes cola."].render()
    ranks = [e.text for e in items]
    assert ranks.index("User no longer likes cola.") < ranks.index("User likes cola.")
    assert svc.search_evidence("bob", "cola", now=now) == [], "another owner's turns are not searched"


# ---------------------------------------------------------------- fay-ros memory replay / search
def cli(*args, db):
    return subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "memory", "--db", str(db), "--embedder", "hashed", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


LOG = [
    {"time": "2026-11-03T19:00:00", "speaker": "user", "text": "Yesterday I went hiking with Anna", "id": "a1"},
    {"time": "2026-11-03T19:00:05", "speaker": "assistant", "text": "Lovely, where did you go?", "id": "a2"},
    {"time": "2026-11-10T08:00:00", "speaker": "user", "text": "我喜欢喝可乐", "id": "b1", "session": "s2"},
]


def write_log(path, rows, extra: str = "") -> str:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n" + extra, encoding="utf-8")
    return str(path)


def test_replay_is_idempotent_and_keeps_the_times_of_the_file(tmp_path):
    db, log = tmp_path / "m.db", write_log(tmp_path / "talk.jsonl", LOG)
    out = cli("replay", log, "--owner", "alice", db=db)
    assert out.returncode == 0, out.stderr
    assert "3 stored, 0 already there, 1 facts written" in out.stdout
    out = cli("replay", log, "--owner", "alice", db=db)
    assert out.returncode == 0 and "0 stored, 3 already there" in out.stdout
    svc = build_service(str(db), embedder="hashed")
    try:
        turns = svc.store.list_turns("alice")
        assert [(t.turn_id, t.time, t.session) for t in turns] == [
            ("a1", at(2026, 11, 3, 19), ""),
            ("a2", at(2026, 11, 3, 19, 0, 5), ""),
            ("b1", at(2026, 11, 10, 8), "s2"),
        ]
        (fact,) = svc.store.list("alice")
        assert fact.created == at(2026, 11, 10, 8) and fact.sources == ["b1"]
    finally:
        svc.store.close()

    out = cli(
        "search", "when did I go hiking", "--owner", "alice", "--evidence", "--now", "2026-11-20T09:00", "--json", db=db
    )
    assert out.returncode == 0, out.stderr
    items = json.loads(out.stdout)
    assert items[0]["id"] == "a1" and items[0]["sources"] == ["a1"] and items[0]["date"] == "2026-11-02"
    assert all({"kind", "id", "text", "date", "said", "sources", "score", "rendered"} <= set(i) for i in items)
    out = cli("search", "可乐", "--owner", "alice", "--json", db=db)  # plain recall: memories with evidence
    (node,) = json.loads(out.stdout)
    assert node["sources"] == ["b1"] and node["date"] == "2026-11-10"
    text = cli("search", "hiking", "--owner", "alice", "--evidence", "--now", "2026-11-20T09:00", db=db).stdout
    assert "[2026-11-02] (said 2026-11-03) User: Yesterday I went hiking with Anna" in text


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("{not json", "not JSON"),
        ('{"time": "2026-11-11T10:00:00", "speaker": "user", "text": "hi"}', "missing id"),
        ('{"time": "yesterday", "speaker": "user", "text": "hi", "id": "c1"}', "expected ISO 8601"),
        ('{"time": "2026-11-11T10:00:00", "speaker": "robot", "text": "hi", "id": "c1"}', "speaker 'robot'"),
        ('{"time": "2026-11-11T10:00:00", "speaker": "user", "text": "  ", "id": "c1"}', "text: empty"),
    ],
)
def test_replay_names_the_bad_line_and_writes_nothing(tmp_path, bad, why):
    db, log = tmp_path / "m.db", write_log(tmp_path / "talk.jsonl", LOG, extra="\n" + bad + "\n")
    out = cli("replay", log, "--owner", "alice", db=db)
    assert out.returncode == 2
    assert f"{log}:5:" in out.stderr and why in out.stderr
    svc = build_service(str(db), embedder="hashed")
    try:
        assert svc.store.count_turns() == 0 and svc.store.count() == 0
    finally:
        svc.store.close()


def test_a_relative_named_in_the_facts_leads_to_the_turns_about_them(svc):
    """ "What does my sister do?": the turn that answers says "Ella", not "sister"; the owner's
    fact "my sister is called Ella" links them (EN and ZH)."""
    said = [
        ("e1", "user", "My sister is called Ella."),
        ("e2", "user", "My friend's sister is a doctor in Leeds."),
        ("e3", "user", "Work was busy today, my sister would laugh at my desk."),
        ("e4", "user", "Ella just got promoted, she's a senior librarian now."),
        ("e5", "user", "My neighbour works at the bakery."),
        ("z1", "user", "我姐姐叫小红。"),
        ("z2", "user", "我朋友的姐姐养了一只狗。"),
        ("z3", "user", "小红家的猫汤圆又把她的鞋咬坏了。"),
    ]
    for i, (turn_id, speaker, text) in enumerate(said):
        assert svc.hear_turn("alice", turn_id, at(2026, 11, 1 + i, 19), speaker, text).success
    now = at(2026, 11, 20, 9)
    # (the turn that says it, or the fact read from that turn: "User's sister Ella is a senior librarian")
    found = svc.search_evidence("alice", "What does my sister do for work?", n=3, now=now)
    assert any(e.id == "e4" or "e4" in e.sources for e in found), [(e.id, e.text, e.sources) for e in found]
    pet = [e.id for e in svc.search_evidence("alice", "我姐姐养的宠物叫什么名字？", n=3, now=now)]
    assert "z3" in pet, pet
    # without the fact, nothing links "sister" to Ella: the other owner's search finds nothing of alice's
    assert svc.search_evidence("bob", "What does my sister do for work?", n=3, now=now) == []


def test_a_heard_she_is_the_relative_the_owner_named_just_before(memory_location, clock):
    """'I look after my mum.' then 'She's coeliac.': the second turn is the mother's condition
    (a safety fact of the household), and another owner's words never say who 'she' is."""
    svc = build_service(memory_location, embedder="hashed", clock=clock, learn_heard_facts=True)
    svc.hear_user("alice", "I look after my mum.")
    svc.hear_user("bob", "My wife is lovely.")
    clock.t += 2
    svc.hear_user("alice", "She's coeliac so absolutely no gluten for her.")
    svc.hear_user("bob", "He's diabetic.")
    mum = svc.store.find_keyed("alice", "fact", "health:condition:coeliac:mother", [CONFIRMED])
    assert [n.content for n in mum] == ["User's mother has coeliac disease."]
    assert not [n for n in svc.store.list("bob") if "health:" in (n.key or "")]
    svc.store.close()


def test_the_dialogues_write_of_a_relatives_fact_said_with_she_is_confirmed(memory_location, clock):
    """The policy's check that the owner said it reads 'She's coeliac' with the words that named
    the relative two turns before: the dialogue's write is confirmed, not left a candidate."""
    svc = build_service(memory_location, embedder="hashed", clock=clock)
    for words in ("I look after my mum.", "Her name is Beatrice.", "She's coeliac so no gluten for her."):
        svc.hear_user("alice", words)
        clock.t += 2
    out = svc.remember(
        RememberRequest(
            "alice",
            "User's mother has coeliac disease.",
            tags=["kind:fact"],
            key="health:condition:coeliac:mother",
            user_confirmed=True,
        )
    )
    assert out.node is not None and out.node.status == CONFIRMED, out.message
    svc.store.close()
