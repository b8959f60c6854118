"""led_mapper: action cues → std_msgs/ColorRGBA on `led/color` and a pattern line on
`led/pattern` (latched) for a simple LED driver.

A thin shell over fay_ros.body.led: it reads config/led_map.yaml (parameter `map_file`),
reloads it when it changes (a bad edit is logged with file and key, and reported on
/diagnostics as status `fay/led_mapper: table` like every reload; the last good table
stays), publishes the idle look at start-up and after `hold` seconds without a cue. The
pattern line format is documented in fay_ros/body/led.py and the README.
"""
from __future__ import annotations

import threading
import time

from pydantic import BaseModel, Field
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from std_msgs.msg import ColorRGBA, String

from fay_msgs.msg import ActionCue

from ..body.cue import Cue
from ..body.led import TABLE_FILE, LedMapper, LedState, load_led_table
from ..body.tables import default_table_path
from ..common import qos, topics
from ..common.diagnostics import StatusPublisher
from ..common.errors import TableError
from ..common.node_main import run_node
from ..common.params import ConfigError, declare_config
from ..common.reloading import ReloadingTable


class LedMapperConfig(BaseModel):
    map_file: str = Field("", description="LED mapping table (YAML); empty = the shipped config/led_map.yaml.")
    reload_period: float = Field(1.0, ge=0.0,
                                 description="Seconds between checks of map_file for edits; 0 = never reload.")
    tick_period: float = Field(0.1, gt=0.0, le=5.0, description="Seconds between checks whether to return to idle.")


class LedMapperNode(Node):
    def __init__(self) -> None:
        super().__init__("led_mapper", namespace=topics.DEFAULT_NAMESPACE)
        self.config = declare_config(self, LedMapperConfig)
        path = self.config.map_file or str(default_table_path(TABLE_FILE))
        try:
            self.table = ReloadingTable(path, load_led_table)
        except TableError as exc:
            raise ConfigError(f"led map table: {exc}") from None
        self.mapper = LedMapper(self.table.table)
        self._last_line = ""
        self._idle = True
        self.color_publisher = self.create_publisher(ColorRGBA, topics.LED_COLOR, qos.COMMANDS)
        self.pattern_publisher = self.create_publisher(String, topics.LED_PATTERN, qos.LATCHED)
        self.table_status = StatusPublisher(self, "table")  # reloads and rejected edits, on /diagnostics
        # Cues and timers in separate callback groups: one shared group delayed cues by up to
        # a timer period at p95 (measured, see bench_body). The lock serialises mapper access.
        self._lock = threading.Lock()
        self.create_subscription(ActionCue, topics.ACTION_CUE, self._on_cue, qos.EVENTS,
                                 callback_group=MutuallyExclusiveCallbackGroup())
        timers = MutuallyExclusiveCallbackGroup()
        self.create_timer(self.config.tick_period, self._on_tick, callback_group=timers)
        if self.config.reload_period > 0:
            self.create_timer(self.config.reload_period, self._on_reload, callback_group=timers)
        unmapped = self.table.table.unmapped_affects()
        if unmapped:
            self.get_logger().warning(f"{path}: no look for {', '.join(unmapped)}; they fall back by sentiment")
        self._show(self.mapper.idle_state(), "start-up")
        self.get_logger().info(f"led_mapper ready: {len(self.table.table.affects)} affects from {path}")

    def _show(self, state: LedState, why: str) -> None:
        self.color_publisher.publish(ColorRGBA(r=state.r, g=state.g, b=state.b, a=state.brightness))
        line = state.pattern_line()
        # Re-sending an identical line would restart a driver's pulse phase for nothing.
        if line != self._last_line:
            self.pattern_publisher.publish(String(data=line))
            self._last_line = line
        self.get_logger().info(f"{why}: {state.affect} ({state.reason}) {line}")

    def _on_cue(self, msg: ActionCue) -> None:
        with self._lock:
            self._idle = False
            self._show(self.mapper.handle(Cue.from_message(msg), time.monotonic()), f"cue [{msg.utterance_id}]")

    def _on_tick(self) -> None:
        with self._lock:
            state = self.mapper.tick(time.monotonic())
            if state is not None:
                self._idle = True
                self._show(state, "hold expired")

    def _on_reload(self) -> None:
        result = self.table.poll()  # file I/O outside the lock
        if result.error:
            self.get_logger().error(f"led map {result.message}")
            self.table_status.publish("error", f"led map {result.message}", file=str(self.table.path))
        elif result.changed:
            with self._lock:
                self.mapper.set_table(result.table)
                if self._idle:
                    self._show(self.mapper.idle_state(), "reload")
            self.get_logger().info(f"led map reloaded from {self.table.path}")
            self.table_status.publish("info", f"led map reloaded from {self.table.path}", file=str(self.table.path))


def main(args: list[str] | None = None) -> int:
    return run_node(LedMapperNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
