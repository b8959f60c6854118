"""led_mapper: action cues → std_msgs/ColorRGBA on `led/color` and a pattern line on
`led/pattern` (latched) for a simple LED driver.

A thin lifecycle shell (fay_ros.common.lifecycle) over fay_ros.body.led:

- configure reads config/led_map.yaml (parameter `map_file`); a missing or bad table leaves
  the node alive and unconfigured, with the reason (file, key, line) on /diagnostics
  (`fay/led_mapper: state`, ERROR) and `~/ready` false;
- activate shows the idle look; while active, cues change the look and after `hold` seconds
  without a cue the idle look returns; cues that arrive while it is not active are ignored;
- deactivate shows the idle look at once (an inactive companion does not keep an emotion lit);
- the table file is reloaded when it changes (a bad edit is logged with file and key, and
  reported on /diagnostics as status `fay/led_mapper: table` like every reload; the last
  good table stays).

Time: the hold runs on the node clock, so with `use_sim_time:=true` it follows /clock. Only
the table-file polling runs on the steady clock (an edit is taken even while simulated time
stands still).

Live parameters (`ros2 param set`, applied from the next cue): map_file, reload_period,
hold. tick_period is read-only. The pattern line format is documented in
fay_ros/body/led.py and docs/body.md.
"""

from __future__ import annotations

import threading

from pydantic import BaseModel, Field
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from std_msgs.msg import ColorRGBA, String

from fay_msgs.msg import ActionCue

from ..body.body_cue import Cue
from ..body.led import TABLE_FILE, LedMapper, LedState, LedTable, load_led_table, with_hold
from ..body.map_tables import default_table_path
from ..common import qos, topics
from ..common.diagnostics import StatusPublisher, health
from ..common.errors import TableError
from ..common.lifecycle import ManagedNode
from ..common.node_main import run_node
from ..common.params import ConfigError, declare_config
from ..common.reloading import ReloadingTable
from ..common.rostime import file_check_timer, node_seconds, set_timer_period


class LedMapperConfig(BaseModel):
    map_file: str = Field(
        "",
        description="LED mapping table (YAML); empty = the shipped config/led_map.yaml. "
        "A new file must load, else the change is refused with file and line.",
    )
    reload_period: float = Field(
        1.0, ge=0.0, description="Seconds between checks of map_file for edits; 0 = never reload."
    )
    tick_period: float = Field(0.1, gt=0.0, le=5.0, description="Seconds between checks whether to return to idle.")
    hold: float = Field(
        -1.0,
        allow_inf_nan=False,
        description="Seconds a cue's look stays before the idle look returns (0 = keep it); "
        "negative = the table's `hold`.",
    )


LIVE = frozenset({"map_file", "reload_period", "hold"})


def load_table(path: str) -> ReloadingTable[LedTable]:
    try:
        return ReloadingTable(path, load_led_table)
    except TableError as exc:
        raise ConfigError(f"led map table: {exc}") from None


