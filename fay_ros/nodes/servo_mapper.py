"""servo_mapper: action cues → trajectory_msgs/JointTrajectory for a servo controller.

A thin shell over fay_ros.body.servo: it reads config/servo_map.yaml (parameter `map_file`),
reloads it when it changes (a bad edit is logged with file and key, and reported on /diagnostics
as status `fay/servo_mapper: table` like every reload; the last good table stays),
arbitrates cues by priority and publishes one trajectory per started motion on
`servo/joint_trajectory`. Trajectories are stamped 0 ("start on receipt"): a
joint_trajectory_controller replaces whatever it runs with the new trajectory, which is
exactly the preemption the mapper decided. Every trajectory ends at the idle pose.
"""
from __future__ import annotations

import threading
import time

from builtin_interfaces.msg import Duration
from pydantic import BaseModel, Field
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from fay_msgs.msg import ActionCue

from ..body.cue import Cue
from ..body.servo import TABLE_FILE, Outcome, ServoMapper, Trajectory, describe, load_servo_table
from ..body.tables import default_table_path
from ..common import qos, topics
from ..common.diagnostics import StatusPublisher
from ..common.errors import TableError
from ..common.node_main import run_node
from ..common.params import ConfigError, declare_config
from ..common.reloading import ReloadingTable


class ServoMapperConfig(BaseModel):
    map_file: str = Field("", description="Servo mapping table (YAML); empty = the shipped config/servo_map.yaml.")
    reload_period: float = Field(1.0, ge=0.0,
                                 description="Seconds between checks of map_file for edits; 0 = never reload.")
    tick_period: float = Field(0.05, gt=0.0, le=1.0,
                               description="Seconds between checks whether a waiting cue may start.")
    joint_states_topic: str = Field(
        "", description="sensor_msgs/JointState topic with measured joint positions (e.g. /joint_states); "
                        "empty = plan from the positions the mapper itself commanded.")
    joint_state_timeout: float = Field(0.5, gt=0.0, description="Measured positions older than this (s) are ignored.")


def to_duration(seconds: float) -> Duration:
    nanoseconds = int(round(seconds * 1e9))
    return Duration(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def to_message(trajectory: Trajectory) -> JointTrajectory:
    msg = JointTrajectory()
    # header.stamp stays 0: "start when received", so a newer trajectory replaces a running one.
    msg.joint_names = list(trajectory.joint_names)
    for point in trajectory.points:
        msg.points.append(JointTrajectoryPoint(
            positions=list(point.positions),
            velocities=list(point.velocities),
            time_from_start=to_duration(point.time),
        ))
    return msg


class ServoMapperNode(Node):
    def __init__(self) -> None:
        super().__init__("servo_mapper", namespace=topics.DEFAULT_NAMESPACE)
        self.config = declare_config(self, ServoMapperConfig)
        path = self.config.map_file or str(default_table_path(TABLE_FILE))
        try:
            self.table = ReloadingTable(path, load_servo_table)
        except TableError as exc:
            raise ConfigError(f"servo map table: {exc}") from None
        self.mapper = ServoMapper(self.table.table)
        self._measured: dict[str, float] = {}
        self._measured_at = 0.0
        self.publisher = self.create_publisher(JointTrajectory, topics.SERVO_TRAJECTORY, qos.COMMANDS)
        self.table_status = StatusPublisher(self, "table")  # reloads and rejected edits, on /diagnostics
        # Cues, joint states and timers each get their own callback group: with one shared
        # group, rclpy's MultiThreadedExecutor delivered cues with a p95 of the order of the
        # timer period (measured, see bench_body). The lock serialises access to the mapper.
        self._lock = threading.Lock()
        self.create_subscription(ActionCue, topics.ACTION_CUE, self._on_cue, qos.EVENTS,
                                 callback_group=MutuallyExclusiveCallbackGroup())
        if self.config.joint_states_topic:
            self.create_subscription(JointState, self.config.joint_states_topic, self._on_joint_states, 10,
                                     callback_group=MutuallyExclusiveCallbackGroup())
        timers = MutuallyExclusiveCallbackGroup()
        self.create_timer(self.config.tick_period, self._on_tick, callback_group=timers)
        if self.config.reload_period > 0:
            self.create_timer(self.config.reload_period, self._on_reload, callback_group=timers)
        unmapped = self.table.table.unmapped_behaviors()
        if unmapped:
            self.get_logger().warning(f"{path}: no motion for {', '.join(unmapped)}; they use the default "
                                      f"'{self.table.table.default}'")
        self.get_logger().info(f"servo_mapper ready: {len(self.table.table.joints)} joints, "
                               f"{len(self.table.table.behaviors)} behaviors from {path}")

    def _measured_positions(self, now: float) -> dict[str, float] | None:
        if self._measured and now - self._measured_at <= self.config.joint_state_timeout:
            return self._measured
        return None

    def _on_joint_states(self, msg: JointState) -> None:
        measured = dict(zip(msg.name, msg.position))
        with self._lock:
            self._measured = {n: p for n, p in measured.items() if n in self.mapper.table.joints}
            self._measured_at = time.monotonic()

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
            now = time.monotonic()
            self._publish(self.mapper.handle(Cue.from_message(msg), now, self._measured_positions(now)))

    def _on_tick(self) -> None:
        with self._lock:
            now = time.monotonic()
            outcome = self.mapper.tick(now, self._measured_positions(now))
            if outcome is not None:
                self._publish([outcome])

    def _on_reload(self) -> None:
        result = self.table.poll()  # file I/O outside the lock
        if result.error:
            self.get_logger().error(f"servo map {result.message}")
            self.table_status.publish("error", f"servo map {result.message}", file=str(self.table.path))
        elif result.changed:
            with self._lock:
                self.mapper.set_table(result.table)
            self.get_logger().info(f"servo map reloaded from {self.table.path}")
            self.table_status.publish("info", f"servo map reloaded from {self.table.path}", file=str(self.table.path))


def main(args: list[str] | None = None) -> int:
    return run_node(ServoMapperNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
