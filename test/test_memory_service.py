"""MemoryService rules without ROS: supersede, promote, forget, reflection on a loopback
LLM server, profile thresholds, Fay import and the `fay-ros memory` command."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fay_ros.llm.client import ChatClient, Endpoint, LlmError
from fay_ros.memory.fay_import import FayImportError, import_fay
from fay_ros.memory.model import CANDIDATE, CONFIRMED, SUPERSEDED
from fay_ros.memory.policy import RememberRequest
from fay_ros.memory.service import build_service


def make(location, clock, llm=None, **settings):
    """A service on `location` (the memory_location fixture: SQLite, then PostgreSQL)."""
    settings.setdefault("profile", {"min_evidence": 3, "min_interval": 0.0})
    return build_service(location, embedder="hashed", clock=clock, llm=llm, **settings)


@pytest.fixture
def svc(memory_location, clock):
    service = make(memory_location, clock)
    yield service
    service.store.close()


def remember(svc, owner, content, confirmed=True, **kw):
    return svc.remember(RememberRequest(owner=owner, content=content, user_confirmed=confirmed, **kw))


DIET = dict(tags=["kind:preference", "domain:diet"], key="coriander")


# ---------------------------------------------------------------- confirmed / candidate / supersede
def test_confirmed_value_supersedes_the_old_one_and_keeps_history(svc, clock):
    old = remember(svc, "alice", "我不吃香菜", **DIET).node
    clock.t += 10
    out = remember(svc, "alice", "我现在吃香菜了", **DIET)
    assert out.success and f"superseded {old.id}" in out.message
    stored = {n.content: n for n in svc.store.list("alice", statuses=[])}
    assert stored["我不吃香菜"].status == SUPERSEDED and stored["我不吃香菜"].superseded_by == out.node.id
    assert [n.content for n in svc.recall("alice", "香菜", include_candidates=True).nodes] == ["我现在吃香菜了"]


def test_candidate_never_supersedes_and_is_not_recalled_for_answers(svc):
    remember(svc, "alice", "我不吃香菜", **DIET)
    out = remember(svc, "alice", "我吃香菜", confirmed=False, **DIET)
    assert out.node.status == CANDIDATE and "candidate" in out.message
    assert [n.content for n in svc.recall("alice", "香菜").nodes] == ["我不吃香菜"]
    assert {n.content for n in svc.recall("alice", "香菜", include_candidates=True).nodes} == {"我不吃香菜", "我吃香菜"}


def test_confirming_a_candidate_promotes_it(svc):
    cand = remember(svc, "alice", "我喜欢喝咖啡", confirmed=False, tags=["kind:preference"]).node
    out = remember(svc, "alice", "我喜欢喝咖啡", tags=["kind:preference", "domain:diet"])
    assert out.node.id == cand.id and out.node.status == CONFIRMED and "was a candidate" in out.message
    assert svc.store.get("alice", cand.id).tags == ["kind:preference", "domain:diet"]
    assert svc.store.count("alice") == 1


def test_same_value_twice_or_a_retried_turn_stores_once(svc):
    first = remember(svc, "alice", "我不吃香菜", **DIET)
    assert "unchanged" in remember(svc, "alice", "我不吃香菜", **DIET).message
    retry = dict(source_session="s1", source_turn=4)
    a = remember(svc, "alice", "我的生日是五月三日", confirmed=False, **retry)
    b = remember(svc, "alice", "我的生日是五月三日", confirmed=False, **retry)
    assert a.node.id == b.node.id and "already stored" in b.message
    assert "already confirmed" in remember(svc, "alice", "我不吃香菜", confirmed=False).message
    assert svc.store.count("alice") == 2 and first.success


def test_user_confirmed_without_an_explicit_request_in_the_turn_becomes_candidate(svc):
    svc.hear_user("alice", "我今天吃了香菜")
    assert remember(svc, "alice", "我吃香菜", **DIET).node.status == CANDIDATE
    svc.hear_reply("alice", "c1", "好吃吗？", True)
    svc.hear_user("alice", "记住我不吃香菜")  # a new turn
    assert remember(svc, "alice", "我不吃香菜", **DIET).node.status == CONFIRMED
    svc.hear_reply("alice", "c2", "好的。", True)
    svc.hear_user("alice", "其实我现在吃香菜了")  # correcting a confirmed fact is explicit
    assert remember(svc, "alice", "我现在吃香菜了", **DIET).node.status == CONFIRMED


def test_active_rules_are_confirmed_persistent_rules_only(svc):
    rule = remember(
        svc, "alice", "爷爷每天早晨必须测血压", tags=["kind:rule", "persistent:true", "domain:homecare"]
    ).node
    remember(svc, "alice", "也许每周游泳", confirmed=False, tags=["kind:rule", "persistent:true"])
    remember(svc, "alice", "今天要买菜", tags=["kind:rule"])
    remember(svc, "bob", "Bob 的规则", tags=["kind:rule", "persistent:true"])
    out = svc.active_rules("alice")
    assert out.success and [n.id for n in out.nodes] == [rule.id]
    assert not svc.active_rules("").success


# ---------------------------------------------------------------- forget
def test_forget_exact_match_deletes_it_and_its_traces(svc, clock):
    old = remember(svc, "alice", "我不吃香菜", **DIET).node
    new = remember(svc, "alice", "我现在吃香菜了", **DIET).node
    keep = remember(svc, "alice", "我住在上海").node
    svc.hear_user("alice", "其实我现在吃香菜了")
    transcript = svc.hear_reply("alice", "c9", "好的，我记住了你现在吃香菜了。", True)
    insight = remember(svc, "alice", "她的口味在变化", node_type="reflection").node
    svc.store.write(update=[insight.copy(pointer_ids=[new.id])])
    out = svc.forget("alice", query="coriander")
    assert out.success and not out.needs_confirmation
    assert {n.id for n in out.nodes} == {old.id, new.id, insight.id, transcript.id}
    assert [n.id for n in svc.store.list("alice", statuses=[])] == [keep.id]


def test_ambiguous_forget_asks_and_deletes_nothing_until_confirmed(svc):
    a = remember(svc, "alice", "我不吃香菜", tags=["kind:preference", "domain:diet"]).node
    b = remember(svc, "alice", "我不吃辣", tags=["kind:preference", "domain:diet"]).node
    out = svc.forget("alice", query="我不吃")
    assert not out.success and out.needs_confirmation and "ambiguous: confirm" in out.message
    assert {n.id for n in out.nodes} == {a.id, b.id} and svc.store.count("alice") == 2
    done = svc.forget("alice", query="我不吃", confirm_all=True)
    assert done.success and svc.store.count("alice") == 0


def test_forget_never_crosses_owners(svc):
    a = remember(svc, "alice", "我不吃香菜").node
    out = svc.forget("bob", node_id=a.id)
    assert not out.success and out.message.startswith("not found")
    assert not svc.forget("bob", query="我不吃香菜").success
    assert svc.store.get("alice", a.id) is not None
    assert not svc.forget("", node_id=a.id).success
    assert "give the id or a query" in svc.forget("alice").message


# ---------------------------------------------------------------- profile
def test_portrait_needs_evidence_from_several_turns(svc):
    for text in ["我不吃香菜", "我喜欢爬山", "我住在上海", "我养了一只猫"]:
        remember(svc, "alice", text, tags=["kind:preference"], source_session="s1", source_turn=1)
    assert not svc.profile_due("alice")  # four memories, one turn
    assert svc.profile("alice")[1].pending_evidence == 1
    remember(svc, "alice", "我每天早上跑步", tags=["kind:preference"], source_session="s1", source_turn=2)
    remember(svc, "alice", "我是老师", tags=["kind:fact"], key="job", source_session="s2", source_turn=1)
    assert svc.profile_due("alice")
    profile = svc.rebuild_profile("alice")
    assert "我不吃香菜" in profile.portrait and "我是老师" in profile.portrait
    assert profile.facts == ["fact:job=我是老师"] and profile.pending_evidence == 0
    assert not svc.profile_due("alice")
    remember(svc, "alice", "也许她喜欢咖啡", confirmed=False, source_session="s3", source_turn=1)
    assert svc.profile("alice")[1].pending_evidence == 0  # candidates are not evidence
    svc.forget("alice", query="我不吃香菜")
    assert svc.profile("alice")[1].portrait == ""  # may mention what was forgotten


# ---------------------------------------------------------------- reflection on a loopback LLM
def _chat_answer(content: str) -> dict:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
    }


def test_reflection_distils_cited_insights_with_inherited_tags(memory_location, clock, httpserver, monkeypatch):
    monkeypatch.setenv("FAY_TEST_MEMORY_KEY", "sk-test-not-a-secret")
    answer = {
        "insights": [
            {"insight": "用户的 breakout 策略反复假突破", "sources": [1, 3]},
            {"insight": "没有来源的猜测", "sources": [99]},
            {"insight": "老人血压偏高", "sources": [2]},
        ]
    }
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_json(
        _chat_answer("```json\n" + json.dumps(answer, ensure_ascii=False) + "\n```")
    )
    llm = ChatClient(Endpoint.from_env(httpserver.url_for("/v1"), "fake", "FAY_TEST_MEMORY_KEY"))
    svc = make(memory_location, clock, llm=llm, reflection={"threshold": 20.0})
    a = remember(
        svc,
        "alice",
        "AAPL breakout 买入后回落",
        importance=8,
        tags=["kind:event", "domain:quant", "strategy:breakout", "session:am", "source:claude_code"],
    ).node
    b = remember(
        svc, "alice", "老人晨起血压 158/95", importance=7, tags=["kind:event", "domain:homecare", "date:2026-04-27"]
    ).node
    assert not svc.reflection_due("alice")
    c = remember(
        svc, "alice", "breakout 又一次假突破", importance=8, tags=["kind:error", "domain:quant", "strategy:breakout"]
    ).node
    remember(svc, "alice", "只是猜测的偏好", importance=9, confirmed=False)
    remember(svc, "bob", "Bob 的秘密", importance=9)
    assert svc.reflection_due("alice")
    insights = svc.reflector.reflect("alice")

    assert [n.content for n in insights] == ["用户的 breakout 策略反复假突破", "老人血压偏高"]
    first, second = insights
    assert first.pointer_ids == [a.id, c.id] and second.pointer_ids == [b.id]
    assert first.tags == [
        "domain:quant",
        "source:claude_code",
        "strategy:breakout",
        "kind:insight",
        "source:fay_reflection",
    ]
    assert second.tags == ["domain:homecare", "kind:insight", "source:fay_reflection"]
    assert all(n.status == CANDIDATE and n.node_type == "reflection" for n in insights)
    request, _response = httpserver.log[0]
    body = request.get_data(as_text=True)
    assert request.headers["Authorization"] == "Bearer sk-test-not-a-secret"
    assert "AAPL" in body and "只是猜测" not in body and "Bob" not in body  # confirmed, own memories only
    assert not svc.reflection_due("alice")  # the mark moved past the reflected nodes
    svc.store.close()


def test_reflection_degrades_when_the_llm_fails(memory_location, clock, httpserver):
    httpserver.expect_request("/v1/chat/completions").respond_with_data("overloaded", status=503)
    llm = ChatClient(Endpoint(httpserver.url_for("/v1")))
    svc = make(memory_location, clock, llm=llm, reflection={"threshold": 5.0})
    for text in ["我不吃香菜", "我住在上海", "我喜欢爬山"]:
        remember(svc, "alice", text, importance=5)
    with pytest.raises(LlmError, match="HTTP 503"):
        svc.reflector.reflect("alice")
    unreachable = ChatClient(Endpoint("http://127.0.0.1:9/v1", connect_timeout=2, first_token_timeout=2))
    with pytest.raises(LlmError, match="unreachable"):
        unreachable.complete("s", "u")
    assert svc.store.count("alice") == 3 and svc.reflection_due("alice")  # nothing lost, still due
    no_llm = make(memory_location, clock)
    assert not no_llm.reflection_due("alice")  # no endpoint configured: reflection is off
    svc.store.close()
    no_llm.store.close()


# ---------------------------------------------------------------- Fay import
FAY_NODES = [
    {
        "node_id": 0,
        "node_type": "conversation",
        "content": "主人：今天股市怎么样？\nFay：A股震荡走低。",
        "importance": 4,
        "datetime": "2026/04/27 10:23:15",
        "created": 0,
        "last_retrieved": 0,
        "pointer_id": None,
        "tags": [],
    },
    {
        "node_id": 1,
        "node_type": "observation",
        "content": "用户希望晚上 22:00 之后不要主动发起对话",
        "importance": 8,
        "datetime": "2026/04/15 22:13:05",
        "created": 1,
        "last_retrieved": 1,
        "pointer_id": None,
        "tags": ["domain:life_assistant", "kind:preference", "persistent:true", "source:user"],
    },
    {
        "node_id": 2,
        "node_type": "reflection",
        "content": "用户注重作息",
        "importance": 7,
        "created": 2,
        "last_retrieved": 2,
        "pointer_id": [1, 57],
    },
]


def write_fay(folder, nodes=FAY_NODES, vectors=True):
    stream = folder / "memory_stream"
    stream.mkdir(parents=True, exist_ok=True)
    # As Fay writes it: json.dump(..., ensure_ascii=False, indent=2)
    (stream / "nodes.json").write_text(json.dumps(nodes, ensure_ascii=False, indent=2), encoding="utf-8")
    if vectors:
        (stream / "embeddings.json").write_text(json.dumps({n["content"]: [0.1, 0.2, 0.3] for n in nodes}))
    return stream / "nodes.json"


def test_fay_import_keeps_history_pointers_and_is_idempotent(svc, tmp_path):
    path = write_fay(tmp_path / "fay")
    report = import_fay(svc.store, path, "alice")
    assert (report.imported, report.skipped, report.fay_vectors, report.dropped_pointers) == (3, 0, 3, 1)
    nodes = {n.origin: n for n in svc.store.list("alice", statuses=[])}
    assert nodes["fay:0"].status == CONFIRMED and nodes["fay:0"].tags == ["source:fay_import"]
    assert nodes["fay:1"].tags[-1] == "source:user" and nodes["fay:1"].importance == 8
    assert nodes["fay:2"].status == CANDIDATE and nodes["fay:2"].pointer_ids == [nodes["fay:1"].id]
    assert nodes["fay:0"].created < nodes["fay:1"].created + 30 * 86400
    assert svc.recall("alice", "晚上不要主动发起对话").nodes[0].origin == "fay:1"
    again = import_fay(svc.store, path, "alice")
    assert (again.imported, again.skipped) == (0, 3) and svc.store.count("alice") == 3
    assert svc.store.count("bob") == 0


def test_fay_import_reports_every_problem_and_imports_nothing(svc, tmp_path):
    bad = FAY_NODES[:1] + [
        {"node_id": 5, "node_type": "dream", "content": "x", "importance": "high"},
        {"node_id": 6, "content": "", "datetime": "yesterday"},
        ["not", "a", "node"],
    ]
    path = write_fay(tmp_path / "fay", bad, vectors=False)
    with pytest.raises(FayImportError) as err:
        import_fay(svc.store, path, "alice")
    text = str(err.value)
    assert "nothing imported" in text and str(path) in text
    lines = path.read_text(encoding="utf-8").splitlines()
    starts = [i + 1 for i, line in enumerate(lines) if line in ("  {", "  [")]
    assert len(starts) == 4
    for expected in [
        f":{starts[1]}: node #2 (node_id 5): node_type 'dream'",
        f":{starts[1]}: node #2 (node_id 5): importance 'high'",
        f":{starts[2]}: node #3 (node_id 6): content is missing",
        f":{starts[2]}: node #3 (node_id 6): datetime 'yesterday'",
        f":{starts[3]}: node #4: expected an object",
    ]:
        assert expected in text
    assert svc.store.count() == 0
    broken = tmp_path / "broken.json"
    broken.write_text('[{"node_id": 1,\n "content": }]')
    with pytest.raises(FayImportError, match=r"broken.json:2:\d+: invalid JSON"):
        import_fay(svc.store, broken, "alice")
    with pytest.raises(FayImportError, match="owner"):
        import_fay(svc.store, path, "")


# ---------------------------------------------------------------- fay-ros memory
def cli(*args, db):
    return subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "memory", "--db", str(db), "--embedder", "hashed", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_import_search_list_confirm_forget(tmp_path):
    db = tmp_path / "m.db"
    path = write_fay(tmp_path / "fay")
    out = cli("import", str(path), "--owner", "alice", db=db)
    assert out.returncode == 0 and "imported 3 Fay memory nodes" in out.stdout
    out = cli("search", "晚上不要主动发起对话", "--owner", "alice", "-n", "1", "--json", db=db)
    assert json.loads(out.stdout)[0]["origin"] == "fay:1"
    assert cli("search", "晚上", "--owner", "bob", "--json", db=db).stdout.strip() == "[]"
    listed = cli("list", "--owner", "alice", "--status", "candidate", "--json", db=db)
    candidate = json.loads(listed.stdout)
    assert [n["content"] for n in candidate] == ["用户注重作息"]
    assert "confirmed" in cli("confirm", candidate[0]["id"], "--owner", "alice", db=db).stdout
    assert cli("confirm", candidate[0]["id"], "--owner", "bob", db=db).returncode == 1
    ambiguous = cli("forget", "用户", "--query", "--owner", "alice", db=db)
    assert ambiguous.returncode == 3 and "ambiguous" in ambiguous.stdout
    gone = cli("forget", candidate[0]["id"], "--owner", "alice", db=db)
    assert gone.returncode == 0 and "deleted" in gone.stdout
    assert "用户注重作息" not in cli("list", "--owner", "alice", db=db).stdout
    bad = cli("import", str(tmp_path / "missing.json"), "--owner", "alice", db=db)
    assert bad.returncode == 1 and "cannot read" in bad.stderr
    schema_doc = json.loads(cli("schema", db=db).stdout)
    assert "kind" in schema_doc["tag_namespaces"] and schema_doc["schema_migrations"]


def test_memories_an_agent_stores_as_conversation_are_forgettable_and_in_the_profile(svc):
    """The dialogue agent may store what the user asked to keep with node_type 'conversation';
    only the memory node's own transcripts (source:fay_conversation) are treated as raw."""
    out = remember(
        svc, "alice", "用户的女儿叫小雨", node_type="conversation", key="daughter", source_session="c1", source_turn=1
    )
    assert out.node.status == CONFIRMED
    assert svc.profile("alice")[1].facts == [":daughter=用户的女儿叫小雨"]
    gone = svc.forget("alice", query="女儿叫小雨")
    assert gone.success and [n.id for n in gone.nodes] == [out.node.id]


