"""Several robots on one memory: two memory node processes (namespaces /robot_a and /robot_b)
on one PostgreSQL database started by the harness (conftest.postgres_url).

- concurrent confirmed writes of one owner + kind + key through both robots end with exactly
  one active value, every other one superseded by it;
- a forget on one robot while the other recalls: no recall sent after the forget was
  acknowledged returns the forgotten memory;
- kill -9 of a robot's memory node loses no acknowledged write (PostgreSQL's durability).
"""

from __future__ import annotations

import threading
import time

import pytest

from fay_msgs.srv import Forget, Recall, Remember
from fay_ros.common import topics
from fay_ros.memory.backend import open_store
from fay_ros.memory.embeddings import HashedNgramEmbedder
from fay_ros.memory.model import CONFIRMED, SUPERSEDED
from harness import NodeProcess, RosProbe, wait_until


@pytest.fixture
def probe():
    probe = RosProbe("fleet_probe", namespace="/")
    yield probe
    probe.close()


@pytest.fixture
def robots(postgres_url, launch_node, probe):
    """Two memory nodes on one database, ready."""
    nodes = {}
    for name in ("robot_a", "robot_b"):
        nodes[name] = launch_node(
            "fay_ros.nodes.memory",
            {"db_url": postgres_url, "embedder": "hashed", "record_conversations": False},
            namespace=f"/{name}",
        )
    for proc in nodes.values():
        proc.wait_ready(timeout=60, probe=probe)
    return nodes


class Caller:
    """Asynchronous service calls to one robot's memory node (several in flight at once)."""

    def __init__(self, probe: RosProbe, robot: str, srv, name: str) -> None:
        self.client = probe.node.create_client(srv, f"/{robot}/{name}")
        self.srv = srv
        assert self.client.wait_for_service(timeout_sec=30), f"/{robot}/{name} not available"
        # requests in flight are never re-sent (a copy could reorder the writes under test): first
        # one the server refuses, so their answers go to a response reader it has matched
        probe.warm_up(self.client, srv, f"/{robot}/{name}", timeout=30)

    def send(self, **fields):
        done = threading.Event()
        future = self.client.call_async(self.srv.Request(**fields))
        future.add_done_callback(lambda _f: done.set())
        return future, done


def _result(call, timeout: float = 30.0):
    future, done = call
    assert done.wait(timeout), "a memory service did not answer"
    return future.result()


def test_concurrent_supersedes_of_one_key_end_with_one_active_value(robots, probe, postgres_url):
    writers = [Caller(probe, robot, Remember, topics.SRV_REMEMBER) for robot in robots]
    for round_ in range(3):
        calls = []
        for i in range(8):  # interleaved: both robots write the same key at once
            for k, writer in enumerate(writers):
                calls.append(
                    writer.send(
                        owner="alice",
                        content=f"我住在第 {round_}-{i}-{k} 号",
                        user_confirmed=True,
                        tags=["kind:fact"],
                        key="address",
                    )
                )
        answers = [_result(c) for c in calls]
        assert all(a.success for a in answers), [a.message for a in answers if not a.success]
        store = open_store(postgres_url, HashedNgramEmbedder(), clock=time.time)
        try:
            keyed = store.find_keyed("alice", "fact", "address", [CONFIRMED, SUPERSEDED, "candidate"])
        finally:
            store.close()
        active = [n for n in keyed if n.status != SUPERSEDED]
        assert len(active) == 1, [(n.content, n.status) for n in keyed]
        assert len(keyed) == 16 * (round_ + 1)
        assert all(n.superseded_by for n in keyed if n.status == SUPERSEDED)


