"""Proactive talk under sim time: a real dialogue node process with use_sim_time:=true, the test
publishing /clock (no sleeps: the node's ~/proactive events say what it decided at which node
time, and the lines arrive on `reply`).

- a daily time fires once a day (and again the next day), as a proactive reply;
- quiet hours suppress a due line (dropped, reason quiet_hours);
- a message on an event topic fires its trigger; a due line waits while the robot speaks;
- a prompt trigger speaks the model's own words, never the instruction;
- a bad edit of the schedule is refused with file:line and the last good one stays; a bad
  file at start-up stops the node (exit code 2) with file and line.
"""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime

import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Bool

import dialogue_fake_llm as fake
from fay_msgs.msg import SpeechState, Utterance
from fay_ros.common import qos, topics
from fay_ros.common.diagnostics import status_name
from fay_ros.common.rostime import to_time_msg
from harness import NodeProcess, RosProbe, wait_until

NS = "/simtalk"
DETECTED = "/simtalk_people/detected"


def at(*parts: int) -> float:
    return datetime(*parts, tzinfo=UTC).timestamp()


SCHEDULE = textwrap.dedent(f"""\
    timezone: UTC
    memory:
      portrait_at: ""
      reflection_at: ""
    proactive:
      enabled: true
      quiet_hours: "22:00-07:00"
      min_gap: 0
      max_per_day: 0
      absent_after: 0
      max_delay: 600
      triggers:
        - name: good_morning
          daily: "08:30"
          say: "Good morning, Tom!"
          user: tom
        - name: late_news
          daily: "23:00"
          say: "Here is the late news."
          user: tom
        - name: greet
          topic: {{name: {DETECTED}, type: std_msgs/msg/Bool}}
          say: "Hello there!"
          user: tom
        - name: check_in
          cron: "0 15 * * *"
          prompt: "Ask the user how their afternoon is going."
          user: tom
    """)


def values(status: DiagnosticStatus) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


class SimDialogue:
    def __init__(self, probe: RosProbe, params: dict) -> None:
        self.probe = probe
        self.events = probe.collect(DiagnosticStatus, f"{NS}/dialogue/proactive")
        self.replies = probe.collect(Utterance, f"{NS}/{topics.REPLY}")
        self.diagnostics = probe.collect(DiagnosticArray, topics.DIAGNOSTICS, 10)
        self.clock = probe.node.create_publisher(Clock, "/clock", 10)
        self.detected = probe.node.create_publisher(Bool, DETECTED, qos.EVENTS)
        self.speaking = probe.node.create_publisher(SpeechState, f"{NS}/{topics.ROBOT_SPEAKING}", qos.LATCHED)
        self.proc = NodeProcess("fay_ros.nodes.dialogue", params, namespace=NS)
        self.proc.wait_ready(timeout=40, probe=probe)
        probe.wait_for_subscribers(self.clock)
        probe.wait_for_subscribers(self.speaking)
        probe.wait_for_subscribers(self.detected)
        probe.wait_matched(self.events, "dialogue")
        probe.wait_matched(self.replies, "dialogue")
        self.now = 0.0

    def of(self, event: str, trigger: str | None = None) -> list[dict[str, str]]:
        found = [values(s) | {"message": s.message} for s in list(self.events.messages)]
        return [v for v in found if v["event"] == event and (trigger is None or v.get("trigger") == trigger)]

    def run_clock(self, start: float, until, what: str, step: float = 1.0) -> None:
        """Publish /clock from `start` on, one `step` per 0.05 s, until `until()` holds (the node's
        1 s tick timer runs on that clock, so time has to move for it to look)."""
        self.now = start

        def advance():
            self.clock.publish(Clock(clock=to_time_msg(self.now)))
            self.now += step
            return until()

        wait_until(
            advance,
            30,
            interval=0.05,
            message=lambda: f"{what}; events: {self.of('speak')} {self.of('drop')}\n{self.proc.output()[-3000:]}",
        )

    def proactive_replies(self, conversation_id: str) -> list[Utterance]:
        return [m for m in list(self.replies.messages) if m.conversation_id == conversation_id and m.text]


@pytest.fixture
def probe():
    p = RosProbe("proactive_probe")
    yield p
    p.close()


