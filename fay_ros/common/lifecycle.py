"""Lifecycle nodes for what owns hardware or a heavy model (mic, asr, tts, the servo and LED
mappers): ROS 2 managed nodes that say on ROS when they are ready and why not.

A ManagedNode declares and validates its parameters in its constructor (invalid parameters
still stop the process with exit code 2: nothing can fix them at run time) and then follows
the lifecycle (`ros2 lifecycle get|set /fay/tts ...`):

- configure: `configure_node()` loads the model, opens the device, reads the tables. It raises
  ConfigError with the reason when it cannot (a missing model, no audio device); the node then
  stays *unconfigured* and alive, and says why on /diagnostics (`fay/<node>: state`, ERROR,
  repeated every second) and on `~/ready` (false), instead of vanishing with a line in a log.
- activate: `activate_node()`; the node serves, `~/ready` is true, state OK "ready".
- deactivate: `deactivate_node()` (stop sound, hold still); `~/ready` false, state WARN.
- cleanup / shutdown: `cleanup_node()` releases what configure took.

Parameter `autostart` (default true): the node configures and activates itself as soon as it
is constructed, so `fay-ros up`, the launch file and tests need no lifecycle manager; with
`autostart:=false` it waits for `ros2 lifecycle set <node> configure` / `activate`.

Callbacks of subscriptions created in the constructor run in every state: a node checks
`self.active` where processing an input only makes sense while it is active.
"""

from __future__ import annotations

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn

from .errors import ConfigError
from .readiness import announce_ready

AUTOSTART = "autostart"


class ManagedNode(LifecycleNode):
    ANNOUNCES_READY_ITSELF = True  # ready when active (see run_node)

    def __init__(self, node_name: str, **kwargs) -> None:
        super().__init__(node_name, **kwargs)
        self.active = False
        self.not_ready_reason = "not configured yet"
        self.autostart = bool(
            self.declare_parameter(
                AUTOSTART,
                True,
                ParameterDescriptor(
                    description="Configure and activate at start (false: wait for `ros2 lifecycle set` configure / "
                    "activate) (read-only: applied at start-up; restart the node to change it)",
                    read_only=True,
                ),
            ).value
        )
        self._refuse_unavailable_transitions()

    def _refuse_unavailable_transitions(self) -> None:
        """rclpy's change_state service raises RCLError for a transition the current state does
        not have (`ros2 lifecycle set <node> activate` twice), and the exception leaves
        executor.spin() and ends the process. rclcpp answers success=false; so does this."""
        service = getattr(self, "_service_change_state", None)
        if service is None:  # no communication interface
            return
        change_state = service.callback

        def refusing(request, response):
            transition = request.transition
            available = {t[0] for t in self._state_machine.available_transitions}
            if not transition.label and transition.id not in available:
                state = self._state_machine.current_state[1]
                self.get_logger().warning(
                    f"refused lifecycle transition {transition.id}: not available in "
                    f"state {state!r} (available: {sorted(available)})"
                )
                response.success = False
                return response
            return change_state(request, response)

        service.callback = refusing

    # -- what a node implements ------------------------------------------------------------
    def configure_node(self) -> None:
        """Take the resources (model, device, tables); raise ConfigError with the reason."""

    def activate_node(self) -> None:
        """Start serving."""

    def deactivate_node(self) -> None:
        """Stop serving, keep the resources."""

    def cleanup_node(self) -> None:
        """Release what configure_node took."""

    # -- the lifecycle ---------------------------------------------------------------------
    def start(self) -> None:
        """Called by run_node once constructed: autostart, or report that it waits."""
        if not self.autostart:
            self.not_ready_reason = "waiting for `ros2 lifecycle set` configure (autostart is false)"
            announce_ready(self, False, self.not_ready_reason, level="warning")
            return
        announce_ready(self, False, "configuring", level="warning")
        self.trigger_configure()
        if self._state_machine.current_state[1] == "inactive":
            self.trigger_activate()

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        try:
            self.configure_node()
        except ConfigError as exc:
            self.not_ready_reason = str(exc)
            self.get_logger().error(f"cannot configure: {exc}")
            try:
                self.cleanup_node()  # whatever configure took before it failed
            except Exception as cleanup_exc:  # noqa: BLE001 - the first failure is the news
                self.get_logger().error(f"cleanup after the failed configure failed: {cleanup_exc}")
            announce_ready(self, False, self.not_ready_reason)
            return TransitionCallbackReturn.FAILURE
        self.not_ready_reason = "configured, not active"
        announce_ready(self, False, self.not_ready_reason, level="warning")
        return super().on_configure(state)

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        try:
            self.activate_node()
        except ConfigError as exc:
            self.not_ready_reason = str(exc)
            self.get_logger().error(f"cannot activate: {exc}")
            announce_ready(self, False, self.not_ready_reason)
            return TransitionCallbackReturn.FAILURE
        self.active = True
        announce_ready(self, True)
        return super().on_activate(state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.active = False
        self.deactivate_node()
        self.not_ready_reason = "deactivated"
        announce_ready(self, False, self.not_ready_reason, level="warning")
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.cleanup_node()
        self.not_ready_reason = "cleaned up (not configured)"
        announce_ready(self, False, self.not_ready_reason, level="warning")
        return super().on_cleanup(state)

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._release()
        return super().on_shutdown(state)

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._release()
        announce_ready(self, False, "error")
        return super().on_error(state)

    def _release(self) -> None:
        if self.active:
            self.active = False
            self.deactivate_node()
        self.cleanup_node()

    def close(self) -> None:
        """At process exit (run_node): stop and release, whatever the state."""
        self._release()
