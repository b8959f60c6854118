"""servo_mapper: action cues → trajectory_msgs/JointTrajectory for a servo controller.

A thin lifecycle shell (fay_ros.common.lifecycle) over fay_ros.body.servo:

- configure reads config/servo_map.yaml (parameter `map_file`); a missing or bad table leaves
  the node alive and unconfigured, with the reason (file, key, line) on /diagnostics
  (`fay/servo_mapper: state`, ERROR) and `~/ready` false;
- while active it arbitrates cues by priority and publishes one trajectory per started
  motion on `servo/joint_trajectory`; cues that arrive while it is not active are ignored;
- deactivate sends the joints to the idle pose (one rest trajectory from where the mapper
  models them) and forgets a waiting cue, so an inactive body is a body at rest;
- the table file is reloaded when it changes (a bad edit is logged with file and key, and
  reported on /diagnostics as status `fay/servo_mapper: table` like every reload; the last
  good table stays).

Trajectories are stamped 0 ("start on receipt"): a joint_trajectory_controller replaces
whatever it runs with the new trajectory, which is exactly the preemption the mapper decided.
Every trajectory ends at the idle pose.

Time: busy periods, waiting cues and the modelled joint positions run on the node clock, so
with `use_sim_time:=true` they follow /clock. Only the table-file polling runs on the steady
clock (an edit is taken even while simulated time stands still).

Live parameters (`ros2 param set`, applied from the next cue): map_file, reload_period,
joint_state_timeout, equal_priority, max_wait. The others are read-only.
"""

from __future__ import annotations

import threading
from typing import Literal

from builtin_interfaces.msg import Duration
from pydantic import BaseModel, Field
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from fay_msgs.msg import ActionCue

from ..body.body_cue import Cue
from ..body.map_tables import default_table_path
from ..body.servo import (
    TABLE_FILE,
    Outcome,
    ServoMapper,
    ServoTable,
    Trajectory,
    describe,
    load_servo_table,
    with_preemption,
)
from ..common import qos, topics
from ..common.diagnostics import StatusPublisher, health
from ..common.errors import TableError
from ..common.lifecycle import ManagedNode
from ..common.node_main import run_node
from ..common.params import ConfigError, declare_config
from ..common.reloading import ReloadingTable
from ..common.rostime import file_check_timer, node_seconds, set_timer_period


class ServoMapperConfig(BaseModel):
    map_file: str = Field(
        "",
        description="Servo mapping table (YAML); empty = the shipped config/servo_map.yaml. "
        "A new file must load, else the change is refused with file and line.",
    )
    reload_period: float = Field(
        1.0, ge=0.0, description="Seconds between checks of map_file for edits; 0 = never reload."
    )
    tick_period: float = Field(
        0.05, gt=0.0, le=1.0, description="Seconds between checks whether a waiting cue may start."
    )
    joint_states_topic: str = Field(
        "",
        description="sensor_msgs/JointState topic with measured joint positions (e.g. /joint_states); "
        "empty = plan from the positions the mapper itself commanded.",
    )
    joint_state_timeout: float = Field(0.5, gt=0.0, description="Measured positions older than this (s) are ignored.")
    equal_priority: Literal["", "wait", "preempt"] = Field(
        "",
        description="A cue with the priority of the busy motion: wait or preempt; empty = the table's "
        "preemption.equal_priority.",
    )
    max_wait: float = Field(
        -1.0, description="Longest a lower-priority cue may wait (s); negative = the table's preemption.max_wait."
    )


LIVE = frozenset({"map_file", "reload_period", "joint_state_timeout", "equal_priority", "max_wait"})


