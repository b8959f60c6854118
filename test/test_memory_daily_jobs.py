"""Memory's daily jobs under sim time: a real memory node process with use_sim_time:=true, the
scripted loopback LLM as its llm_base_url, and the test publishing /clock (no sleeps: the node's
~/jobs events say what it did at which node time).

- the portrait runs at 11:30 and the reflection at 23:00 (schedule timezone UTC), not before and
  not twice the same day, and again the next day;
- a bad edit of the schedule file is refused with file:line on /diagnostics (status
  `fay/memory: schedule`) and the last good schedule stays; a good edit is taken;
- a bad schedule file stops the node at start-up (exit code 2) with file and line.
"""

from __future__ import annotations

import json
import textwrap
from datetime import UTC, datetime

import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rosgraph_msgs.msg import Clock
from werkzeug import Response

import dialogue_fake_llm as fake
from fay_msgs.srv import GetProfile, Recall, Remember
from fay_ros.common import topics
from fay_ros.common.diagnostics import status_name
from fay_ros.common.rostime import to_time_msg
from harness import NodeProcess, RosProbe, wait_until

NS = "/simjobs"
PORTRAIT = "Alice is a teacher who climbs mountains and avoids coriander."
INSIGHT = "Alice likes the outdoors"


def at(*parts: int) -> float:
    return datetime(*parts, tzinfo=UTC).timestamp()


def schedule_text(portrait_at: str = "11:30", reflection_at: str = "23:00") -> str:
    return textwrap.dedent(f"""\
        timezone: UTC
        memory:
          portrait_at: "{portrait_at}"
          reflection_at: "{reflection_at}"
        proactive:
          enabled: false
        """)


def completion(content: str) -> fake.Scripted:
    body = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
    }
    return fake.Scripted(lambda _item: Response(json.dumps(body), status=200, mimetype="application/json"))


def memory_llm(body: dict) -> fake.Scripted:
    """The model behind reflection and portrait: answers by the system prompt."""
    system = body["messages"][0]["content"]
    if "insights" in system:
        return completion(json.dumps({"insights": [{"insight": INSIGHT, "sources": [2, 3]}]}))
    return completion(PORTRAIT)


def values(status: DiagnosticStatus) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


class SimMemory:
    """The node, its ~/jobs events, /diagnostics, and the clock the test drives."""

    def __init__(self, probe: RosProbe, params: dict) -> None:
        self.probe = probe
        self.jobs = probe.collect(DiagnosticStatus, f"{NS}/memory/jobs")
        self.diagnostics = probe.collect(DiagnosticArray, topics.DIAGNOSTICS, 10)
        self.clock = probe.node.create_publisher(Clock, "/clock", 10)
        self.proc = NodeProcess("fay_ros.nodes.memory", params, namespace=NS)
        self.proc.wait_ready(timeout=40, probe=probe)
        probe.wait_for_subscribers(self.clock)  # the node's time source listens to /clock
        probe.wait_matched(self.jobs, "memory")
        probe.wait_matched(self.diagnostics, "memory")

    def events(self, event: str) -> list[dict[str, str]]:
        return [values(s) | {"message": s.message} for s in list(self.jobs.messages) if values(s)["event"] == event]

    def set_time(self, t: float, until=None, what: str = "an event"):
        """Publish `t` on /clock (again every 0.1 s until `until()` holds: /clock is best effort)."""

        def step():
            self.clock.publish(Clock(clock=to_time_msg(t)))
            return until() if until is not None else True

        return wait_until(
            step,
            20,
            interval=0.1,
            message=lambda: f"{what}; ~/jobs: {self.events('due')}\n{self.proc.output()[-3000:]}",
        )

    def wait_event(self, event: str, timeout: float = 30, **expected: str) -> dict[str, str]:
        def match(status: DiagnosticStatus) -> bool:
            found = values(status)
            return found["event"] == event and all(found.get(k) == v for k, v in expected.items())

        return values(self.jobs.wait_for_match(match, timeout, what=f"{event} {expected} on ~/jobs"))

    def schedule_status(self, level: bytes) -> DiagnosticStatus | None:
        """The node's latest schedule status at `level` on /diagnostics, if any came."""
        return next(
            (
                s
                for a in reversed(list(self.diagnostics.messages))
                for s in a.status
                if s.name == status_name("memory", "schedule", NS) and s.level == level
            ),
            None,
        )

    def call(self, srv, name: str, **fields):
        return self.probe.call(srv, f"{NS}/{name}", srv.Request(**fields), timeout=30)


@pytest.fixture
def probe():
    p = RosProbe("daily_jobs_probe")
    yield p
    p.close()


