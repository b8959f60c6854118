"""Memory core without ROS: SQLite store and schema, retrieval, embeddings, policy rules."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

from fay_ros.memory import schema
from fay_ros.memory.backend import open_store
from fay_ros.memory.embeddings import HashedNgramEmbedder, make_embedder
from fay_ros.memory.model import (
    CANDIDATE,
    CONFIRMED,
    SUPERSEDED,
    MemoryInputError,
    MemoryNode,
    describe_schema,
    inherited_tags,
    normalise_tags,
)
from fay_ros.memory.policy import RememberRequest, decide_remember, is_explicit_correction, is_explicit_request
from fay_ros.memory.retrieval import OwnerIndex, Weights
from fay_ros.memory.service import build_service
from fay_ros.memory.store import MemoryStore
from reference_retrieval import naive_scores


@pytest.fixture
def svc(memory_location, clock):
    """A service on SQLite, then on PostgreSQL (conftest.memory_location)."""
    service = build_service(
        memory_location, embedder="hashed", clock=clock, profile={"min_evidence": 3, "min_interval": 0.0}
    )
    yield service
    service.store.close()


def remember(svc, owner, content, confirmed=True, **kw):
    return svc.remember(RememberRequest(owner=owner, content=content, user_confirmed=confirmed, **kw))


# ---------------------------------------------------------------- schema and store
def test_new_database_is_wal_with_every_migration(tmp_path):
    db = schema.connect(tmp_path / "m.db")
    assert db.journal_mode == "wal"
    assert schema.schema_version(db) == schema.LATEST
    assert {"nodes", "node_tags", "node_pointers", "embeddings", "profiles", "reflection_state"} <= set(
        db.table_names()
    )
    db.close()


def test_old_database_is_migrated_forward_with_a_backup(tmp_path):
    path = tmp_path / "m.db"
    conn = sqlite3.connect(path)
    import sqlite_utils

    old = sqlite_utils.Database(conn)
    schema.migrations.apply(old, stop_before=schema.LATEST[1])  # a version-1 database
    old.execute(
        "INSERT INTO nodes (id, owner, node_type, content, importance, created, last_retrieved, status) "
        "VALUES ('n1', 'alice', 'observation', '我不吃香菜', 7, 1, 1, 'confirmed')"
    )
    conn.commit()
    conn.close()

    store = MemoryStore(path, HashedNgramEmbedder())
    assert schema.schema_version(store.db) == schema.LATEST
    node = store.get("alice", "n1")
    assert node.content == "我不吃香菜" and node.origin == "" and node.superseded_by == ""
    store.close()
    backups = list(tmp_path.glob("m.db.before-0002_profile_reflection_import-*"))
    assert len(backups) == 1
    assert sqlite3.connect(backups[0]).execute("SELECT content FROM nodes").fetchone() == ("我不吃香菜",)


def test_database_from_a_newer_version_is_refused_untouched(tmp_path):
    path = tmp_path / "m.db"
    db = schema.connect(path)
    db["_sqlite_migrations"].insert(
        {"migration_set": schema.MIGRATION_SET, "name": "0099_future", "applied_at": "2030-01-01"}
    )
    db.close()
    with pytest.raises(schema.SchemaError, match="newer fay_ros.*0099_future"):
        schema.connect(path)


def test_not_a_database_is_a_clear_error(tmp_path):
    path = tmp_path / "m.db"
    path.write_text("this is not sqlite, " * 100)
    with pytest.raises(schema.SchemaError, match="not a usable SQLite database"):
        schema.connect(path)


def test_writes_persist_and_owners_never_see_each_other(memory_location, clock):
    store = open_store(memory_location, HashedNgramEmbedder(), clock=clock)
    a = MemoryNode(owner="alice", content="我不吃香菜", tags=["kind:preference"], created=clock())
    store.write(add=[(a, None)])
    store.close()
    store = open_store(memory_location, HashedNgramEmbedder(), clock=clock)
    assert store.get("alice", a.id).tags == ["kind:preference"]
    assert store.get("bob", a.id) is None
    assert store.get_many("bob", [a.id]) == []
    assert store.recall("bob", "我不吃香菜") == []
    assert [n.id for n in store.recall("alice", "我不吃香菜")] == [a.id]
    store.close()


def test_store_sees_writes_of_another_process(memory_location, clock):
    store = open_store(memory_location, HashedNgramEmbedder(), clock=clock)
    store.write(add=[(MemoryNode(owner="alice", content="我住在上海", created=clock()), None)])
    assert len(store.recall("alice", "上海")) == 1  # index loaded
    other = open_store(memory_location, HashedNgramEmbedder(), clock=clock)
    other.write(add=[(MemoryNode(owner="alice", content="我在上海工作", created=clock()), None)])
    other.close()
    assert {n.content for n in store.recall("alice", "上海")} == {"我住在上海", "我在上海工作"}
    store.close()


# ---------------------------------------------------------------- retrieval
def _random_stream(rng, count, dim=64):
    nodes, vectors = [], rng.normal(size=(count, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for i in range(count):
        nodes.append(
            MemoryNode(
                owner="o",
                content=f"c{i}",
                importance=float(rng.integers(1, 11)),
                last_retrieved=1e9 - float(rng.integers(0, 500)) * 3600,
                id=f"n{i}",
            )
        )
    return nodes, vectors


@pytest.mark.parametrize("weights", [Weights(0.8, 0.5, 0.5), Weights(0.0, 1.0, 0.5), Weights(1.0, 0.0, 0.0)])
def test_vectorised_scores_equal_fays_per_node_loop(weights):
    rng = np.random.default_rng(7)
    nodes, vectors = _random_stream(rng, 300)
    index = OwnerIndex(dim=64)
    for node, vec in zip(nodes, vectors):
        index.add(node, vec)
    query = vectors[5] * 0.6 + vectors[9] * 0.4
    query /= np.linalg.norm(query)
    rows = index.candidates(1e9, [CONFIRMED])
    fast = index.top(rows, index.score(rows, query, 1e9, weights, 0.995), 20)
    slow = naive_scores(
        [
            {"node_id": n.id, "content": n.content, "importance": n.importance, "last_retrieved": n.last_retrieved}
            for n in nodes
        ],
        {n.content: list(v) for n, v in zip(nodes, vectors)},
        list(query),
        1e9,
        weights,
        0.995,
        300,
    )
    reference = dict(slow)
    # Same scores for the same nodes, and the same top 20 (ties may come in another order).
    assert all(abs(reference[i] - s) < 1e-5 for i, s in fast)
    assert np.allclose([s for _, s in fast], [s for _, s in slow[:20]], atol=1e-5)
    assert all(0.0 <= s <= 1.0 for _, s in fast)


def test_tag_filters_all_and_any_status_and_expiry(svc, clock):
    remember(svc, "alice", "每小时检查止损单", tags=["kind:rule", "persistent:true", "domain:quant"])
    remember(svc, "alice", "AAPL 突破日内高点", tags=["kind:event", "domain:quant", "symbol:AAPL"])
    remember(svc, "alice", "老人晨起血压偏高", tags=["kind:event", "domain:homecare"])
    remember(svc, "alice", "今天的临时提醒", tags=["kind:event", "domain:quant"], ttl=60)
    remember(svc, "alice", "也许喜欢量化", tags=["kind:preference", "domain:quant"], confirmed=False)

    def contents(**kw):
        return {n.content for n in svc.recall("alice", "检查", **kw).nodes}

    assert contents(tags_all=["domain:quant", "kind:event"]) == {"AAPL 突破日内高点", "今天的临时提醒"}
    assert contents(tags_any=["symbol:AAPL", "domain:homecare"]) == {"AAPL 突破日内高点", "老人晨起血压偏高"}
    assert contents(tags_all=["domain:quant"], tags_any=["kind:rule", "symbol:AAPL"]) == {
        "每小时检查止损单",
        "AAPL 突破日内高点",
    }
    assert "也许喜欢量化" not in contents(tags_all=["domain:quant"])
    assert "也许喜欢量化" in contents(tags_all=["domain:quant"], include_candidates=True)
    clock.t += 61
    assert "今天的临时提醒" not in contents(tags_all=["domain:quant"])
    assert svc.store.purge_expired() == 1


def test_recall_updates_last_retrieved_unless_stateless(svc, clock):
    node = remember(svc, "alice", "我喜欢爬山", tags=["kind:preference"]).node
    clock.t += 3600
    svc.recall("alice", "爬山", stateless=True)
    svc.store.flush_touches()
    assert svc.store.get("alice", node.id).last_retrieved == node.created
    svc.recall("alice", "爬山")
    svc.store.flush_touches()
    assert svc.store.get("alice", node.id).last_retrieved == clock.t


def test_recency_weight_prefers_recently_retrieved(svc, clock, memory_location):
    old = remember(svc, "alice", "我养了一只猫").node
    clock.t += 30 * 86400
    new = remember(svc, "alice", "我养了一只狗").node
    only_recency = build_service(memory_location, embedder="hashed", clock=clock, weights=Weights(1.0, 0.0, 0.0))
    assert [n.id for n in only_recency.recall("alice", "猫", stateless=True).nodes] == [new.id, old.id]
    relevance = build_service(memory_location, embedder="hashed", clock=clock, weights=Weights(0.0, 1.0, 0.5))
    assert relevance.recall("alice", "猫", stateless=True).nodes[0].id == old.id
    only_recency.store.close()
    relevance.store.close()


# ---------------------------------------------------------------- embeddings
def test_hashed_embedder_is_deterministic_across_processes():
    code = (
        "from fay_ros.memory.embeddings import HashedNgramEmbedder;"
        "print(HashedNgramEmbedder().embed(['我不吃香菜 coriander'])[0][:16].tolist())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "123", "PATH": ""},
    )
    expected = HashedNgramEmbedder().embed(["我不吃香菜 coriander"])[0][:16].tolist()
    assert json.loads(out.stdout) == pytest.approx(expected)


def test_hashed_embedder_relates_shared_words_and_characters():
    e = HashedNgramEmbedder()
    v = e.embed(["我不吃香菜", "我不吃什么？", "今天天气很好", "I like hiking", "hiking in the mountains"])
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > 0.3 > abs(v[0] @ v[2])
    assert v[3] @ v[4] > abs(v[3] @ v[0])


@pytest.fixture(scope="module")
def use_embedder():
    return make_embedder("use")


def test_use_model_from_the_registry_package_is_semantic_and_multilingual(use_embedder):
    assert use_embedder.name == "use-multilingual-v3" and use_embedder.dim == 512
    v = use_embedder.embed(["我不吃香菜", "I don't eat coriander", "我住在上海", "我的饮食偏好"])
    assert v[0] @ v[1] > v[0] @ v[2] + 0.3  # same meaning across languages beats a shared language
    assert v[3] @ v[0] > v[3] @ v[2]


def test_unknown_embedder_choice_is_rejected():
    with pytest.raises(ValueError, match="expected one of auto, use, hashed"):
        make_embedder("word2vec")


# ---------------------------------------------------------------- policy
@pytest.mark.parametrize(
    "text, explicit",
    [
        ("记住我不吃香菜", True),
        ("以后晚上十点之后别叫我", True),
        ("别忘了明天给妈妈打电话", True),
        ("Remember that I don't eat coriander", True),
        ("from now on call me Lin", True),
        ("我的偏好是少糖", True),
        ("我喜欢咖啡", False),
        ("我今天吃了香菜", False),
        ("你还记得我吗？", False),
        ("你记住了吗？", False),
        ("Do you remember my name?", False),
        ("", False),
    ],
)
def test_explicit_request_detection(text, explicit):
    assert is_explicit_request(text) is explicit


@pytest.mark.parametrize(
    "text, correction",
    [
        ("其实我现在吃香菜了", True),
        ("我已经不喝咖啡了", True),
        ("Actually I eat coriander now", True),
        ("我今天吃了香菜", False),
        ("我现在在吃饭", False),
    ],
)
def test_explicit_correction_detection(text, correction):
    assert is_explicit_correction(text) is correction


def test_policy_decides_status_from_the_users_words():
    base = dict(owner="alice", content="用户不吃香菜", tags=["kind:preference"], key="coriander")
    assert decide_remember(RememberRequest(user_confirmed=True, **base), ["记住我不吃香菜"]).status == CONFIRMED
    assert decide_remember(RememberRequest(user_confirmed=False, **base), ["记住我不吃香菜"]).status == CANDIDATE
    downgraded = decide_remember(RememberRequest(user_confirmed=True, **base), ["我今天吃了香菜"])
    assert downgraded.status == CANDIDATE and "no explicit request" in downgraded.reason
    # nothing heard (an external agent, a family app): the flag is trusted
    assert decide_remember(RememberRequest(user_confirmed=True, **base), []).status == CONFIRMED
    # a correction counts only when it corrects a confirmed fact with the same key
    assert decide_remember(RememberRequest(user_confirmed=True, **base), ["其实我现在吃香菜了"]).status == CANDIDATE
    assert (
        decide_remember(
            RememberRequest(user_confirmed=True, **base), ["其实我现在吃香菜了"], corrects_confirmed_fact=True
        ).status
        == CONFIRMED
    )
    assert (
        decide_remember(RememberRequest(user_confirmed=True, **base), ["记住我不吃香菜"], verify_explicit=False).status
        == CONFIRMED
    )


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"owner": ""}, "guest has no private memory"),
        ({"owner": "   "}, "guest has no private memory"),
        ({"content": "  "}, "content is empty"),
        ({"content": "x" * 5000}, "at most 4000"),
        ({"node_type": "dream"}, "node_type 'dream'"),
        ({"importance": 11.0}, "importance 11.0"),
        ({"ttl": -1.0}, "ttl -1.0"),
        ({"tags": ["no namespace"]}, "tag 'no namespace'"),
        ({"tags": ["kind:gossip"]}, "unknown kind"),
        ({"tags": ["source:fay_reflection"]}, "reserved for reflections"),
    ],
)
def test_bad_remember_requests_are_refused_with_the_reason(svc, changes, message):
    req = dict(owner="alice", content="我不吃香菜", user_confirmed=True) | changes
    out = svc.remember(RememberRequest(**req))
    assert not out.success and message in out.message
    assert svc.store.count() == 0


def test_tags_are_normalised_and_reflection_inheritance_follows_fay():
    assert normalise_tags([" Kind:preference", "domain:diet", "domain:diet", ""]) == ["kind:preference", "domain:diet"]
    with pytest.raises(MemoryInputError):
        normalise_tags(["domain:ho\nme"])
    tags = inherited_tags(
        [
            ["domain:quant", "kind:event", "session:am", "source:claude_code", "symbol:AAPL"],
            ["domain:quant", "kind:error", "date:2026-04-27", "strategy:breakout", "persistent:true"],
        ]
    )
    # as Fay: the sources' source: and persistent: stay, their kind: and moment-bound tags go
    assert tags == [
        "domain:quant",
        "persistent:true",
        "source:claude_code",
        "strategy:breakout",
        "symbol:AAPL",
        "kind:insight",
        "source:fay_reflection",
    ]


def test_schema_description_names_kinds_namespaces_and_rules():
    desc = describe_schema()
    assert "rule" in desc["kinds"]
    assert {"kind", "source", "persistent", "domain", "session", "date"} <= set(desc["tag_namespaces"])
    assert any("guest" in rule for rule in desc["rules"])
    assert set(desc["statuses"]) == {CONFIRMED, CANDIDATE, SUPERSEDED}


# ---------------------------------------------------------------- issue 19: backends
def test_a_write_appends_to_the_owners_index_and_never_reloads_it(tmp_path, clock):
    svc = build_service(tmp_path / "m.db", embedder="hashed", clock=clock)
    remember(svc, "alice", "我喜欢爬山", tags=["kind:preference"])
    index = svc.store.index("alice")
    for i in range(5):
        remember(svc, "alice", f"第 {i} 件事", tags=["kind:event"])
    assert svc.store.index("alice") is index and index.count == 6
    svc.store.close()


def _same_stream(stores, rng, count, dim=512):
    vectors = rng.normal(size=(count, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    kinds = ["kind:preference", "kind:fact", "kind:event"]
    nodes = [
        MemoryNode(
            owner="o",
            content=f"c{i}",
            importance=float(rng.integers(1, 11)),
            created=1e9 - i,
            last_retrieved=1e9 - float(rng.integers(0, 2000)) * 3600,
            id=f"n{i:05d}",
            tags=[kinds[i % 3], f"domain:d{i % 5}"],
            status="candidate" if i % 11 == 0 else "confirmed",
        )
        for i in range(count)
    ]
    for store in stores:
        store.add_many(nodes, vectors)
    return vectors


@pytest.mark.parametrize("weights", [Weights(0.8, 0.5, 0.5), Weights(0.0, 1.0, 0.5), Weights(1.0, 0.0, 0.2)])
def test_postgresql_ranks_like_sqlite(tmp_path, postgres_url, weights):
    """Up to EXACT_LIMIT matches PostgreSQL scores every one: the SQLite ranking and scores.
    Beyond, relevance is normalised by HNSW's nearest and farthest neighbours (estimates):
    the top 10 agree with SQLite's (docs/BENCHMARKS.md measures it on 100k memories)."""
    from fay_ros.memory.pg_store import EXACT_LIMIT

    now = 1e9
    sqlite = open_store(tmp_path / "m.db", HashedNgramEmbedder(), clock=lambda: now)
    pg = open_store(postgres_url, HashedNgramEmbedder(), clock=lambda: now)
    rng = np.random.default_rng(19)
    vectors = _same_stream([sqlite, pg], rng, EXACT_LIMIT + 1500)
    overlaps = []
    try:
        for k in range(8):
            query = vectors[k * 97] * 0.5 + rng.normal(size=512).astype(np.float32) * 0.05
            query /= np.linalg.norm(query)
            # tags_all=kind:fact: fewer than EXACT_LIMIT matches, every one scored
            want = sqlite.recall_ids("o", query, 10, weights=weights, stateless=True, tags_all=["kind:fact"])
            got = pg.recall_ids("o", query, 10, weights=weights, stateless=True, tags_all=["kind:fact"])
            assert [i for i, _ in got] == [i for i, _ in want]
            assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
            for filters in ({}, {"tags_any": ["domain:d1", "domain:d2", "domain:d3"]}):
                want = sqlite.recall_ids("o", query, 10, weights=weights, stateless=True, **filters)
                got = pg.recall_ids("o", query, 10, weights=weights, stateless=True, **filters)
                overlaps.append(len({i for i, _ in got} & {i for i, _ in want}) / 10)
                assert np.allclose([s for _, s in got], [s for _, s in want], atol=0.02)
    finally:
        sqlite.close()
        pg.close()
    assert np.mean(overlaps) >= 0.9 and min(overlaps) >= 0.7, overlaps


