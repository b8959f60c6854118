"""A Fay user's memory carries over (issues 18 and 21), on both backends: the import keeps
every vector, Fay's order and every tag; recall filters by node type and answers in time
order; memory/confirm's core takes an operator's decision by id; `fay-ros memory` takes its
database options before or after the action.

The fixture is written here in Fay's format (memory_stream/nodes.json as Fay dumps it, with
json.dump(..., ensure_ascii=False, indent=2), and embeddings.json keyed by the raw content):
an older stream without datetimes, contents ending in spaces, reflections with pointers and
inherited tags.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from fay_ros.memory.fay_import import confirm_imported_reflections, import_fay, stream_times
from fay_ros.memory.model import CANDIDATE, CONFIRMED, SUPERSEDED
from fay_ros.memory.policy import RememberRequest
from fay_ros.memory.service import build_service

# Fay's stream in creation order; no node has a datetime (as before Fay added it).
FAY_STREAM = [
    {
        "node_id": 0,
        "node_type": "observation",
        "content": "主人每天早上七点起床 ",
        "importance": 5,
        "created": 0,
        "last_retrieved": 3,
        "pointer_id": None,
        "tags": ["domain:life_assistant", "kind:fact", "source:user"],
    },
    {
        "node_id": 1,
        "node_type": "conversation",
        "content": "主人：今天股市怎么样？\nFay：A股震荡走低。  ",
        "importance": 4,
        "created": 1,
        "last_retrieved": 1,
        "pointer_id": None,
        "tags": [],
    },
    {
        "node_id": 2,
        "node_type": "observation",
        "content": "每小时整点检查所有持仓策略是否有未触发的止损单",
        "importance": 9,
        "created": 2,
        "last_retrieved": 2,
        "pointer_id": None,
        "tags": ["domain:quant", "kind:rule", "persistent:true", "schedule:hourly", "source:user"],
    },
    {
        "node_id": 3,
        "node_type": "reflection",
        "content": "主人作息规律，重视风控 ",
        "importance": 8,
        "created": 3,
        "last_retrieved": 3,
        "pointer_id": [0, 2],
        "tags": [
            "domain:life_assistant",
            "domain:quant",
            "persistent:true",
            "source:user",
            "kind:insight",
            "source:fay_reflection",
        ],
    },
    {
        "node_id": 4,
        "node_type": "observation",
        "content": "AAPL breakout 策略触发买入",
        "importance": 7,
        "created": 4,
        "last_retrieved": 4,
        "pointer_id": None,
        "tags": ["domain:quant", "kind:event", "source:claude_code", "symbol:AAPL"],
    },
    {
        "node_id": 5,
        "node_type": "reflection",
        "content": "breakout 策略需要加 ATR 滤波",
        "importance": 8,
        "created": 5,
        "last_retrieved": 5,
        "pointer_id": [4, 99],
        "tags": ["domain:quant", "source:claude_code", "symbol:AAPL", "kind:insight", "source:fay_reflection"],
    },
]
DIM = 8


def fay_vector(position: int) -> list[float]:
    return [round(0.1 * (position + 1) + 0.01 * i, 4) for i in range(DIM)]


def write_fay_stream(folder, nodes=FAY_STREAM, keys=None):
    """memory_stream/ as Fay writes it; `keys`: the embeddings.json key of each node (default:
    its raw content, as Fay keys them)."""
    stream = folder / "memory_stream"
    stream.mkdir(parents=True, exist_ok=True)
    (stream / "nodes.json").write_text(json.dumps(nodes, ensure_ascii=False, indent=2), encoding="utf-8")
    keys = keys or [n["content"] for n in nodes]
    (stream / "embeddings.json").write_text(
        json.dumps({key: fay_vector(i) for i, key in enumerate(keys)}, ensure_ascii=False), encoding="utf-8"
    )
    return stream / "nodes.json"


@pytest.fixture
def svc(memory_location, clock):
    service = build_service(memory_location, embedder="hashed", clock=clock)
    yield service
    service.store.close()


def fay_vectors_stored(store, owner: str) -> dict[str, np.ndarray]:
    """origin -> the Fay vector kept beside the node (model fay-<dim>), from the backend's export."""
    out = {}
    after = ""
    while page := store.export_rows(after, 100):
        for node, vectors in page:
            fay = [vec for model, vec in vectors if model == f"fay-{DIM}"]
            if node.owner == owner and fay:
                out[node.origin] = fay[0]
        after = page[-1][0].id
    return out