def to_duration(seconds: float) -> Duration:
    nanoseconds = int(round(seconds * 1e9))
    return Duration(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def to_message(trajectory: Trajectory) -> JointTrajectory:
    msg = JointTrajectory()
    # header.stamp stays 0: "start when received", so a newer trajectory replaces a running one.
    msg.joint_names = list(trajectory.joint_names)
    for point in trajectory.points:
        msg.points.append(
            JointTrajectoryPoint(
                positions=list(point.positions),
                velocities=list(point.velocities),
                time_from_start=to_duration(point.time),
            )
        )
    return msg


def load_table(path: str) -> ReloadingTable[ServoTable]:
    try:
        return ReloadingTable(path, load_servo_table)
    except TableError as exc:
        raise ConfigError(f"servo map table: {exc}") from None


class ServoMapperNode(ManagedNode):
    def __init__(self) -> None:
        super().__init__("servo_mapper", namespace=topics.DEFAULT_NAMESPACE)
        self.config = declare_config(self, ServoMapperConfig, live=LIVE, apply=self._apply_parameters)
        self.table: ReloadingTable[ServoTable] | None = None  # set by configure
        self.mapper: ServoMapper | None = None
        self._measured: dict[str, float] = {}
        self._measured_at = 0.0
        self.publisher = self.create_publisher(JointTrajectory, topics.SERVO_TRAJECTORY, qos.COMMANDS)
        self.table_status = StatusPublisher(self, "table")  # reloads and rejected edits, on /diagnostics
        # Cues acted on and ignored (not active), on /diagnostics: an operator sees that cues arrive.
        self._cues_acted_on = 0
        self._cues_ignored = 0
        health(self).add("cues", self._cue_health)
        # Cues, joint states and timers each get their own callback group: with one shared
        # group, rclpy's MultiThreadedExecutor delivered cues with a p95 of the order of the
        # timer period (measured, see bench_body). The lock serialises access to the mapper.
        self._lock = threading.Lock()
        self.create_subscription(
            ActionCue, topics.ACTION_CUE, self._on_cue, qos.EVENTS, callback_group=MutuallyExclusiveCallbackGroup()
        )
        if self.config.joint_states_topic:
            self.create_subscription(
                JointState,
                self.config.joint_states_topic,
                self._on_joint_states,
                10,
                callback_group=MutuallyExclusiveCallbackGroup(),
            )
        timers = MutuallyExclusiveCallbackGroup()
        # The node clock: under use_sim_time a waiting cue starts when /clock says the motion ended.
        self.create_timer(self.config.tick_period, self._on_tick, callback_group=timers)
        self._reload_timer = file_check_timer(self, self.config.reload_period, self._on_reload, timers)

    # -- lifecycle -------------------------------------------------------------------------
    def configure_node(self) -> None:
        table = load_table(self.config.map_file or str(default_table_path(TABLE_FILE)))
        with self._lock:
            self.table = table
            self.mapper = ServoMapper(self._effective(table.table))
        self._report_unmapped(table)
        self.get_logger().info(
            f"servo_mapper configured: {len(table.table.joints)} joints, "
            f"{len(table.table.behaviors)} behaviors from {table.path}"
        )

    def deactivate_node(self) -> None:
        with self._lock:
            if self.mapper is None:
                return
            now = self._now()
            rest = self.mapper.rest(now, self._measured_positions(now))
            if not self.context.ok():  # the process is ending (Ctrl-C): nothing can be sent any more
                return
            self.publisher.publish(to_message(rest))
        self.get_logger().info(f"deactivated: back to the idle pose; {describe(rest)}")

    def cleanup_node(self) -> None:
        with self._lock:
            self.table = None
            self.mapper = None

    # -- parameters ------------------------------------------------------------------------
    def _effective(self, table: ServoTable) -> ServoTable:
        """The table as the live preemption parameters override it."""
        max_wait = self.config.max_wait if self.config.max_wait >= 0 else None
        return with_preemption(table, self.config.equal_priority, max_wait)

    def _apply_parameters(self, config: ServoMapperConfig, changed: frozenset[str]) -> None:
        """A validated change of live parameters (raises ConfigError to refuse it)."""
        new_table = None
        if "map_file" in changed:
            new_table = load_table(config.map_file or str(default_table_path(TABLE_FILE)))  # file I/O outside the lock
        with self._lock:
            self.config = config
            if new_table is not None and self.table is not None:  # unconfigured: configure reads map_file
                self.table = new_table
            if self.mapper is not None and self.table is not None:
                self.mapper.set_table(self._effective(self.table.table))
        if new_table is not None:
            self._report_unmapped(new_table)
            self.get_logger().info(f"map_file: now {new_table.path}")
            self.table_status.publish("info", f"servo map loaded from {new_table.path}", file=str(new_table.path))
        if "reload_period" in changed:
            set_timer_period(self._reload_timer, config.reload_period)

    def _report_unmapped(self, table: ReloadingTable[ServoTable]) -> None:
        unmapped = table.table.unmapped_behaviors()
        if unmapped:
            self.get_logger().warning(
                f"{table.path}: no motion for {', '.join(unmapped)}; they use the default '{table.table.default}'"
            )

    # -- inputs ----------------------------------------------------------------------------
    def _now(self) -> float:
        return node_seconds(self)

    def _measured_positions(self, now: float) -> dict[str, float] | None:
        if self._measured and now - self._measured_at <= self.config.joint_state_timeout:
            return self._measured
        return None

    def _on_joint_states(self, msg: JointState) -> None:
        measured = dict(zip(msg.name, msg.position))
        with self._lock:
            if self.mapper is None:
                return
            self._measured = {n: p for n, p in measured.items() if n in self.mapper.table.joints}
            self._measured_at = self._now()

    def _publish(self, outcomes: list[Outcome]) -> None:
        for outcome in outcomes:
            cue = outcome.cue
            what = f"{cue.behavior or '(none)'} [{cue.utterance_id}] {outcome.action}: {outcome.reason}"
            if outcome.trajectory is not None:
                self.publisher.publish(to_message(outcome.trajectory))
                self.get_logger().info(f"{what}; {describe(outcome.trajectory)}")
            else:
                self.get_logger().info(what)

    def _on_cue(self, msg: ActionCue) -> None:
        with self._lock:
            if not self.active or self.mapper is None:
                self._cues_ignored += 1
                self.get_logger().debug(f"cue [{msg.utterance_id}] ignored: not active")
                return
            self._cues_acted_on += 1
            now = self._now()
            self._publish(self.mapper.handle(Cue.from_message(msg), now, self._measured_positions(now)))

    def _cue_health(self) -> tuple[str, str, dict[str, str]]:
        return (
            "info",
            f"{self._cues_acted_on} cues acted on, {self._cues_ignored} ignored while not active",
            {"acted_on": str(self._cues_acted_on), "ignored": str(self._cues_ignored)},
        )

    def _on_tick(self) -> None:
        with self._lock:
            if not self.active or self.mapper is None:
                return
            now = self._now()
            outcome = self.mapper.tick(now, self._measured_positions(now))
            if outcome is not None:
                self._publish([outcome])

    def _on_reload(self) -> None:
        table = self.table
        if table is None:
            return
        result = table.poll()  # file I/O outside the lock
        if result.error:
            self.get_logger().error(f"servo map {result.message}")
            self.table_status.publish("error", f"servo map {result.message}", file=str(table.path))
        elif result.changed:
            with self._lock:
                if self.table is not table or self.mapper is None:  # map_file changed meanwhile
                    return
                self.mapper.set_table(self._effective(result.table))
            self.get_logger().info(f"servo map reloaded from {table.path}")
            self.table_status.publish("info", f"servo map reloaded from {table.path}", file=str(table.path))


def main(args: list[str] | None = None) -> int:
    return run_node(ServoMapperNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
