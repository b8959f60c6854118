"""Reflection inside the memory node, against a real OpenAI-compatible server on loopback:
insights appear without any service waiting for the LLM, the API key is sent but never
logged, and an unreachable LLM only costs the reflection (its URL logged without credentials)."""

from __future__ import annotations

import json

import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

from fay_msgs.srv import Recall, Remember
from fay_ros.common import topics
from fay_ros.common.diagnostics import status_name
from harness import wait_until

KEY = "sk-fay-test-0123456789abcdef"


class JobStatuses:
    """The memory node's statuses about its background jobs on /diagnostics."""

    def __init__(self, ros, namespace: str) -> None:
        self.ros = ros
        self.name = status_name("memory", "background jobs", namespace)
        self.statuses = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 10)

    def wait_matched(self) -> None:
        """/diagnostics is volatile: the node's publisher must reach us before a job ends."""
        self.ros.wait_matched(self.statuses, "memory")

    def reflection_ended(self, level: bytes) -> str:
        def ended(arrays):
            return next(
                (
                    s.message
                    for a in arrays
                    for s in a.status
                    if s.name == self.name
                    and s.level == level
                    and {kv.key: kv.value for kv in s.values}.get("job") == "reflect"
                ),
                None,
            )

        return self.statuses.wait_for(ended, timeout=30, what=f"a reflection status at level {level!r}")


def _remember(ros, ns, owner, content, tags, importance=6.0):
    req = Remember.Request(owner=owner, content=content, tags=tags, importance=importance, user_confirmed=True)
    res = ros.call(Remember, f"{ns}/{topics.SRV_REMEMBER}", req, timeout=30)
    assert res.success, res.message
    return res.node


@pytest.mark.parametrize(
    "trigger",
    [
        {"reflection_threshold": 15.0},  # importance of new memories
        {"reflection_threshold": 1000.0, "reflection_period": 1.0, "maintenance_period": 0.5},
    ],  # or on a schedule
    ids=["threshold", "schedule"],
)
def test_reflection_runs_in_the_node_on_a_loopback_llm(ros, launch_node, tmp_path, httpserver, trigger):
    answer = {"insights": [{"insight": "爷爷最近血压偏高，需要安排复查", "sources": [1, 2]}]}
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_json(
        {
            "id": "r1",
            "object": "chat.completion",
            "created": 0,
            "model": "fake",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": json.dumps(answer, ensure_ascii=False)},
                }
            ],
        }
    )
    node = launch_node(
        "fay_ros.nodes.memory",
        {
            "db_path": str(tmp_path / "m.db"),
            "embedder": "hashed",
            "llm_base_url": httpserver.url_for("/v1"),
            "llm_model": "fake",
            "llm_api_key_env": "FAY_MEMORY_TEST_KEY",
            **trigger,
        },
        namespace="/refl",
        env={"FAY_MEMORY_TEST_KEY": KEY},
    )
    jobs = JobStatuses(ros, "/refl")
    node.wait_ready(timeout=40)
    jobs.wait_matched()
    a = _remember(ros, "/refl", "grandpa", "老人晨起血压 158/95", ["kind:event", "domain:homecare", "date:2026-04-27"])
    b = _remember(ros, "/refl", "grandpa", "老人晚上血压 150/92", ["kind:event", "domain:homecare", "date:2026-04-28"])
    _remember(ros, "/refl", "grandpa", "爷爷每天早晨必须测血压", ["kind:rule", "persistent:true", "domain:homecare"])

    def insights():
        res = ros.call(
            Recall,
            "/refl/" + topics.SRV_RECALL,
            Recall.Request(owner="grandpa", query="血压", tags_all=["kind:insight"], include_candidates=True),
        )
        return res.nodes

    found = wait_until(insights, 30, message=lambda: f"an insight in the memory:\n{node.output()[-2000:]}")
    assert [n.content for n in found] == ["爷爷最近血压偏高，需要安排复查"]
    insight = found[0]
    assert insight.node_type == "reflection" and insight.status == "candidate"
    assert list(insight.pointer_ids) == [a.id, b.id]
    assert list(insight.tags) == ["domain:homecare", "kind:insight", "source:fay_reflection"]
    not_for_answers = ros.call(
        Recall, "/refl/" + topics.SRV_RECALL, Recall.Request(owner="grandpa", query="血压", tags_all=["kind:insight"])
    )
    assert not_for_answers.nodes == []  # an inference waits for confirmation
    request, _ = httpserver.log[0]
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert "158/95" in request.get_data(as_text=True)
    assert jobs.reflection_ended(DiagnosticStatus.OK) == "done"
    assert "1 insights stored" in node.output()
    assert KEY not in node.output()


def test_an_unreachable_llm_only_skips_reflection(ros, launch_node, tmp_path):
    node = launch_node(
        "fay_ros.nodes.memory",
        {
            "db_path": str(tmp_path / "m.db"),
            "embedder": "hashed",
            "llm_base_url": "http://fay:pw-5c2e@127.0.0.1:9/v1?api_key=sk-query-77aa",
            "llm_api_key_env": "FAY_MEMORY_TEST_KEY",
            "reflection_threshold": 10.0,
            "llm_timeout": 3.0,
        },
        namespace="/nollm",
        env={"FAY_MEMORY_TEST_KEY": KEY},
    )
    jobs = JobStatuses(ros, "/nollm")
    node.wait_ready(timeout=40)
    jobs.wait_matched()
    assert "llm=http://127.0.0.1:9/v1" in node.output()
    for text in ["我不吃香菜", "我住在上海", "我喜欢爬山"]:
        _remember(ros, "/nollm", "alice", text, ["kind:preference"])
    assert "skipped" in jobs.reflection_ended(DiagnosticStatus.WARN)
    assert "reflect for owner='alice' skipped: unreachable: cannot reach http://127.0.0.1:9/v1" in node.output()
    res = ros.call(Recall, "/nollm/" + topics.SRV_RECALL, Recall.Request(owner="alice", query="上海"))
    assert res.success and len(res.nodes) == 3 and node.alive()
    assert not [s for s in (KEY, "pw-5c2e", "sk-query-77aa", "api_key=") if s in node.output()]


def test_a_named_but_unset_key_variable_stops_the_node_with_the_reason(launch_node, tmp_path):
    node = launch_node(
        "fay_ros.nodes.memory",
        {
            "db_path": str(tmp_path / "m.db"),
            "embedder": "hashed",
            "llm_base_url": "http://127.0.0.1:9/v1",
            "llm_api_key_env": "FAY_MEMORY_UNSET_KEY",
        },
        namespace="/nokey",
        env={"FAY_MEMORY_UNSET_KEY": ""},
    )
    assert node.wait_exit(40) == 2
    assert "llm_api_key_env" in node.output() and "FAY_MEMORY_UNSET_KEY is not set" in node.output()