def test_llm_errors_never_carry_credentials_from_the_endpoint_url():
    llm = ChatClient(
        Endpoint("http://user:s3cret@127.0.0.1:9/v1?api_key=s3cret", connect_timeout=2, first_token_timeout=2)
    )
    with pytest.raises(LlmError) as err:
        llm.complete("s", "u")
    assert "s3cret" not in str(err.value) and "http://127.0.0.1:9/v1" in str(err.value)


def test_portrait_with_an_llm_rewrites_the_previous_one_from_confirmed_evidence(memory_location, clock, httpserver):
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_json(
        _chat_answer("一位住在上海、不吃香菜的老师。")
    )
    llm = ChatClient(Endpoint(httpserver.url_for("/v1"), "fake"))
    svc = make(memory_location, clock, llm=llm, profile={"min_evidence": 2, "min_interval": 3600.0})
    remember(svc, "alice", "我不吃香菜", tags=["kind:preference"], key="coriander", source_session="s", source_turn=1)
    remember(svc, "alice", "也许她喜欢猫", confirmed=False, source_session="s", source_turn=2)
    assert not svc.profile_due("alice")
    remember(svc, "alice", "我是老师", tags=["kind:fact"], key="job", source_session="s", source_turn=3)
    assert svc.profile_due("alice")
    profile = svc.rebuild_profile("alice")
    assert profile.portrait == "一位住在上海、不吃香菜的老师。" and profile.updated == clock.t
    body = httpserver.log[0][0].get_data(as_text=True)
    assert "我不吃香菜" in body and "我是老师" in body and "也许她喜欢猫" not in body
    clock.t += 60
    for turn in (4, 5):
        remember(svc, "alice", f"证据 {turn}", source_session="s", source_turn=turn)
    assert not svc.profile_due("alice")  # enough evidence, but not slow enough yet
    clock.t += 3600
    assert svc.profile_due("alice")
    svc.store.close()