def test_robots_with_different_embedders_never_compare_their_vectors(postgres_url, clock):
    robot_a = build_service(postgres_url, embedder=HashedNgramEmbedder(512), clock=clock)
    robot_b = build_service(postgres_url, embedder=HashedNgramEmbedder(256), clock=clock)
    try:
        written = remember(robot_a, "alice", "我的猫叫咪咪", tags=["kind:fact"], key="family:cat").node
        # robot_b (another model, another dimension) finds it with its own vector of the text
        assert [n.id for n in robot_b.recall("alice", "猫叫什么").nodes] == [written.id]
        models = sorted(m for n, vecs in robot_b.store.export_rows("", 10) if n.id == written.id for m, _v in vecs)
        assert models == ["hashed-ngram-v1-256", "hashed-ngram-v1-512"]
        # and its maintenance gives every memory of another model its own vector
        remember(robot_a, "alice", "我喜欢喝茶", tags=["kind:preference"])
        assert robot_b.store.maintain_embeddings() == 1
    finally:
        robot_a.store.close()
        robot_b.store.close()


def test_a_postgresql_database_from_a_newer_version_is_refused_untouched(postgres_url):
    import psycopg

    from fay_ros.memory.pg_schema import MIGRATIONS_TABLE

    open_store(postgres_url, HashedNgramEmbedder(), clock=lambda: 0.0).close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"INSERT INTO {MIGRATIONS_TABLE} (name, applied) VALUES ('0099_future', 0)")
    with pytest.raises(schema.SchemaError, match="newer fay_ros.*0099_future"):
        open_store(postgres_url, HashedNgramEmbedder(), clock=lambda: 0.0)


def test_an_unreachable_postgresql_is_a_clear_error_without_the_password():
    with pytest.raises(schema.SchemaError) as err:
        open_store("postgresql://robot:pw-very-secret@127.0.0.1:1/memory", HashedNgramEmbedder(), clock=lambda: 0.0)
    assert "cannot connect" in str(err.value) and "pw-very-secret" not in str(err.value)
    assert "postgresql://127.0.0.1:1/memory" in str(err.value)


def test_a_reflection_over_many_sources_keeps_at_most_max_tags_the_shared_ones_first():
    from fay_ros.memory.model import MAX_TAGS, REFLECTION_TAGS, inherited_tags

    sources = [["domain:home", "persistent:true", f"topic:t{i}", f"session:s{i}", "kind:fact"] for i in range(60)]
    tags = inherited_tags(sources)
    assert len(tags) == MAX_TAGS and tags[-len(REFLECTION_TAGS) :] == list(REFLECTION_TAGS)
    assert {"domain:home", "persistent:true"} <= set(tags)  # shared by every source: kept
    assert not any(t.startswith(("session:", "kind:fact")) for t in tags)
