"""PostgreSQL bulk writes by COPY (add_many, import_rows): every field, tag and vector comes
back exactly as given, extra vectors replace by node and model, a failed load leaves nothing
behind, and an import skips the ids already there in the given order. A bulk load may build
the vector index once afterwards (vector_index_deferred), as a large migration into an empty
database does."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest

from fay_ros.memory.embeddings import HashedNgramEmbedder
from fay_ros.memory.model import CANDIDATE, MemoryNode
from fay_ros.memory.pg_schema import hnsw_build_memory, vector_index_name
from fay_ros.memory.pg_store import PostgresMemoryStore

# Text a hand-made COPY or array literal gets wrong: separators, quotes, braces, NULL, Chinese.
AWKWARD = ["kind:fact", 'say "hi", {ok}', "a\\b\tc\nd", "NULL", "", "领域:花园"]


@pytest.fixture
def store(postgres_url, clock):
    s = PostgresMemoryStore(postgres_url, HashedNgramEmbedder(), clock=clock)
    yield s
    s.close()


def _nodes(count: int, owner: str = "alice") -> list[MemoryNode]:
    return [
        MemoryNode(
            owner=owner if i % 3 else "bob",
            content=f'第 {i} 条, "quoted"\t{{braces}}\\ NULL',
            node_type="reflection" if i % 2 else "observation",
            importance=1.5 + i,
            created=1_700_000_000.123456 + i,
            last_retrieved=1_700_000_100.5 + i,
            pointer_ids=[f"p{i}", "p,x"] if i % 2 else [],
            tags=AWKWARD[: i % len(AWKWARD) + 1],
            status=CANDIDATE if i % 4 == 0 else "confirmed",
            key=f"k{i}",
            source_session=f"s{i}",
            source_turn=i,
            expires=0.0 if i % 5 else 1_800_000_000.25,
            origin="fay" if i % 2 else "",
            superseded_by="",
            id=f"bulk-{i:04d}",
        )
        for i in range(count)
    ]


def _stored(store: PostgresMemoryStore, nodes: list[MemoryNode]) -> list[MemoryNode]:
    found = {
        n.id: n for owner in {n.owner for n in nodes} for n in store.list(owner, statuses=[], include_expired=True)
    }
    return [found[n.id] for n in nodes]


def test_add_many_round_trips_every_field_tag_and_vector_exactly(store):
    nodes = _nodes(60)
    vectors = np.random.default_rng(3).normal(size=(60, store.embedder.dim)).astype(np.float32)
    store.add_many(nodes, vectors)

    assert _stored(store, nodes) == nodes
    for owner in ("alice", "bob"):
        mine = [k for k, n in enumerate(nodes) if n.owner == owner]
        got = store.vectors(owner, [nodes[k] for k in mine])
        assert got.dtype == np.float32 and np.array_equal(got, vectors[mine])  # bit for bit
    rows = store.conn.execute("SELECT node_id, owner, dim FROM embeddings ORDER BY node_id").fetchall()
    assert rows == sorted((n.id, n.owner, store.embedder.dim) for n in nodes)
    # kind is derived from the tags as a single insert derives it (keyed lookups use it)
    assert [n.id for n in store.find_keyed("alice", "fact", "k1", ["confirmed"])] == ["bulk-0001"]
    # insertion order is kept (ties in recall are broken by it)
    assert [r[0] for r in store.conn.execute("SELECT id FROM nodes ORDER BY seq")] == [n.id for n in nodes]


def test_add_many_embeds_when_given_no_vectors_and_keeps_extra_vectors(store):
    nodes = _nodes(4)
    store.add_many(nodes[:2])
    store.add_many(
        nodes[2:],
        extra_vectors=[
            ("bulk-0003", "fay:bge", [0.1, 0.2, 0.3]),
            ("bulk-0003", "fay:bge", [0.5, 0.25]),  # the later one of a node + model wins
            ("bulk-0000", "fay:bge", [1.0, 2.0, 3.0, 4.0]),  # a node stored by an earlier call
        ],
    )
    assert np.array_equal(store.vectors("alice", [nodes[2]])[0], store.embedder.embed([nodes[2].content])[0])
    assert np.array_equal(store.vectors("bob", [nodes[0]])[0], store.embedder.embed([nodes[0].content])[0])
    extra = store.conn.execute(
        "SELECT node_id, owner, dim, vector FROM embeddings WHERE model = 'fay:bge' ORDER BY node_id"
    ).fetchall()
    assert [(r[0], r[1], r[2], r[3].to_list()) for r in extra] == [
        ("bulk-0000", "bob", 4, [1.0, 2.0, 3.0, 4.0]),
        ("bulk-0003", "bob", 2, [0.5, 0.25]),
    ]


def test_a_failed_add_many_leaves_nothing_behind(store):
    store.add_many(_nodes(2))
    with pytest.raises(psycopg.errors.UniqueViolation):  # an id already stored
        store.add_many(_nodes(5))
    with pytest.raises(KeyError, match="missing-node"):  # a vector of a memory nowhere
        store.add_many(_nodes(5)[2:], extra_vectors=[("missing-node", "fay:bge", [1.0])])
    assert store.count() == 2
    assert store.conn.execute("SELECT count(*) FROM embeddings").fetchone() == (2,)


def test_import_rows_skips_ids_already_here_and_keeps_the_given_order(store):
    nodes = _nodes(8)
    store.add_many(nodes[:3])
    rng = np.random.default_rng(5)
    rows = [
        (
            n,
            [
                (store.embedder.name, rng.normal(size=store.embedder.dim).astype(np.float32)),
                ("fay:bge", np.array([float(i), 0.5], dtype=np.float32)),
            ],
        )
        for i, n in enumerate(nodes)
    ]
    rows.reverse()  # not by id: the insertion order must be the given one

    assert store.import_rows(rows) == 5
    assert store.import_rows(rows) == 0
    assert _stored(store, nodes) == nodes
    assert [r[0] for r in store.conn.execute("SELECT id FROM nodes ORDER BY seq")] == [
        "bulk-0000",
        "bulk-0001",
        "bulk-0002",
        "bulk-0007",
        "bulk-0006",
        "bulk-0005",
        "bulk-0004",
        "bulk-0003",
    ]
    by_id = {n.id: vecs for n, vecs in store.export_rows("", 100)}
    for node, vecs in rows:
        got = dict(by_id[node.id])
        if node.id in ("bulk-0000", "bulk-0001", "bulk-0002"):  # already here: left alone
            assert set(got) == {store.embedder.name}
            assert np.array_equal(got[store.embedder.name], store.embedder.embed([node.content])[0])
        else:
            assert set(got) == {store.embedder.name, "fay:bge"}
            for model, vec in vecs:
                assert np.array_equal(got[model], vec)


def _vector_indexes(store: PostgresMemoryStore) -> list[str]:
    return [
        r[0]
        for r in store.conn.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'embeddings' AND indexdef LIKE '%USING hnsw%'"
        )
    ]


def test_a_deferred_vector_index_is_built_after_the_load_and_left_to_the_next_start_on_failure(
    store, postgres_url, clock
):
    index = vector_index_name(store.embedder.name, store.embedder.dim)
    assert _vector_indexes(store) == [index]
    with store.vector_index_deferred(build_workers=1):
        store.add_many(_nodes(30))
        assert _vector_indexes(store) == []
    assert _vector_indexes(store) == [index]
    query = store.embedder.embed([_nodes(30)[7].content])[0]
    assert store.recall("alice", "", n=1, query_vector=query, stateless=True, statuses=[])[0].id == "bulk-0007"

    with pytest.raises(RuntimeError, match="interrupted"):
        with store.vector_index_deferred():
            store.add_many(_nodes(40)[30:])
            raise RuntimeError("interrupted")
    assert _vector_indexes(store) == []  # no half-hour build for a load that failed
    again = PostgresMemoryStore(postgres_url, HashedNgramEmbedder(), clock=clock)
    try:
        assert _vector_indexes(again) == [index]  # the next start builds it
    finally:
        again.close()


def test_hnsw_build_memory_holds_the_whole_graph():
    assert hnsw_build_memory(0, 512) == "64MB"
    assert 3_000 <= int(hnsw_build_memory(1_000_000, 512)[:-2]) <= 4_000  # ~2.7 kB a vector and headroom


def test_a_large_migration_into_an_empty_database_builds_the_index_once(tmp_path, store, monkeypatch, clock):
    import fay_ros.memory.migrate as migration
    from fay_ros.memory.store import MemoryStore

    source = MemoryStore(tmp_path / "robot.db", HashedNgramEmbedder(), clock=clock)
    built = []
    deferred = store.vector_index_deferred
    monkeypatch.setattr(store, "vector_index_deferred", lambda: (built.append(True), deferred())[1])
    monkeypatch.setattr(migration, "DEFER_INDEX_FROM", 20)
    try:
        source.add_many(_nodes(19))
        assert migration.migrate(source, store, page=7).copied == 19
        assert built == []  # below DEFER_INDEX_FROM: grown row by row
        source.add_many(_nodes(45)[19:])
        assert migration.migrate(source, store, page=7).copied == 26
        assert built == []  # the target was not empty
        store.conn.execute("TRUNCATE nodes CASCADE")
        report = migration.migrate(source, store, page=7)
        assert (report.copied, built, _vector_indexes(store)) == (
            45,
            [True],
            [vector_index_name(store.embedder.name, store.embedder.dim)],
        )
        assert _stored(store, _nodes(45)) == _nodes(45)
    finally:
        source.close()