# ---------------------------------------------------------------- import keeps what Fay had
def test_import_keeps_every_vector_the_order_and_the_tags(svc, tmp_path, clock):
    path = write_fay_stream(tmp_path / "fay")
    report = import_fay(svc.store, path, "alice")
    assert (report.imported, report.skipped, report.fay_vectors) == (6, 0, 6)
    assert report.missing_vectors == [] and report.normalised_vectors == [], "found by the raw text"
    assert report.undated == 6 and report.dangling == [("5", "99")]
    assert report.by_status == {"observation confirmed": 3, "conversation confirmed": 1, "reflection candidate": 2}
    text = report.summary("alice")
    assert "imported 6 Fay memory nodes" in text and "node 5: pointer to 99 dropped" in text
    assert "--all-reflections" in text

    # every vector kept, exactly as Fay had it
    kept = fay_vectors_stored(svc.store, "alice")
    assert set(kept) == {f"fay:{n['node_id']}" for n in FAY_STREAM}
    for i, node in enumerate(FAY_STREAM):
        assert np.allclose(kept[f"fay:{node['node_id']}"], fay_vector(i))

    nodes = {n.origin: n for n in svc.store.list("alice", statuses=[])}
    # Fay's order, though no node has a datetime: oldest first, all before the import
    created = [nodes[f"fay:{n['node_id']}"].created for n in FAY_STREAM]
    assert created == sorted(created) and len(set(created)) == len(created) and created[-1] < clock.t
    # tags intact: source: and persistent: on reflections too; contents without the trailing spaces
    for fay in FAY_STREAM:
        node = nodes[f"fay:{fay['node_id']}"]
        assert node.tags == (fay["tags"] or ["source:fay_import"]), node.origin
        assert node.content == fay["content"].strip()
    assert nodes["fay:3"].status == CANDIDATE and nodes["fay:3"].pointer_ids == [nodes["fay:0"].id, nodes["fay:2"].id]
    assert nodes["fay:5"].pointer_ids == [nodes["fay:4"].id]

    # recall with a node-type filter, and in time order
    reflections = svc.recall("alice", "策略", node_type="reflection", include_candidates=True, stateless=True)
    assert {n.origin for n in reflections.nodes} == {"fay:3", "fay:5"}
    assert svc.recall("alice", "策略", node_type="reflection").nodes == [], "candidates never answer"
    in_order = svc.recall("alice", "", time_ordered=True, include_candidates=True, n=100)
    assert [n.origin for n in in_order.nodes] == [f"fay:{n['node_id']}" for n in FAY_STREAM]
    last_two = svc.recall("alice", "", time_ordered=True, node_type="observation", n=2)
    assert [n.origin for n in last_two.nodes] == ["fay:2", "fay:4"]
    tagged = svc.recall(
        "alice", "", time_ordered=True, tags_any=["symbol:AAPL", "schedule:hourly"], include_candidates=True
    )
    assert [n.origin for n in tagged.nodes] == ["fay:2", "fay:4", "fay:5"]
    ranked_then_ordered = svc.recall("alice", "breakout 策略", time_ordered=True, n=2, include_candidates=True)
    assert [n.created for n in ranked_then_ordered.nodes] == sorted(n.created for n in ranked_then_ordered.nodes)

    again = import_fay(svc.store, path, "alice")
    assert (again.imported, again.skipped) == (0, 6)
    assert again.skipped_nodes[0] == ("0", f"already imported as {nodes['fay:0'].id} ({CONFIRMED})")


def test_a_vector_keyed_by_other_whitespace_is_found_by_the_normalised_text(svc, tmp_path):
    keys = [n["content"] for n in FAY_STREAM]
    keys[0] = "主人每天早上七点起床"  # the key lost its trailing space
    keys[1] = "主人：今天股市怎么样？ Fay：A股震荡走低。"  # newline and spaces as one space
    keys[4] = "ＡＡＰＬ breakout 策略触发买入"  # full-width letters
    del keys[5]  # no vector at all
    path = write_fay_stream(tmp_path / "fay", keys=keys + ["an entry of no node"])
    report = import_fay(svc.store, path, "alice")
    assert report.normalised_vectors == ["0", "1", "4"] and report.missing_vectors == ["5"]
    assert report.fay_vectors == 5 and "no Fay vector in embeddings.json for node(s) 5" in report.summary("alice")
    assert set(fay_vectors_stored(svc.store, "alice")) == {"fay:0", "fay:1", "fay:2", "fay:3", "fay:4"}


def test_undated_nodes_are_placed_between_their_dated_neighbours():
    assert stream_times([None, None], now=100.0) == [98.0, 99.0]
    assert stream_times([None, 50.0, None, None, 80.0, None], now=1000.0) == [49.0, 50.0, 60.0, 70.0, 80.0, 81.0]
    times = stream_times([10.0, None, 10.0], now=1000.0)  # no room between equal neighbours: still in order
    assert times[0] < times[1] and times[1] > times[2]


