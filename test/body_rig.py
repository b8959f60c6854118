"""Helpers of the body node tests (servo_mapper, led_mapper as processes): cues, the sync cue,
parameters through the node's own parameter service, lifecycle transitions, and a /clock
driven from the test process."""

from __future__ import annotations

from typing import Any

from diagnostic_msgs.msg import DiagnosticArray
from lifecycle_msgs.msg import Transition
from rcl_interfaces.msg import SetParametersResult
from rosgraph_msgs.msg import Clock

from fay_msgs.msg import ActionCue
from fay_ros.body import led, servo
from fay_ros.body.map_tables import default_table_path
from fay_ros.common import qos, topics
from fay_ros.common.rostime import from_time_msg, to_time_msg
from harness import publish_until, wait_until

SERVO_TABLE = servo.load_servo_table(default_table_path(servo.TABLE_FILE))
LED_TABLE = led.load_led_table(default_table_path(led.TABLE_FILE))
SERVO_YAML = default_table_path(servo.TABLE_FILE).read_text(encoding="utf-8")
LED_YAML = default_table_path(led.TABLE_FILE).read_text(encoding="utf-8")


def seconds(duration) -> float:
    return duration.sec + duration.nanosec * 1e-9


def action_cue(
    behavior: str, affect: str, intensity: float, priority: int, sentiment: float = 0.0, uid: str = "c:0"
) -> ActionCue:
    return ActionCue(
        code=f"test.{behavior}",
        behavior=behavior,
        affect=affect,
        intensity=intensity,
        priority=priority,
        sentiment=sentiment,
        utterance_id=uid,
        text="test",
    )


def connect(ros, *collect_specs):
    """Cue publisher plus collectors, returned once every link is matched both ways."""
    cue_pub = ros.publisher(ActionCue, topics.ACTION_CUE, qos.EVENTS)
    collectors = []
    for msg_type, topic, profile, count in collect_specs:
        sub_collector = ros.collect(msg_type, topic, profile)
        ros.wait_matched(sub_collector, None, at_least=count)
        collectors.append(sub_collector)
    return cue_pub, collectors


# The sync cue: `idle` has no keyframes, so it is never busy and leaves the joints at rest (one
# move to the idle pose per copy), and every copy shows the same LED look; so copies are harmless.
SYNC_CUE = action_cue("idle", "neutral", 0.0, 0, uid="sync:0")
SYNC_BRIGHTNESS = LED_TABLE.brightness.at(SYNC_CUE.intensity)
assert SYNC_BRIGHTNESS != LED_TABLE.idle.brightness, "a sync colour must differ from the idle one"


def sync(cue_pub, trajectories=None, colors=None) -> None:
    """Publish the sync cue until its effect is back on every collector given; from then on each
    cue reaches the mapper(s) exactly once and their answers reach us, in publishing order.
    (Our matched counts only say that WE have matched the node: see harness.repeat_until.)"""

    def arrived() -> bool:
        return (trajectories is None or bool(trajectories.messages)) and (
            colors is None or any(is_sync_colour(c) for c in colors.messages)
        )

    # The first links of a freshly started node: discovery, not the node, sets how long this takes,
    # and under a loaded CI run (two workers on two cores) it has taken longer than the default.
    publish_until(cue_pub, SYNC_CUE, arrived, timeout=60.0, message="the sync cue's trajectory and colour")


def is_sync_colour(color) -> bool:
    return abs(color.a - SYNC_BRIGHTNESS) < 1e-6


def is_idle_colour(color) -> bool:
    return abs(color.a - LED_TABLE.idle.brightness) < 1e-6


def motion_index(trajectories, start: int = 0) -> int:
    """Index of the first trajectory from `start` on that is a motion (keyframes, not just the
    single move to idle that sync cues give, however many of those arrived)."""
    [index] = trajectories.wait_for(
        lambda msgs: next(([i] for i in range(start, len(msgs)) if len(msgs[i].points) > 1), None),
        what=f"a motion (trajectory of more than one point) from #{start} on",
    )
    return index


def moves(msg, joint: str) -> float:
    """How far `joint` gets from its idle position in a trajectory message."""
    j = list(msg.joint_names).index(joint)
    idle = SERVO_TABLE.joints[joint].idle
    return max(abs(p.positions[j] - idle) for p in msg.points)


# -- parameters and lifecycle: the probe's own (harness.RosProbe) -------------------------
def set_parameter(ros, node: str, name: str, value: Any) -> SetParametersResult:
    """`ros2 param set /fay/<node> <name> <value>`: the node's answer (successful, reason)."""
    [result] = ros.set_parameters(node, **{name: value})
    return result


def get_parameter(ros, node: str, name: str) -> Any:
    return ros.get_parameter(node, name)


def lifecycle_state(ros, node: str) -> str:
    return ros.lifecycle_state(node)


def change_state(ros, node: str, transition: int) -> bool:
    return ros.change_state(node, transition)


CONFIGURE = Transition.TRANSITION_CONFIGURE
DEACTIVATE = Transition.TRANSITION_DEACTIVATE
ACTIVATE = Transition.TRANSITION_ACTIVATE


# -- simulated time -------------------------------------------------------------------------
class SimClock:
    """/clock published from the test process, for a node started with use_sim_time:=true.

    `set(t)` publishes t until the node's own clock shows it: the node stamps its /diagnostics
    (published every second on the steady clock) with its node clock, so a stamp >= t is the
    node saying it has received our time. `settle()` waits for two more such publications: by
    then the node's timers on its clock have run at the time it has."""

    def __init__(self, ros, node: str) -> None:
        self._publisher = ros.node.create_publisher(Clock, "/clock", 10)
        self._diagnostics = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 50)
        self._prefix = f"fay/{node}: "
        self.now = 0.0

    def _stamps(self) -> list[float]:
        return [
            from_time_msg(a.header.stamp)
            for a in self._diagnostics.messages
            if any(s.name.startswith(self._prefix) for s in a.status)
        ]

    def set(self, t: float) -> None:
        self.now = t
        publish_until(
            self._publisher,
            Clock(clock=to_time_msg(t)),
            lambda: any(s >= t - 1e-9 for s in self._stamps()),
            # The first /clock goes through discovery of the test's publisher by the node's
            # time source: seconds on a loaded 2-core machine, so a roomy bound (an event wait).
            timeout=60.0,
            message=f"the node's clock at {t}",
        )

    def settle(self, count: int = 2) -> None:
        seen = len(self._stamps())
        wait_until(lambda: len(self._stamps()) >= seen + count, message=f"{count} more health reports")
