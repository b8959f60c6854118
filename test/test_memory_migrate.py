"""`fay-ros memory migrate`: SQLite -> PostgreSQL -> SQLite with every memory, vector and
per-owner state; idempotent (a second run copies nothing) and resumable (an interrupted run
is completed by the next)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fay_ros.memory.backend import open_store
from fay_ros.memory.embeddings import HashedNgramEmbedder
from fay_ros.memory.migrate import migrate
from fay_ros.memory.model import MemoryNode
from fay_ros.memory.policy import RememberRequest
from fay_ros.memory.service import build_service


def _fill(location, clock):
    svc = build_service(location, embedder="hashed", clock=clock)
    for i in range(12):
        clock.t += 60
        svc.remember(
            RememberRequest(
                owner="alice" if i % 3 else "bob",
                content=f"第 {i} 件事：我喜欢第 {i} 种花",
                user_confirmed=True,
                tags=["kind:preference"],
                key=f"flower{i % 4}",
            )
        )
    node = MemoryNode(owner="alice", content="from Fay", id="fay-node", created=clock.t)
    svc.store.add_many([node], extra_vectors=[("fay-node", "fay:bge", [0.1, 0.2, 0.3])])
    svc.store.set_state("profiles", "alice", portrait="爱花的人", updated=clock.t, rebuilds=2)
    svc.store.close()


def _snapshot(location, clock):
    store = open_store(location, HashedNgramEmbedder(), clock=clock)
    try:
        nodes = {
            n.id: (n.owner, n.content, n.status, n.superseded_by, tuple(n.tags), n.importance, n.created)
            for owner in ("alice", "bob")
            for n in store.list(owner, statuses=[], include_expired=True)
        }
        vectors = {n.id: sorted(m for m, _v in vecs) for n, vecs in store.export_rows("", 1000)}
        recalled = [n.id for n in store.recall("alice", "我喜欢花", n=5, stateless=True)]
        return nodes, vectors, recalled, store.get_state("profiles", "alice")["portrait"]
    finally:
        store.close()


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "memory", "--embedder", "hashed", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_migrate_there_and_back_is_complete_and_idempotent(tmp_path, postgres_url, clock):
    source = f"sqlite:///{tmp_path / 'robot.db'}"
    _fill(source, clock)
    before = _snapshot(source, clock)
    assert len(before[0]) == 13 and before[1]["fay-node"] == ["fay:bge", "hashed-ngram-v1-512"]

    out = cli("migrate", "--from", source, "--to", postgres_url)
    assert out.returncode == 0, out.stderr
    assert "migrated 13 of 13 memories (0 already there)" in out.stdout
    assert "13/13 memories (100%)" in out.stderr  # the progress bar
    assert "host=" not in out.stderr + out.stdout  # the URL is shown without its query
    assert _snapshot(postgres_url, clock) == before

    again = cli("migrate", "--from", source, "--to", postgres_url)
    assert again.returncode == 0 and "migrated 0 of 13 memories (13 already there)" in again.stdout
    assert _snapshot(postgres_url, clock) == before

    back = f"sqlite:///{tmp_path / 'back.db'}"
    out = cli("migrate", "--from", postgres_url, "--to", back)
    assert out.returncode == 0, out.stderr
    assert _snapshot(back, clock) == before


def test_an_interrupted_migration_is_completed_by_the_next_run(tmp_path, postgres_url, clock):
    source = str(tmp_path / "robot.db")
    _fill(source, clock)
    src = open_store(source, HashedNgramEmbedder(), clock=clock)
    dst = open_store(postgres_url, HashedNgramEmbedder(), clock=clock)

    def interrupt(done):
        if done >= 4:
            raise KeyboardInterrupt

    try:
        with pytest.raises(KeyboardInterrupt):
            migrate(src, dst, page=4, progress=interrupt)
        assert dst.count() == 4
        report = migrate(src, dst, page=4)
        assert (report.copied, report.present, dst.count()) == (9, 4, 13)
    finally:
        src.close()
        dst.close()


def test_migrate_reports_a_bad_url_without_its_password(tmp_path):
    out = cli("migrate", "--from", str(tmp_path / "x.db"), "--to", "postgresql://robot:s3cret-pw@127.0.0.1:1/memory")
    assert out.returncode == 2 and "--to" in out.stderr and "s3cret-pw" not in out.stderr + out.stdout
    out = cli("migrate", "--from", "mysql://db/memory", "--to", str(tmp_path / "y.db"))
    assert out.returncode == 2 and "unknown memory database URL" in out.stderr