def test_imported_reflections_are_confirmed_in_bulk_after_review(svc, tmp_path):
    import_fay(svc.store, write_fay_stream(tmp_path / "fay"), "alice")
    own = svc.remember(
        RememberRequest(owner="alice", content="主人可能喜欢咖啡", node_type="reflection", tags=["kind:insight"])
    )  # not from Fay: left for its own review
    outcomes = confirm_imported_reflections(svc, "alice")
    assert [o.message for o in outcomes] == ["confirmed", "confirmed"]
    statuses = {n.origin or n.content: n.status for n in svc.store.list("alice", statuses=[])}
    assert statuses["fay:3"] == statuses["fay:5"] == CONFIRMED and statuses["主人可能喜欢咖啡"] == CANDIDATE
    assert own.node.status == CANDIDATE
    assert confirm_imported_reflections(svc, "alice") == []
    assert confirm_imported_reflections(svc, "bob") == []


# ---------------------------------------------------------------- memory/confirm's core
def test_confirm_takes_the_decision_by_id_and_a_keyed_candidate_supersedes(svc):
    svc.hear_user("alice", "今天天气不错")  # the owner just spoke, asking nothing to be remembered
    old = svc.remember(
        RememberRequest(owner="alice", content="我住在北京", tags=["kind:fact"], key="home", user_confirmed=True)
    ).node
    assert old.status == CANDIDATE, "the policy: user_confirmed without an explicit request"
    assert svc.confirm("alice", old.id).message == "confirmed"
    new = svc.remember(RememberRequest(owner="alice", content="我住在上海", tags=["kind:fact"], key="home")).node
    assert new.status == CANDIDATE
    for owner, node_id, message in (
        ("bob", new.id, f"no candidate {new.id} of bob"),
        ("alice", "nope", "no candidate nope of alice"),
        ("alice", " ", "invalid request"),
        ("", new.id, "guest"),
    ):
        out = svc.confirm(owner, node_id)
        assert not out.success and message in out.message
    out = svc.confirm("alice", new.id)
    assert out.success and out.message == f"confirmed; superseded {old.id}" and out.node.status == CONFIRMED
    assert svc.store.get("alice", old.id).status == SUPERSEDED
    assert svc.confirm("alice", new.id).message == "already confirmed"
    refused = svc.confirm("alice", old.id)
    assert not refused.success and f"is superseded by {new.id}, not a candidate" in refused.message
    assert [n.content for n in svc.recall("alice", "我住在哪里").nodes] == ["我住在上海"]


def test_confirming_a_duplicate_of_a_confirmed_memory_keeps_one(svc):
    candidate = svc.remember(RememberRequest(owner="alice", content="我喜欢爬山")).node
    confirmed = svc.store.get("alice", candidate.id).copy(status=CONFIRMED, id="twin")
    svc.store.write(add=[(confirmed, None)])
    out = svc.confirm("alice", candidate.id)
    assert out.success and out.node.id == "twin" and "already confirmed as twin" in out.message
    assert svc.store.get("alice", candidate.id).status == SUPERSEDED


# ---------------------------------------------------------------- fay-ros memory
def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "memory", *args], capture_output=True, text=True, timeout=120
    )


def test_cli_options_in_either_position_recall_by_type_in_time_order_and_confirm(memory_location, tmp_path):
    db = ["--db", memory_location, "--embedder", "hashed"]
    path = write_fay_stream(tmp_path / "fay")
    out = cli("import", str(path), "--owner", "alice", *db)  # options after the action
    assert out.returncode == 0, out.stderr
    assert "imported 6 Fay memory nodes" in out.stdout and "2 reflection candidate" in out.stdout
    out = cli(
        *db, "recall", "--owner", "alice", "--type", "reflection", "--time-ordered", "--candidates", "--json"
    )  # options before the action; no query
    assert out.returncode == 0, out.stderr
    reflections = json.loads(out.stdout)
    assert [n["origin"] for n in reflections] == ["fay:3", "fay:5"]
    assert all(n["status"] == "candidate" for n in reflections)
    out = cli("--db", memory_location, "search", "止损单", "--owner", "alice", "--embedder", "hashed", "--json")
    assert json.loads(out.stdout)[0]["origin"] == "fay:2", "the old name, options split around the action"

    one = cli("confirm", "alice", reflections[0]["id"], *db)
    assert one.returncode == 0 and one.stdout.strip() == f"{reflections[0]['id']}: confirmed"
    assert cli("confirm", "bob", reflections[1]["id"], *db).returncode == 1
    assert cli("confirm", "alice", *db).returncode == 2  # neither ids nor --all-reflections
    bulk = cli(*db, "confirm", "alice", "--all-reflections")
    assert bulk.returncode == 0 and "confirmed 1 of 1" in bulk.stdout
    out = cli("recall", "--owner", "alice", "--type", "reflection", "--time-ordered", "--json", *db)
    assert [n["status"] for n in json.loads(out.stdout)] == ["confirmed", "confirmed"]
    old_form = cli("confirm", "--owner", "alice", reflections[1]["id"], *db)
    assert old_form.returncode == 0 and "already confirmed" in old_form.stdout
