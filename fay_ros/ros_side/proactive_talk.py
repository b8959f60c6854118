"""Proactive talk on the dialogue node: the ROS side of fay_ros.schedule's ProactivePlanner.

The schedule file's `proactive:` section (parameter `schedule_file` of the dialogue node, ''
= config/schedule.yaml) names triggers: daily times, intervals, cron expressions, a message on
a topic, N seconds of silence after a user's turn. Each says a fixed line or gives the model a
prompt, to a target user. The planner's gate keeps quiet hours, a rate limit per user, waits
while the user (`audio/voice_active`) or the robot (`robot_speaking`) speaks, and skips time
triggers when nobody has been heard for `absent_after` seconds.

- Time is the node clock: the tick timer is created on it and the planner is given its time,
  so use_sim_time works (tests drive /clock).
- The file is re-read when it changes (polled on the steady clock, so edits are picked up
  while sim time stands still); a bad edit keeps the last good schedule and is reported with
  file and line in the log and on /diagnostics (`fay/dialogue: schedule`). A bad file at
  start-up stops the node (exit code 2). Topic subscriptions follow the file.
- Every decision is published on `~/proactive` (diagnostic_msgs/DiagnosticStatus; values
  `event` speak / drop / skip, `trigger`, `kind`, `user`, `due`, `clock` (the node time of the
  decision), `reason`, `conversation_id`), `event` plan (`clock`, and each time trigger's
  next time) whenever the plan changes, `event` waiting (`triggers`: the due lines waiting for
  speech to end, `robot_speaking`, `user_speaking`) whenever one of the three changes, so a robot
  program, an operator or a test sees what was said or suppressed and why, without the log.
  Events name the trigger and the user, never what was said.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from std_msgs.msg import Bool

from ..agent.ros_convert import InterfaceError, import_interface
from ..common import qos, topics
from ..common.diagnostics import StatusPublisher, event_status
from ..common.errors import ConfigError, TableError
from ..common.reloading import ReloadingTable
from ..common.rostime import node_seconds
from ..schedule.config import ScheduleFile, load_schedule, schedule_path
from ..schedule.proactive import Decision, ProactivePlanner

PROACTIVE_TOPIC = "~/proactive"
TICK_SECONDS = 1.0  # node-clock period of the planner's look at the clock
RELOAD_SECONDS = 1.0  # steady-clock period of the schedule file check

# speak(decision) -> the conversation id of the line started, or "" when it was not started
Speaker = Callable[[Decision], str]
# reminders(now, speaking, present user): the reminders' look at the same tick (issue 36)
ReminderTick = Callable[[float, bool, str], None]


class ProactiveTalk:
    def __init__(self, node: Node, schedule_file: str, speak: Speaker, reminders: ReminderTick | None = None) -> None:
        self._node = node
        self._speak = speak
        self._reminders = reminders
        self._lock = threading.Lock()  # the planner is not thread-safe; callbacks run on several threads
        try:
            self._schedule = ReloadingTable(schedule_path(schedule_file), load_schedule)
        except TableError as exc:
            raise ConfigError(f"parameter 'schedule_file': {exc}") from None
        self._check_types(self._schedule.table)
        self.planner = ProactivePlanner(self._schedule.table)
        self._user_speaking = False
        self._robot_speaking = False
        self._subscriptions: dict[tuple[str, str], Any] = {}
        self._plan: dict[str, float | None] | None = None
        # what the last `waiting` event said: (due lines waiting, robot speaking, user speaking)
        self._waiting: tuple[list[str], bool, bool] = ([], False, False)
        group = MutuallyExclusiveCallbackGroup()
        self._events = node.create_publisher(DiagnosticStatus, PROACTIVE_TOPIC, qos.EVENTS)
        self._status = StatusPublisher(node, "schedule")
        node.create_subscription(Bool, topics.VOICE_ACTIVE, self._on_voice_active, qos.LATCHED, callback_group=group)
        self._follow_topics()
        node.create_timer(TICK_SECONDS, self._tick, callback_group=group)  # the node clock: sim time works
        node.create_timer(
            RELOAD_SECONDS, self._reload, callback_group=group, clock=Clock(clock_type=ClockType.STEADY_TIME)
        )

    # -- inputs ---------------------------------------------------------------------------
    def heard(self, user: str) -> None:
        """A user's turn (speech/final, text_input, a chat goal)."""
        with self._lock:
            self.planner.heard(user, self._now())

    def robot_speaking(self, speaking: bool) -> None:
        """The voice's state (robot_speaking: the node's subscription)."""
        self._robot_speaking = speaking

    def _on_voice_active(self, msg: Bool) -> None:
        self._user_speaking = bool(msg.data)

    def _on_event(self, topic: str) -> None:
        with self._lock:
            self.planner.event(topic, self._now())

    # -- the clock ------------------------------------------------------------------------
    def _now(self) -> float:
        return node_seconds(self._node)

    def _tick(self) -> None:
        now = self._now()
        with self._lock:
            decisions = self.planner.tick(now, user_speaking=self._user_speaking, robot_speaking=self._robot_speaking)
            plan = self.planner.next_due()
            waiting = sorted(self.planner.waiting())
            present = self.planner.present_user(now)
        if self._reminders is not None:  # one scheduler, one clock: reminders look at the same tick
            self._reminders(now, self._user_speaking or self._robot_speaking, present)
        if (waiting, self._robot_speaking, self._user_speaking) != self._waiting:
            self._waiting = (waiting, self._robot_speaking, self._user_speaking)
            self._publish(
                "waiting",
                f"waiting for speech to end: {', '.join(waiting) or 'nothing'}",
                {
                    "clock": repr(now),
                    "triggers": ",".join(waiting),
                    "robot_speaking": str(self._robot_speaking).lower(),
                    "user_speaking": str(self._user_speaking).lower(),
                },
            )
        if plan != self._plan:
            self._plan = plan
            times = {name: "" if due is None else repr(due) for name, due in plan.items()}
            self._publish("plan", f"next: {plan or 'no time trigger'}", {"clock": repr(now), **times})
        for decision in decisions:
            if decision.action == "drop":
                self._report(
                    "drop", decision, now, f"{decision.trigger}: not said ({decision.reason})", reason=decision.reason
                )
                continue
            try:
                conversation_id = self._speak(decision)
            except Exception as exc:  # noqa: BLE001 - the timer must keep ticking
                self._node.get_logger().error(f"proactive {decision.trigger} failed: {type(exc).__name__}: {exc}")
                conversation_id = ""
            if conversation_id:
                self._report(
                    "speak",
                    decision,
                    now,
                    f"{decision.trigger}: speaking to {decision.user or 'guest'}",
                    conversation_id=conversation_id,
                )
            else:
                self._report(
                    "skip",
                    decision,
                    now,
                    f"{decision.trigger}: not said (the user's turn is running)",
                    reason="user_turn",
                )

    # -- the file -------------------------------------------------------------------------
    def _reload(self) -> None:
        result = self._schedule.poll()
        if result.error:
            self._node.get_logger().error(f"schedule {result.message}")
            self._status.publish("error", f"schedule {result.message}", file=str(self._schedule.path))
            return
        if not result.changed:
            return
        schedule: ScheduleFile = result.table
        try:
            self._check_types(schedule)
        except ConfigError as exc:
            self._node.get_logger().error(f"schedule NOT reloaded, keeping the last good one: {exc}")
            self._status.publish("error", f"schedule NOT reloaded: {exc}", file=str(self._schedule.path))
            return
        with self._lock:
            self.planner.set_schedule(schedule)
        self._follow_topics()
        self._node.get_logger().info(f"schedule reloaded from {self._schedule.path}")
        self._status.publish("info", f"schedule reloaded from {self._schedule.path}", file=str(self._schedule.path))

    def _check_types(self, schedule: ScheduleFile) -> None:
        for trigger in schedule.proactive.triggers:
            if trigger.topic is not None:
                try:
                    import_interface(trigger.topic.type)
                except InterfaceError as exc:
                    raise ConfigError(f"{self._schedule.path}: trigger {trigger.name!r}: {exc}") from None

    def _follow_topics(self) -> None:
        """Subscribe to the topics of the schedule's topic triggers (and no others)."""
        wanted = {(event.name, event.type) for event in self.planner.topics()}
        for key in set(self._subscriptions) - wanted:
            self._node.destroy_subscription(self._subscriptions.pop(key))
        for name, type_name in sorted(wanted - set(self._subscriptions)):
            self._subscriptions[(name, type_name)] = self._node.create_subscription(
                import_interface(type_name), name, self._event_callback(name), qos.TRIGGERS
            )

    def _event_callback(self, topic: str) -> Callable[[Any], None]:
        """The subscription callback for `topic`: any message on it is that trigger's event."""
        return lambda _msg: self._on_event(topic)

    def _report(self, event: str, decision: Decision, now: float, message: str, **values: str) -> None:
        self._publish(
            event,
            message,
            {
                "trigger": decision.trigger,
                "kind": decision.kind,
                "user": decision.user,
                "due": repr(decision.due),
                "clock": repr(now),
                **values,
            },
        )
        self._node.get_logger().info(f"proactive {message}")

    def publish_reminder_event(self, event: str, message: str, now: float, **values: str) -> None:
        """A reminder's event (dialogue.reminder_runner): ids and users, never the words."""
        self._publish(event, message, {"clock": repr(now), **values})
        self._node.get_logger().info(f"reminders: {message}")

    def _publish(self, event: str, message: str, values: dict[str, str]) -> None:
        level = "warning" if event in ("skip", "unavailable") else "info"
        self._events.publish(event_status(self._node, "proactive", level, message, **{"event": event, **values}))