def test_proactive_talk_follows_the_schedule_under_sim_time(probe, llm, tmp_path):
    llm.reset()
    schedule = tmp_path / "schedule.yaml"
    schedule.write_text(SCHEDULE, encoding="utf-8")
    node = SimDialogue(
        probe,
        {
            "base_url": llm.base_url,
            "model": "scripted",
            "model_profile": "tiny",
            "memory": False,
            "schedule_file": str(schedule),
            "use_sim_time": True,
        },
    )
    try:
        # the first look at the clock plans; nothing from before it is replayed
        node.run_clock(at(2026, 1, 1, 8, 29, 50), lambda: node.of("plan"), "the first plan")
        assert float(node.of("plan")[0]["good_morning"]) == at(2026, 1, 1, 8, 30)

        # a daily time fires once, as a proactive reply to its user
        node.run_clock(node.now, lambda: node.of("speak", "good_morning"), "good morning said")
        [said] = node.of("speak", "good_morning")
        assert float(said["clock"]) >= at(2026, 1, 1, 8, 30) and said["user"] == "tom"
        reply = node.replies.wait_for(lambda _m: node.proactive_replies(said["conversation_id"]) or None)
        assert [m.text for m in reply] == ["Good morning, Tom!"]
        assert all(m.source == "proactive" and m.user_id == "tom" and not m.replace for m in reply)

        # quiet hours: the 23:00 line is dropped with the reason
        node.run_clock(at(2026, 1, 1, 22, 59, 55), lambda: node.of("drop", "late_news"), "late news dropped")
        assert node.of("drop", "late_news")[0]["reason"] == "quiet_hours"

        # the next day's good morning comes at its time: once a day
        node.run_clock(
            at(2026, 1, 2, 8, 29, 55),
            lambda: len(node.of("speak", "good_morning")) == 2,
            "the good morning of 2 January",
        )

        # an event topic fires its trigger; while the robot speaks the line waits for it to end
        # (the trigger goes out once the node has heard the robot speak: two topics, no order)
        node.speaking.publish(SpeechState(speaking=True, utterance_id="other:0"))
        node.run_clock(
            node.now,
            lambda: any(w["robot_speaking"] == "true" for w in node.of("waiting")),
            "the robot's speech seen by the node",
        )
        node.run_clock(
            at(2026, 1, 2, 9, 0),
            lambda: node.detected.publish(Bool(data=True)) or any("greet" in w["triggers"] for w in node.of("waiting")),
            "the greeting waiting",
        )
        [waiting] = [w for w in node.of("waiting") if "greet" in w["triggers"]]
        assert waiting["robot_speaking"] == "true"
        quiet_from = node.now
        node.run_clock(node.now, lambda: node.now > quiet_from + 5, "five seconds of robot speech")
        assert node.of("speak", "greet") == [], "never while the robot is speaking"
        node.speaking.publish(SpeechState(speaking=False))
        node.run_clock(node.now, lambda: node.of("speak", "greet"), "the greeting after the robot's speech")
        [greet] = node.of("speak", "greet")
        # due while the robot spoke, said after it stopped (a detection published before the
        # waiting was seen may arrive a little later and make the line due anew: a newer firing
        # replaces a waiting one)
        assert float(greet["due"]) < quiet_from + 5 <= float(greet["clock"]), (greet, quiet_from)
        assert [
            m.text for m in node.replies.wait_for(lambda _m: node.proactive_replies(greet["conversation_id"]) or None)
        ] == ["Hello there!"]
        assert len(node.of("speak", "good_morning")) == 2

        # a prompt trigger: the model's own opener, the instruction never said
        llm.script(fake.text("How is your afternoon going?"))
        node.run_clock(at(2026, 1, 2, 14, 59, 58), lambda: node.of("speak", "check_in"), "the check-in")
        [check] = node.of("speak", "check_in")
        texts = [
            m.text for m in node.replies.wait_for(lambda _m: node.proactive_replies(check["conversation_id"]) or None)
        ]
        assert texts == ["How is your afternoon going?"]
        assert "Ask the user how their afternoon is going." in llm.requests[-1]["messages"][-1]["content"]

        # a bad edit is refused with file:line; the last good schedule goes on (good morning next day)
        schedule.write_text(SCHEDULE.replace('daily: "08:30"', 'daily: "25:99"'), encoding="utf-8")
        bad = node.diagnostics.wait_for_match(
            lambda a: any(
                s.name == status_name("dialogue", "schedule", NS) and s.level == DiagnosticStatus.ERROR
                for s in a.status
            ),
            timeout=20,
            what="the refused edit on /diagnostics",
        )
        message = next(s.message for s in bad.status if s.name == status_name("dialogue", "schedule", NS))
        assert str(schedule) in message and "line" in message and "NOT reloaded" in message
        node.run_clock(
            at(2026, 1, 3, 8, 29, 58),
            lambda: len(node.of("speak", "good_morning")) == 3,
            "the good morning of 3 January, from the last good schedule",
        )
    finally:
        node.proc.stop()


def test_a_bad_schedule_stops_the_node_at_start_with_file_and_line(tmp_path, llm):
    schedule = tmp_path / "schedule.yaml"
    schedule.write_text(SCHEDULE.replace("type: std_msgs/msg/Bool", "type: no_such_pkg/msg/Nothing"), encoding="utf-8")
    proc = NodeProcess(
        "fay_ros.nodes.dialogue",
        {"base_url": llm.base_url, "memory": False, "schedule_file": str(schedule)},
        namespace=NS,
    )
    assert proc.wait_exit(60) == 2
    assert "no_such_pkg" in proc.output() and str(schedule) in proc.output()
    schedule.write_text(SCHEDULE.replace("min_gap: 0", "min_gap: -5"), encoding="utf-8")
    proc = NodeProcess(
        "fay_ros.nodes.dialogue",
        {"base_url": llm.base_url, "memory": False, "schedule_file": str(schedule)},
        namespace=NS,
    )
    assert proc.wait_exit(60) == 2
    assert str(schedule) in proc.output() and "line" in proc.output()