class LedMapperNode(ManagedNode):
    def __init__(self) -> None:
        super().__init__("led_mapper", namespace=topics.DEFAULT_NAMESPACE)
        self.config = declare_config(self, LedMapperConfig, live=LIVE, apply=self._apply_parameters)
        self.table: ReloadingTable[LedTable] | None = None  # set by configure
        self.mapper: LedMapper | None = None
        self._last_line = ""
        self._idle = True
        self.color_publisher = self.create_publisher(ColorRGBA, topics.LED_COLOR, qos.COMMANDS)
        self.pattern_publisher = self.create_publisher(String, topics.LED_PATTERN, qos.LATCHED)
        self.table_status = StatusPublisher(self, "table")  # reloads and rejected edits, on /diagnostics
        # Cues acted on and ignored (not active), on /diagnostics: an operator sees that cues arrive.
        self._cues_acted_on = 0
        self._cues_ignored = 0
        health(self).add("cues", self._cue_health)
        # Cues and timers in separate callback groups: one shared group delayed cues by up to
        # a timer period at p95 (measured, see bench_body). The lock serialises mapper access.
        self._lock = threading.Lock()
        self.create_subscription(
            ActionCue, topics.ACTION_CUE, self._on_cue, qos.EVENTS, callback_group=MutuallyExclusiveCallbackGroup()
        )
        timers = MutuallyExclusiveCallbackGroup()
        # The node clock: under use_sim_time the hold expires when /clock passes it.
        self.create_timer(self.config.tick_period, self._on_tick, callback_group=timers)
        self._reload_timer = file_check_timer(self, self.config.reload_period, self._on_reload, timers)

    # -- lifecycle -------------------------------------------------------------------------
    def configure_node(self) -> None:
        table = load_table(self.config.map_file or str(default_table_path(TABLE_FILE)))
        with self._lock:
            self.table = table
            self.mapper = LedMapper(self._effective(table.table))
        self._report_unmapped(table)
        self.get_logger().info(f"led_mapper configured: {len(table.table.affects)} affects from {table.path}")

    def activate_node(self) -> None:
        self._show_idle("activated")

    def deactivate_node(self) -> None:
        self._show_idle("deactivated")

    def cleanup_node(self) -> None:
        with self._lock:
            self.table = None
            self.mapper = None

    def _show_idle(self, why: str) -> None:
        with self._lock:
            # Not when the process is ending (Ctrl-C): nothing can be sent any more.
            if self.mapper is not None and self.context.ok():
                self._idle = True
                self._show(self.mapper.idle(), why)

    # -- parameters ------------------------------------------------------------------------
    def _effective(self, table: LedTable) -> LedTable:
        """The table as the live `hold` parameter overrides it."""
        return with_hold(table, self.config.hold if self.config.hold >= 0 else None)

    def _apply_parameters(self, config: LedMapperConfig, changed: frozenset[str]) -> None:
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
                if new_table is not None and self._idle and self.active:
                    self._show(self.mapper.idle_state(), "map_file")
        if new_table is not None:
            self._report_unmapped(new_table)
            self.get_logger().info(f"map_file: now {new_table.path}")
            self.table_status.publish("info", f"led map loaded from {new_table.path}", file=str(new_table.path))
        if "reload_period" in changed:
            set_timer_period(self._reload_timer, config.reload_period)

    def _report_unmapped(self, table: ReloadingTable[LedTable]) -> None:
        unmapped = table.table.unmapped_affects()
        if unmapped:
            self.get_logger().warning(f"{table.path}: no look for {', '.join(unmapped)}; they fall back by sentiment")

    # -- inputs and outputs ----------------------------------------------------------------
    def _now(self) -> float:
        return node_seconds(self)

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
            if not self.active or self.mapper is None:
                self._cues_ignored += 1
                self.get_logger().debug(f"cue [{msg.utterance_id}] ignored: not active")
                return
            self._cues_acted_on += 1
            self._idle = False
            self._show(self.mapper.handle(Cue.from_message(msg), self._now()), f"cue [{msg.utterance_id}]")

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
            state = self.mapper.tick(self._now())
            if state is not None:
                self._idle = True
                self._show(state, "hold expired")

    def _on_reload(self) -> None:
        table = self.table
        if table is None:
            return
        result = table.poll()  # file I/O outside the lock
        if result.error:
            self.get_logger().error(f"led map {result.message}")
            self.table_status.publish("error", f"led map {result.message}", file=str(table.path))
        elif result.changed:
            with self._lock:
                if self.table is not table or self.mapper is None:  # map_file changed meanwhile
                    return
                self.mapper.set_table(self._effective(result.table))
                if self._idle and self.active:
                    self._show(self.mapper.idle_state(), "reload")
            self.get_logger().info(f"led map reloaded from {table.path}")
            self.table_status.publish("info", f"led map reloaded from {table.path}", file=str(table.path))


def main(args: list[str] | None = None) -> int:
    return run_node(LedMapperNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