def test_forget_on_one_robot_is_never_recalled_by_the_other_afterwards(robots, probe):
    remember = Caller(probe, "robot_a", Remember, topics.SRV_REMEMBER)
    forget = Caller(probe, "robot_a", Forget, topics.SRV_FORGET)
    recall = Caller(probe, "robot_b", Recall, topics.SRV_RECALL)
    secret = _result(
        remember.send(
            owner="alice", content="我的银行卡密码提示是生日", user_confirmed=True, tags=["kind:fact"], key="pin_hint"
        )
    ).node
    for i in range(5):
        assert _result(
            remember.send(owner="alice", content=f"我喜欢第 {i} 种茶", user_confirmed=True, tags=["kind:preference"])
        ).success

    results: list[tuple[float, set[str]]] = []  # (time the recall was sent, ids returned)
    stop = threading.Event()

    def recall_loop() -> None:
        while not stop.is_set():
            sent = time.monotonic()
            answer = _result(recall.send(owner="alice", query="银行卡密码", n=10))
            results.append((sent, {n.id for n in answer.nodes}))

    thread = threading.Thread(target=recall_loop)
    thread.start()
    try:
        wait_until(lambda: any(secret.id in ids for _t, ids in results), 30, message="robot_b recalled the memory")
        answer = _result(forget.send(owner="alice", id=secret.id))
        acknowledged = time.monotonic()
        assert answer.success, answer.message
        wait_until(
            lambda: sum(1 for t, _ids in results if t > acknowledged) >= 20, 60, message="recalls after the forget"
        )
    finally:
        stop.set()
        thread.join(30)
    after = [ids for t, ids in results if t > acknowledged]
    assert all(secret.id not in ids for ids in after)
    assert all(len(ids) == 5 for ids in after)  # the other memories are still recalled


def test_every_acknowledged_write_survives_kill_9_on_postgresql(probe, postgres_url):
    proc = NodeProcess("fay_ros.nodes.memory", {"db_url": postgres_url, "embedder": "hashed"}, namespace="/crash")
    try:
        proc.wait_ready(timeout=60, probe=probe)
        writer = Caller(probe, "crash", Remember, topics.SRV_REMEMBER)
        acked: list[str] = []
        inflight = []
        for sent in range(200):
            inflight.append(
                writer.send(owner="crash", content=f"第 {sent} 条记忆：一次写入压力测试", user_confirmed=True)
            )
            if sent >= 4:
                future, done = inflight[sent - 4]
                if done.wait(30) and future.result().success:
                    acked.append(future.result().node.id)
            if len(acked) >= 40:
                break
        proc.kill()  # SIGKILL with requests still in flight
        for future, done in inflight:
            if done.is_set() and future.result() is not None and future.result().success:
                acked.append(future.result().node.id)
    finally:
        proc.stop()
    store = open_store(postgres_url, HashedNgramEmbedder(), clock=time.time)
    try:
        stored = {n.id for n in store.list("crash", statuses=[], limit=None)}
    finally:
        store.close()
    assert acked and set(acked) <= stored


def test_a_robot_rides_out_the_database_dropping_its_connection(postgres_url, launch_node, probe):
    """The server ends the memory node's session (what a database restart or a network cut
    looks like to it): the call that meets the broken connection fails cleanly, the node
    lives on, the next call reconnects, and nothing acknowledged is lost."""
    import psycopg

    node = launch_node(
        "fay_ros.nodes.memory",
        {"db_url": postgres_url, "embedder": "hashed", "record_conversations": False},
        namespace="/robot_c",
    )
    node.wait_ready(timeout=60, probe=probe)
    remember = Caller(probe, "robot_c", Remember, topics.SRV_REMEMBER)
    recall = Caller(probe, "robot_c", Recall, topics.SRV_RECALL)
    stored = _result(
        remember.send(
            owner="alice", content="Alice's cat is called Mimi", user_confirmed=True, tags=["kind:fact"], key="cat_name"
        )
    )
    assert stored.success, stored.message
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        ended = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()[0]
    assert ended >= 1, "the memory node had no session to end"

    answers = []
    for _ in range(3):
        answers.append(_result(recall.send(owner="alice", query="cat", n=5)))
        if answers[-1].success:
            break
    assert answers[-1].success, [a.message for a in answers]
    assert len(answers) <= 2, "more than one call failed after the connection dropped"
    if len(answers) == 2:
        assert "nothing was changed" in answers[0].message and postgres_url not in answers[0].message
    assert [n.id for n in answers[-1].nodes] == [stored.node.id]
    again = _result(
        remember.send(
            owner="alice", content="Alice's cat is called Momo", user_confirmed=True, tags=["kind:fact"], key="cat_name"
        )
    )
    assert again.success, again.message
    assert node.alive(), "the memory node died"