def test_confirming_with_another_kind_leaves_one_kind(svc):
    cand = remember(svc, "alice", "我每天六点起床", confirmed=False, tags=["kind:observation", "domain:life"]).node
    out = remember(svc, "alice", "我每天六点起床", tags=["kind:fact"])
    assert out.node.id == cand.id and sorted(svc.store.get("alice", cand.id).tags) == ["domain:life", "kind:fact"]


# ---------------------------------------------------------------- issue 19: policy holes
def test_forgetting_by_a_bare_noun_finds_the_keyed_fact_it_names(svc):
    home = remember(svc, "alice", "我住在北京路1号", tags=["kind:fact"], key="address").node
    remember(svc, "alice", "我喜欢猫", tags=["kind:preference"], key="taste:cat")
    out = svc.forget("alice", query="住址")
    assert out.success and [n.id for n in out.nodes] == [home.id]
    office = remember(svc, "bob", "Works at 12 Oak Street", tags=["kind:fact"], key="office_address").node
    remember(svc, "bob", "Likes green tea", tags=["kind:preference"], key="taste:tea")
    out = svc.forget("bob", query="address")
    assert out.success and [n.id for n in out.nodes] == [office.id]
    # a bare kind noun names every memory of the kind: asked to confirm, nothing deleted
    remember(svc, "bob", "Likes jazz", tags=["kind:preference"], key="taste:jazz")
    out = svc.forget("bob", query="preferences")
    assert out.needs_confirmation and {n.content for n in out.nodes} == {"Likes green tea", "Likes jazz"}


def test_turns_that_stated_a_superseded_value_are_no_longer_recalled_as_facts(svc, clock):
    svc.hear_user("alice", "记住，我住在北京路1号")
    turn = svc.hear_reply("alice", "c1", "好的，记住了。", True, source="llm")
    old = remember(svc, "alice", "我住在北京路1号", tags=["kind:fact"], key="address").node
    assert turn.id in {n.id for n in svc.recall("alice", "北京路1号").nodes}
    clock.t += 3600
    new = remember(svc, "alice", "我搬到上海路2号了", tags=["kind:fact"], key="address").node
    recalled = {n.id for n in svc.recall("alice", "我住在哪里 北京路 上海路").nodes}
    assert new.id in recalled and old.id not in recalled and turn.id not in recalled
    kept = svc.store.get("alice", turn.id)
    assert kept.status == SUPERSEDED and kept.superseded_by == new.id  # history, not deleted
    # forgetting the address takes the superseded turn with it
    out = svc.forget("alice", query="住址")
    assert out.success and {old.id, new.id, turn.id} <= {n.id for n in out.nodes}
