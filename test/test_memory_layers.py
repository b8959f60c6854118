"""The layered profile (fay_ros/memory/layers) on real SQLite and PostgreSQL stores: the
pipeline's thresholds on signal time, decay, the explicit fast path, the anti-jitter burst,
restart mid-buffer, forgetting, owner isolation, the core memory's budget, and the LLM
updaters against a scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import json

import pytest

import dialogue_fake_llm as fake
from fay_ros.llm.client import ChatClient, Endpoint
from fay_ros.memory.layers import LayersConfig, signals_from_turn
from fay_ros.memory.layers.layer_state import CURRENT, REMOVED, SUPERSEDED
from fay_ros.memory.policy import RememberRequest
from fay_ros.memory.service import build_service

T0 = 1_800_000_000.0
HOUR, DAY, WEEK = 3600.0, 86400.0, 7 * 86400.0


def open_service(location, clock, llm=None, **config):
    svc = build_service(location, embedder="hashed", clock=clock, llm=llm)
    svc.enable_layers(LayersConfig(**config))
    return svc


@pytest.fixture
def svc(memory_location, clock):
    service = open_service(memory_location, clock)
    yield service
    service.store.close()


class Talk:
    """Turns of one owner with increasing ids at given signal times."""

    def __init__(self, svc, owner: str = "tom") -> None:
        self.svc, self.owner, self.n = svc, owner, 0

    def say(self, text: str, t: float):
        self.n += 1
        return self.svc.ingest_turn(self.owner, f"{self.owner}-{self.n}", t, "user", text)


def prefs(svc, owner="tom", status=CURRENT):
    return {(p["thing"], p["likes"]) for p in svc.layered.layers(owner).preferences if p["status"] == status}


# ---------------------------------------------------------------- classification
def test_a_turn_is_classified_by_rules():
    (s,) = signals_from_turn("tom", "1", T0, "user", "I don't play games any more")
    assert s.kind == "statement" and [(t.thing, t.likes, t.explicit) for t in s.tastes] == [("games", False, True)]
    (s,) = signals_from_turn("tom", "2", T0, "user", "我不喝可乐了")
    assert [(t.thing, t.likes) for t in s.tastes] == [("可乐", False)]
    (s,) = signals_from_turn("tom", "3", T0, "user", "I went hiking again today")
    assert s.kind == "mention" and [(t.thing, t.explicit) for t in s.tastes] == [("hiking", False)]
    assert signals_from_turn("", "4", T0, "user", "I like tea") == []  # the guest has no layers
    assert signals_from_turn("tom", "5", T0, "assistant", "I like tea") == []


# ---------------------------------------------------------------- thresholds on signal time
def test_preferences_update_at_count_and_interval_of_signal_time(svc):
    talk = Talk(svc)
    assert talk.say("I went hiking today", T0).updated == []
    assert talk.say("I went hiking again", T0 + 60).updated == []
    # three signals, but only 2 minutes after the first buffered one: not yet (10 minutes)
    assert talk.say("I went hiking with Anna", T0 + 120).updated == []
    assert prefs(svc) == set()
    # any later turn (signal time) finds the buffer due: 3 signals, 10 minutes after the first
    report = talk.say("hello", T0 + 599)
    assert "preferences" not in report.updated
    report = talk.say("hello", T0 + 600)
    assert "preferences" in report.updated
    assert prefs(svc) == {("hiking", True)}
    pref = svc.layered.layers("tom").current_preference("hiking")
    assert pref["explicit"] is False and sorted(pref["evidence"]) == ["tom-1", "tom-2", "tom-3"]
    # the interval restarts at the update: three more mentions at once do not update again
    for i in range(3):
        assert "preferences" not in talk.say("I went hiking again", T0 + 800 + i).updated


def test_awareness_is_written_at_most_daily(svc):
    talk = Talk(svc)
    for i in range(5):
        talk.say("I played chess again" if i % 2 else "how was your day?", T0 + i * HOUR)
    assert svc.layered.layers("tom").notes == []
    talk.say("I played chess", T0 + DAY + 1)
    notes = svc.layered.layers("tom").notes
    # the note rests on the turns about chess, not on the small talk between them
    assert len(notes) == 1 and "chess" in notes[0]["text"] and len(notes[0]["evidence"]) == 3
    # a day of small talk only leaves no note ("8 turns." says nothing)
    for i in range(8):
        talk.say("how was your day?", T0 + 3 * DAY + i * HOUR)
    talk.say("nice weather", T0 + 5 * DAY)
    assert len(svc.layered.layers("tom").notes) == 1


def test_a_replay_of_three_weeks_in_seconds_follows_the_turn_times(svc):
    """Weeks of talk fed at once: notes are at most daily and dated by the turns, not the clock."""
    talk = Talk(svc)
    for day in range(21):
        for i in range(4):
            talk.say("I played chess" if i % 2 else "I went hiking today", T0 + day * DAY + i * 900)
    layers = svc.layered.layers("tom")
    dates = [n["date"] for n in layers.notes]
    assert len(dates) == len(set(dates)) and 10 <= len(dates) <= 21
    from fay_ros.memory.layers.layer_state import day_of

    assert set(dates) <= {day_of(T0 + d * DAY) for d in range(21)}
    assert layers.now == T0 + 20 * DAY + 3 * 900
    # three weeks of steady talk: the soul changed, one trait per update, two days apart at least
    soul = [c for c in svc.layered.repo.changelog("tom", 1000) if c["layer"] == "soul" and c["item"] != "portrait"]
    assert 1 <= len(soul) <= 2 and {t["source"] for t in layers.soul["traits"]} <= {"chess", "hiking"}


# ---------------------------------------------------------------- fast path
def test_explicit_statement_flips_at_once_and_keeps_history(svc):
    talk = Talk(svc)
    talk.say("我喜欢可乐", T0)
    assert prefs(svc) == {("可乐", True)}
    talk.say("我不喝可乐了", T0 + 60)
    talk.say("我喜欢咖啡", T0 + 120)
    assert prefs(svc) == {("可乐", False), ("咖啡", True)}
    talk.say("我喜欢可乐", T0 + 180)
    talk.say("I don't like coffee anymore", T0 + 240)
    talk.say("I like coffee", T0 + 250)
    talk.say("I don't like coffee anymore", T0 + 260)
    layers = svc.layered.layers("tom")
    current = [p for p in layers.preferences if p["status"] == CURRENT]
    assert {(p["thing"], p["likes"]) for p in current} == {("可乐", True), ("咖啡", True), ("coffee", False)}
    history = [(p["thing"], p["likes"]) for p in layers.preferences if p["status"] == SUPERSEDED]
    assert history == [("可乐", True), ("可乐", False), ("coffee", False), ("coffee", True)]
    # exactly one current item per thing, and the core memory names only the current ones
    core = svc.core_memory("tom", 400)
    assert "likes 可乐" in core and "does not like coffee" in core and "likes coffee" not in core
    log = svc.layered.repo.changelog("tom")
    flip = [c for c in log if c["layer"] == "preferences" and c["reason"] == "superseded by a statement"]
    assert flip and all(c["evidence"] for c in flip)


def test_games_no_more(svc):
    talk = Talk(svc)
    for i in range(3):
        talk.say("I played games", T0 + i * 400)
    assert prefs(svc) == {("games", True)}
    talk.say("I don't play games any more", T0 + 2000)
    assert prefs(svc) == {("games", False)}
    # a later mention is an inference: it never overrides what the owner said
    for i in range(4):
        talk.say("I played games with my nephew", T0 + 3000 + i * 700)
    assert prefs(svc) == {("games", False)}


# ---------------------------------------------------------------- decay
def test_decay_per_inactive_week_and_removal(svc):
    talk = Talk(svc)
    talk.say("I like tea", T0)
    pipeline = svc.layered
    pref = pipeline.layers("tom").current_preference("tea")
    from fay_ros.memory.layers.layer_state import effective_weight

    assert effective_weight(pref, T0 + 2 * WEEK, 0.9) == pytest.approx(0.8 * 0.81)
    talk.say("hello", T0 + 20 * WEEK)  # 0.8 * 0.9**20 = 0.097: kept
    assert prefs(svc) == {("tea", True)}
    talk.say("hello again", T0 + 28 * WEEK)  # 0.8 * 0.9**28 = 0.042: removed
    assert prefs(svc) == set() and prefs(svc, status=REMOVED) == {("tea", True)}
    assert any(c["reason"].startswith("decayed") for c in pipeline.repo.changelog("tom"))


# ---------------------------------------------------------------- anti-jitter
def test_a_burst_of_similar_events_changes_preferences_not_the_soul(svc):
    talk = Talk(svc)
    for i in range(20):
        talk.say("I went hiking again today", T0 + i * 120)
    layers = svc.layered.layers("tom")
    assert layers.current_preference("hiking") is not None
    assert layers.soul["traits"] == [] and layers.soul["portrait"] == ""
    assert not any(c["layer"] == "soul" for c in svc.layered.repo.changelog("tom"))


def test_the_soul_changes_slowly_one_trait_per_update(svc):
    talk = Talk(svc)
    t = T0
    for day in range(6):
        for thing in ("hiking", "chess"):
            for _ in range(2):
                t = T0 + day * DAY + len(thing) * 60 + _ * 700
                talk.say(f"I went {thing} today" if thing == "hiking" else f"I played {thing} today", t)
    log = svc.layered.repo.changelog("tom", 500)
    soul_changes = [c for c in log if c["layer"] == "soul" and c["item"] != "portrait"]
    layers = svc.layered.layers("tom")
    traits = [tr["text"] for tr in layers.soul["traits"]]
    assert traits and len(soul_changes) == len(traits)
    # one trait per update: two qualifying preferences need two soul updates, 2 days apart
    times = sorted(c["time"] for c in soul_changes)
    assert all(b - a >= 2 * DAY for a, b in zip(times, times[1:]))
    assert layers.soul["portrait"].startswith("Seems to be someone")


def test_insights_are_candidates_until_confident_and_repeated(memory_location, clock):
    svc = open_service(memory_location, clock, insights={"min_count": 2, "min_interval": DAY, "max_buffer": 50})
    try:
        talk = Talk(svc)
        seen = []
        for day in range(5):
            for i in range(3):
                talk.say("I played chess today", T0 + day * DAY + i * 700)
            chess = [i for i in svc.layered.layers("tom").insights if i["key"] == "enjoys:chess"]
            seen.append((chess[0]["status"], chess[0]["confidence"]) if chess else None)
        statuses = [s[0] if s else None for s in seen]
        assert statuses[0] is None  # one day: no pattern yet
        assert "candidate" in statuses and statuses[-1] == "active"
        first_active = statuses.index("active")
        assert seen[first_active][1] >= 0.8 and statuses[first_active - 1] == "candidate"
        core = svc.core_memory("tom", 400)
        assert "Seems to enjoy chess regularly" in core and "Hypotheses (not facts):" in core
    finally:
        svc.store.close()


# ---------------------------------------------------------------- persistence
def test_restart_in_the_middle_of_a_buffer_loses_nothing(memory_location, clock):
    svc = open_service(memory_location, clock)
    talk = Talk(svc)
    talk.say("I went hiking today", T0)
    talk.say("I went hiking again", T0 + 60)
    svc.store.close()
    svc = open_service(memory_location, clock)
    talk = Talk(svc)
    talk.n = 2
    assert len(svc.layered.layers("tom").buffer("preferences")["signals"]) == 2
    assert talk.say("I went hiking again", T0 + 700).updated[:1] == ["preferences"]
    pref = svc.layered.layers("tom").current_preference("hiking")
    assert sorted(pref["evidence"]) == ["tom-1", "tom-2", "tom-3"]
    assert talk.say("I went hiking again", T0 + 701).recorded
    # a replayed turn id is ignored
    assert not svc.ingest_turn("tom", "tom-1", T0, "user", "I went hiking today").recorded
    svc.store.close()


# ---------------------------------------------------------------- forgetting and owners
def test_forget_evidence(svc):
    talk = Talk(svc)
    talk.say("I like tea", T0)  # tom-1: tea rests only on it
    for i in range(3):
        talk.say("I played chess", T0 + 100 + i * 400)  # tom-2..4
    assert prefs(svc) == {("tea", True), ("chess", True)}
    out = svc.forget_evidence("tom", ["tom-1", "tom-2"])
    assert out.success
    layers = svc.layered.layers("tom")
    assert layers.current_preference("tea") is None
    assert sorted(layers.current_preference("chess")["evidence"]) == ["tom-3", "tom-4"]
    repo = svc.layered.repo
    assert [e["turn_id"] for e in repo.events("tom", ["tom-1", "tom-2", "tom-3"])] == ["tom-3"]
    log = repo.changelog("tom")
    assert not any("tom-1" in c["evidence"] for c in log)
    assert any(c["reason"] == "forget" for c in log)
    assert "tea" not in json.dumps(layers.docs, ensure_ascii=False)


def test_owners_are_isolated_and_the_guest_has_none(svc):
    Talk(svc, "tom").say("I like tea", T0)
    Talk(svc, "ann").say("I don't like tea", T0)
    assert prefs(svc, "tom") == {("tea", True)} and prefs(svc, "ann") == {("tea", False)}
    assert not svc.ingest_turn("", "g-1", T0, "user", "I like coffee").recorded
    assert svc.core_memory("", 400) == "" and svc.layered.layers("").preferences == []
    assert "does not like tea" not in svc.core_memory("tom", 400)
    assert svc.layered.repo.events("ann", ["tom-1"]) == []
    assert not svc.forget_evidence("", ["tom-1"]).success


# ---------------------------------------------------------------- core memory
def test_core_memory_budget_keeps_safety_lines(svc):
    for content, key in (
        ("User is allergic to peanuts.", "allergy:peanuts"),
        ("User takes insulin every morning.", "medication:insulin"),
        ("User's name is Tom.", "name"),
    ):
        out = svc.remember(
            RememberRequest(owner="tom", content=content, tags=["kind:fact"], key=key, user_confirmed=True)
        )
        assert out.success and out.node is not None and out.node.status == "confirmed", out.message
    talk = Talk(svc)
    for i, thing in enumerate(("tea", "hiking", "chess", "jazz", "soup")):
        talk.say(f"I like {thing}", T0 + i)
    full = svc.core_memory("tom", 1000)
    tiny = svc.core_memory("tom", 5)
    assert "peanuts" in tiny and "insulin" in tiny and "tea" not in tiny
    assert full.index("peanuts") < full.index("Tom") < full.index("likes tea")
    out, profile = svc.layered_profile("tom", 1000)
    assert out.success and profile is not None and "peanuts" in profile.portrait
    assert profile.facts and ("allerg" in profile.facts[0] or "medication" in profile.facts[0])


# ---------------------------------------------------------------- LLM updaters (loopback server)
def llm_service(location, clock, server):
    client = ChatClient(Endpoint(base_url=server.base_url, model="fake", api_key="sk-test"))
    return open_service(
        location,
        clock,
        llm=client,
        updater="llm",
        soul={"min_count": 2, "min_interval": 0.0, "max_buffer": 30},
        awareness={"min_count": 50, "min_interval": 0.0, "max_buffer": 200},
        insights={"min_count": 50, "min_interval": 0.0, "max_buffer": 50},
        preferences={"min_count": 50, "min_interval": 0.0, "max_buffer": 200},
    )


def soul_answer(**answer) -> fake.Scripted:
    return fake.completion(json.dumps(answer, ensure_ascii=False))


def test_llm_soul_updater_no_change_valid_and_garbage(memory_location, clock, llm):
    llm.reset()
    svc = llm_service(memory_location, clock, llm)
    try:
        talk = Talk(svc)
        talk.say("I love climbing", T0)
        # 1) no_change is honoured
        llm.script(soul_answer(no_change=True, add_traits=["reckless"], evidence=["tom-1", "tom-2"]))
        assert "soul" in talk.say("I went climbing today", T0 + 60).updated
        assert svc.layered.layers("tom").soul["traits"] == []
        prompt = llm.requests[-1]["messages"][1]["content"]
        assert "[tom-2] I went climbing today" in prompt and "core memory" in prompt
        # 2) a valid change: only ONE trait of the two proposed, evidence limited to buffered turns
        llm.script(
            soul_answer(
                add_traits=["adventurous", "sporty"],
                portrait="Seems to be an adventurous person.",
                evidence=["tom-3", "tom-4", "not-a-turn"],
            )
        )
        talk.say("I went climbing again", T0 + 120)
        talk.say("I went bouldering", T0 + 180)
        soul = svc.layered.layers("tom").soul
        assert [t["text"] for t in soul["traits"]] == ["adventurous"]
        assert soul["traits"][0]["evidence"] == ["tom-3", "tom-4"]
        assert soul["portrait"] == "Seems to be an adventurous person."
        log = svc.layered.repo.changelog("tom")
        assert any(c["layer"] == "soul" and c["new"] == "adventurous" and c["evidence"] for c in log)
        # the core memory is in the prompt of the next update
        llm.script(fake.completion("this is not JSON at all"))
        asked = len(llm.requests)
        talk.say("I went climbing", T0 + 240)
        talk.say("I went climbing again", T0 + 300)
        assert len(llm.requests) == asked + 1
        assert "adventurous" in llm.requests[-1]["messages"][1]["content"]
        # 3) garbage is ignored: nothing changed
        assert [t["text"] for t in svc.layered.layers("tom").soul["traits"]] == ["adventurous"]
        # 4) an answer that fails validation (wrong types) is ignored too
        llm.script(soul_answer(add_traits="not a list", evidence="tom-7"))
        talk.say("I went climbing", T0 + 360)
        talk.say("I went climbing", T0 + 420)
        assert [t["text"] for t in svc.layered.layers("tom").soul["traits"]] == ["adventurous"]
        # 5) values and the life stage carry their evidence too; forgetting it removes them
        # (and a removal and an addition in one answer: only the removal is taken)
        llm.script(
            soul_answer(
                add_values=["courage", "safety"],
                add_needs=["to feel free"],
                remove_traits=["adventurous"],
                add_traits=["calm"],
                life_stage="student",
                evidence=["tom-9"],
            )
        )
        talk.say("I went climbing", T0 + 480)
        talk.say("I went climbing", T0 + 540)
        soul = svc.layered.layers("tom").soul
        assert soul["values"] == ["courage"] and soul["life_stage"] == "student" and soul["traits"] == []
        assert soul["deep_needs"] == ["to feel free"]
        svc.forget_evidence("tom", ["tom-3", "tom-4", "tom-9"])
        soul = svc.layered.layers("tom").soul
        assert soul["traits"] == [] and soul["values"] == [] and soul["life_stage"] == "" and soul["deep_needs"] == []
        assert soul["portrait"] == ""  # drawn from what was forgotten
        assert "adventurous" not in json.dumps(svc.layered.repo.changelog("tom"), ensure_ascii=False)
    finally:
        svc.store.close()
        llm.reset()


def test_an_unreachable_llm_falls_back_to_the_rules(memory_location, clock):
    client = ChatClient(Endpoint(base_url="http://127.0.0.1:9/v1", model="fake", api_key="sk-test"))
    svc = open_service(memory_location, clock, llm=client, updater="llm")
    try:
        talk = Talk(svc)
        for i in range(4):
            talk.say("I played chess", T0 + i * 400)
        assert prefs(svc) == {("chess", True)}  # the preference layer never needs the LLM
        for i in range(3):
            talk.say("I played chess", T0 + DAY + i)
        assert svc.layered.layers("tom").notes  # awareness: the LLM failed, the rules wrote the note
    finally:
        svc.store.close()


# ---------------------------------------------------------------- migration between backends
def test_migrate_carries_the_layers_there_and_back(tmp_path, postgres_url, clock):
    from fay_ros.memory.migrate import migrate

    src = open_service(str(tmp_path / "a.db"), clock)
    talk = Talk(src)
    talk.say("我喜欢可乐", T0)
    talk.say("我不喝可乐了", T0 + 60)
    for i in range(3):
        talk.say("I played chess", T0 + 100 + i * 400)
    Talk(src, "ann").say("I like tea", T0)
    before = {o: src.layered.snapshot(o) for o in ("tom", "ann")}
    pg = open_service(postgres_url, clock)
    back = open_service(str(tmp_path / "b.db"), clock)
    try:
        for _ in range(2):  # a second run changes nothing
            migrate(src.store, pg.store)
            migrate(pg.store, back.store)
        for owner in ("tom", "ann"):
            assert pg.layered.snapshot(owner) == before[owner]
            assert back.layered.snapshot(owner) == before[owner]
        assert len(back.layered.repo.changelog("tom")) == len(before["tom"]["changelog"]) > 0
    finally:
        for svc in (src, pg, back):
            svc.store.close()


# ---------------------------------------------------------------- CLI
def test_cli_profile_json_and_text(tmp_path, clock):
    import subprocess
    import sys

    db = tmp_path / "memory.db"
    svc = open_service(str(db), clock)
    talk = Talk(svc)
    talk.say("我喜欢可乐", T0)
    talk.say("我不喝可乐了", T0 + 60)
    svc.store.close()

    def cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "fay_ros.cli", "memory", "--db", str(db), "--embedder", "hashed", "profile", *args],
            capture_output=True,
            text=True,
            timeout=120,
        )

    out = cli("--owner", "tom", "--json")
    assert out.returncode == 0, out.stderr
    snap = json.loads(out.stdout)
    items = snap["layers"]["preferences"]["items"]
    assert [(p["thing"], p["likes"], p["status"], p["evidence"]) for p in items] == [
        ("可乐", True, "superseded", ["tom-1"]),
        ("可乐", False, "current", ["tom-2"]),
    ]
    assert [e["turn_id"] for e in snap["events"]] == ["tom-2", "tom-1"]
    assert snap["changelog"][0]["evidence"] == ["tom-2"] and "does not like 可乐" in snap["core_memory"]
    text = cli("--owner", "tom")
    assert text.returncode == 0 and "[superseded] likes 可乐" in text.stdout and "[tom-2]" in text.stdout
    forgot = cli("--owner", "tom", "--forget-turn", "tom-2", "--json")
    assert forgot.returncode == 0
    assert [p["status"] for p in json.loads(forgot.stdout)["layers"]["preferences"]["items"]] == ["superseded"]
    assert cli("--owner", "").returncode == 1


def test_a_tiny_model_never_writes_the_layers(memory_location, clock, llm):
    """updater=llm with the embedded model's name: the rules update the soul, no request is made."""
    llm.reset()
    client = ChatClient(Endpoint(base_url=llm.base_url, model="smollm2-135m", api_key="sk-test"))
    svc = open_service(
        memory_location,
        clock,
        llm=client,
        updater="llm",
        soul={"min_count": 2, "min_interval": 0.0, "max_buffer": 30},
    )
    try:
        talk = Talk(svc)
        for i in range(6):
            talk.say("I love climbing" if i % 2 else "I went climbing today", T0 + 60 * i)
        assert llm.requests == []
        assert svc.layered.llm is None
    finally:
        svc.store.close()