def test_portrait_and_reflection_run_at_their_times_under_sim_time(probe, llm, tmp_path):
    llm.reset()
    llm.responder = memory_llm
    schedule = tmp_path / "schedule.yaml"
    schedule.write_text(schedule_text(), encoding="utf-8")
    node = SimMemory(
        probe,
        {
            "db_path": str(tmp_path / "m.db"),
            "embedder": "hashed",
            "llm_base_url": llm.base_url,
            "llm_model": "scripted",
            "schedule_file": str(schedule),
            "use_sim_time": True,
            "maintenance_period": 1.0,
            "reflection_threshold": 1000.0,
            "profile_min_evidence": 2,
            "profile_min_interval": 0.0,
            "verify_explicit_requests": False,
        },
    )
    try:
        # start-up: the first evaluation only plans (the node's time is the first /clock it got)
        node.set_time(at(2026, 1, 1, 11, 29), lambda: node.events("plan"), "the first plan")
        plan = node.events("plan")[0]
        assert float(plan["portrait_at"]) == at(2026, 1, 1, 11, 30)
        assert float(plan["reflection_at"]) == at(2026, 1, 1, 23, 0)
        for turn, content in enumerate(["I am a teacher", "I climb mountains", "I do not eat coriander"]):
            res = node.call(
                Remember,
                topics.SRV_REMEMBER,
                owner="alice",
                content=content,
                user_confirmed=True,
                tags=["kind:fact"],
                source_session="s",
                source_turn=turn + 1,
            )
            assert res.success and res.node.status == "confirmed", res.message

        node.set_time(at(2026, 1, 1, 11, 29, 59))
        node.set_time(at(2026, 1, 1, 11, 30, 1), lambda: node.events("due"), "the portrait due")
        [portrait] = node.events("due")
        assert portrait["kind"] == "portrait_at" and float(portrait["due"]) == at(2026, 1, 1, 11, 30)
        assert float(portrait["clock"]) >= at(2026, 1, 1, 11, 30)  # not before
        assert portrait["owners"] == "alice" and portrait["skipped"] == "0"
        done = node.wait_event("done", kind="profile", owner="alice")
        assert done["level"] == "info"
        # memory/profile's portrait is the core memory (issue 35), which shows the rebuilt portrait
        assert f"Portrait: {PORTRAIT}" in node.call(GetProfile, topics.SRV_PROFILE, owner="alice").portrait.split("\n")

        # a bad edit is refused with file:line; the last good schedule stays
        schedule.write_text(schedule_text(reflection_at="23:60"), encoding="utf-8")
        node.set_time(
            at(2026, 1, 1, 12, 0),
            lambda: node.schedule_status(DiagnosticStatus.ERROR),
            "the rejected edit on /diagnostics",
        )
        rejected = node.schedule_status(DiagnosticStatus.ERROR)
        assert "NOT reloaded, keeping the last good table" in rejected.message
        assert "memory.reflection_at: a time of day is written HH:MM" in rejected.message
        assert "(got '23:60') (line 4)" in rejected.message and "schedule.yaml" in rejected.message

        node.set_time(at(2026, 1, 1, 22, 59, 59))
        node.set_time(at(2026, 1, 1, 23, 0, 1), lambda: len(node.events("due")) >= 2, "the reflection due")
        dues = node.events("due")
        assert [d["kind"] for d in dues] == ["portrait_at", "reflection_at"]  # no second portrait that day
        assert float(dues[1]["due"]) == at(2026, 1, 1, 23, 0) and dues[1]["owners"] == "alice"
        assert node.wait_event("done", kind="reflect", owner="alice")["level"] == "info"
        insights = node.call(
            Recall, topics.SRV_RECALL, owner="alice", query="", tags_all=["kind:insight"], include_candidates=True
        ).nodes
        assert [n.content for n in insights] == [INSIGHT]

        # a good edit is taken: the portrait moves to 10:00 from the next day on
        schedule.write_text(schedule_text(portrait_at="10:00"), encoding="utf-8")
        node.set_time(
            at(2026, 1, 2, 9, 0),
            lambda: any(p.get("portrait_at") == repr(at(2026, 1, 2, 10, 0)) for p in node.events("plan")),
            "the reloaded plan",
        )
        node.set_time(at(2026, 1, 2, 10, 0, 1), lambda: len(node.events("due")) >= 3, "the next day's portrait")
        third = node.events("due")[2]
        assert third["kind"] == "portrait_at" and float(third["due"]) == at(2026, 1, 2, 10, 0)
        assert third["owners"] == ""  # no new evidence since yesterday's portrait
    finally:
        node.proc.stop()
        print(node.proc.output()[-3000:])


def test_a_bad_schedule_file_stops_the_node_with_file_and_line(launch_node, tmp_path):
    schedule = tmp_path / "schedule.yaml"
    schedule.write_text(schedule_text(portrait_at="25:00"), encoding="utf-8")
    proc = launch_node(
        "fay_ros.nodes.memory",
        {"db_path": str(tmp_path / "m.db"), "embedder": "hashed", "schedule_file": str(schedule)},
    )
    assert proc.wait_exit(30) == 2
    out = proc.output()
    assert "cannot start" in out and "parameter 'schedule_file'" in out
    assert "schedule.yaml: memory.portrait_at: a time of day is written HH:MM" in out and "(line 3)" in out
