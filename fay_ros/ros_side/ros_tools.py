"""ROS tools: the agent acts on the robot through an allow-list (fay_ros.agent.ros_tools_config).

`RosTools(node, config)` builds one `fay_ros.dialogue.tools.Tool` per allow-listed entry, using
the given rclpy node (the dialogue node's) for its clients, subscriptions and publishers:

- service `ros_call_<name>`: the arguments are the request fields; `call_async`, awaited from
  asyncio, with the entry's timeout; the answer is the response as compact JSON.
- action `ros_action_<name>`: the arguments are the goal fields; the goal is sent, feedback is
  collected (the last `feedback_limit` messages are reported), the result is summarised with
  its final status. If the goal does not finish within the entry's timeout it is cancelled.
  Cancellation contract: when the asyncio task running the tool is cancelled (an interrupt, a
  new turn, a cancelled background task), the goal is cancelled (`cancel_goal_async`) before
  CancelledError is re-raised, also when the goal is still being accepted.
- topic read `ros_read_<name>`: no arguments; the latest message received since start (with
  its age), or the first one to arrive within the entry's timeout.
- topic publish `ros_publish_<name>`: the arguments are the message fields; with no subscriber
  matched yet it waits up to the entry's timeout for one, then publishes either way and says
  how many subscribers there were.

Types are imported by name and the argument schemas generated from them
(fay_ros.agent.ros_convert). Every tool addresses only its own entry's name, so nothing off
the list is reachable, whatever the model writes. Nothing here blocks the executor: rclpy
futures are awaited through `service_call.await_ros_future`, the one bridge from rclpy futures
into asyncio, and a service tool is `service_call.call_service`, the one service call (the
dialogue's memory gateway and reminders use them too).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from rclpy.action import ActionClient
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from ..agent.ros_convert import (
    ConversionError,
    InterfaceError,
    import_interface,
    properties,
    summarise,
    to_message,
    to_plain,
)
from ..agent.ros_tools_config import RosToolsConfig, load_ros_tools, tool_name
from ..common.errors import ConfigError
from ..dialogue.tools import Tool, ToolContext, ToolError
from .service_call import DISCOVERY_POLL, ServiceCallError, await_ros_future, call_service, settle

CANCEL_WAIT = 2.0  # seconds a cancelled action tool waits for the server to acknowledge the cancel
# action_msgs/msg/GoalStatus codes (fixed by the action protocol; action_msgs itself is not pinned)
STATUS_NAMES = {
    0: "unknown",
    1: "accepted",
    2: "executing",
    3: "canceling",
    4: "succeeded",
    5: "canceled",
    6: "aborted",
}
QOS = {
    "reliable": QoSProfile(
        depth=10,
        history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    ),
    "latched": QoSProfile(
        depth=1,
        history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    ),
    "best_effort": QoSProfile(
        depth=10,
        history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.VOLATILE,
    ),
}


class ThreadSafeActionClient(ActionClient):
    """rclpy's ActionClient, safe to send from a thread other than the executor's.

    rclpy (Jazzy) sends a goal, result or cancel request first and records its sequence number
    afterwards; an executor thread that takes the response in between finds no such request,
    logs "Ignoring unexpected goal response" and drops it, so the request's future never
    completes. `fay-ros openai` sends from its asyncio thread while the client node spins on
    another: with 20 concurrent streams some requests hung until the client's timeout. Here a
    request is sent and recorded under one lock, and responses are taken under the same lock,
    so a response is never taken before its request is known."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._request_lock = threading.RLock()

    def send_goal_async(self, *args: Any, **kwargs: Any) -> Any:
        with self._request_lock:
            return super().send_goal_async(*args, **kwargs)

    def _get_result_async(self, goal_handle: Any) -> Any:
        with self._request_lock:
            return super()._get_result_async(goal_handle)

    def _cancel_goal_async(self, goal_handle: Any) -> Any:
        with self._request_lock:
            return super()._cancel_goal_async(goal_handle)

    def take_data(self) -> Any:
        with self._request_lock:
            return super().take_data()


async def _wait_discovered(is_ready: Any, deadline: float, what: str) -> None:
    while not is_ready():
        if time.monotonic() >= deadline:
            raise ToolError(f"{what} is not available (not running?)")
        await asyncio.sleep(DISCOVERY_POLL)


def _arguments(cls: Any, args: dict[str, Any], what: str) -> Any:
    try:
        return to_message(cls, args, what)
    except ConversionError as exc:
        raise ToolError(f"invalid arguments: {exc}") from None


class RosTools:
    """The tools of one allow-list on one node. `tools` is the list to register."""

    def __init__(self, node: Node, config: RosToolsConfig, source: str = "tools_file") -> None:
        self._node = node
        self._group = ReentrantCallbackGroup()
        self._handles: list[Any] = []  # clients, subscriptions, publishers (destroyed in close)
        self.tools: list[Tool] = []
        builders = {
            "services": self._service,
            "actions": self._action,
            "topics_read": self._reader,
            "topics_publish": self._publisher,
        }
        for kind, index, entry in config.entries():
            try:
                cls = import_interface(entry.type)
                tool = builders[kind](tool_name(kind, entry), entry, cls)
            except InterfaceError as exc:
                self.close()
                raise ConfigError(f"{source}: {kind}[{index}] ({entry.name}): {exc}") from None
            self.tools.append(tool)

    @classmethod
    def from_file(cls, node: Node, path: Path | str) -> RosTools:
        """Load and validate the allow-list (a TableError, a ConfigError, names file, key and line)."""
        return cls(node, load_ros_tools(path), source=str(path))

    @staticmethod
    def _describe(entry: Any, what: str) -> str:
        return f"{entry.description} (ROS {what} {entry.name}, {entry.type})"

    # -- services ----------------------------------------------------------------------------

    def _service(self, name: str, entry: Any, srv: Any) -> Tool:
        client = self._node.create_client(srv, entry.name, callback_group=self._group)
        self._handles.append(client)

        async def call(args: dict[str, Any], _ctx: ToolContext) -> str:
            request = _arguments(srv.Request, args, "request")
            try:  # one budget for discovery and the answer
                response = await call_service(client, request, discover_until=time.monotonic() + entry.timeout)
            except ServiceCallError as exc:
                if exc.absent:
                    raise ToolError(f"service {entry.name} is not available (not running?)") from None
                raise ToolError(f"{exc} (timeout {entry.timeout:g}s)") from None
            return summarise(to_plain(response))

        return Tool(name, self._describe(entry, "service"), properties(srv.Request), call)

    # -- actions -----------------------------------------------------------------------------

    def _action(self, name: str, entry: Any, action: Any) -> Tool:
        client = ThreadSafeActionClient(self._node, action, entry.name, callback_group=self._group)
        self._handles.append(client)

        async def send(args: dict[str, Any], _ctx: ToolContext) -> str:
            goal = _arguments(action.Goal, args, "goal")
            deadline = time.monotonic() + entry.timeout
            await _wait_discovered(client.server_is_ready, deadline, f"action server {entry.name}")
            feedback: deque[Any] = deque(maxlen=max(1, entry.feedback_limit))
            count = [0]

            def on_feedback(msg: Any) -> None:  # executor thread
                count[0] += 1
                feedback.append(to_plain(msg.feedback))

            send_future = client.send_goal_async(goal, feedback_callback=on_feedback)
            try:
                async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                    await await_ros_future(send_future)
                    handle = send_future.result()
                    if handle is None or not handle.accepted:
                        return f"the action server {entry.name} rejected the goal"
                    wrapped = (await await_ros_future(handle.get_result_async())).result()
            except TimeoutError:
                await _cancel_goal(send_future)
                raise ToolError(
                    f"action {entry.name} did not finish within {entry.timeout:g}s; the goal was cancelled"
                ) from None
            except asyncio.CancelledError:
                with contextlib.suppress(Exception):  # nothing may keep the cancellation from propagating
                    await _cancel_goal(send_future)
                raise
            status = STATUS_NAMES.get(wrapped.status, str(wrapped.status))
            text = f"status: {status}; result: {summarise(to_plain(wrapped.result))}"
            if entry.feedback_limit and count[0]:
                text += f"; feedback ({count[0]} received, last {len(feedback)}): {summarise(list(feedback))}"
            return text

        return Tool(name, self._describe(entry, "action"), properties(action.Goal), send)

    # -- topics ------------------------------------------------------------------------------

    def _reader(self, name: str, entry: Any, msg_type: Any) -> Tool:
        lock = threading.Lock()
        latest: list[tuple[float, Any]] = []
        waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = []

        def on_message(msg: Any) -> None:  # executor thread
            with lock:
                latest[:] = [(time.monotonic(), msg)]
                woken, waiters[:] = list(waiters), []
            for loop, future in woken:
                with contextlib.suppress(RuntimeError):  # that reader's loop has closed
                    loop.call_soon_threadsafe(settle, future, None)

        self._handles.append(
            self._node.create_subscription(msg_type, entry.name, on_message, QOS[entry.qos], callback_group=self._group)
        )

        async def read(_args: dict[str, Any], _ctx: ToolContext) -> str:
            loop = asyncio.get_running_loop()
            arrived: asyncio.Future | None = None
            with lock:
                if not latest:
                    arrived = loop.create_future()
                    waiters.append((loop, arrived))
            if arrived is not None:
                try:
                    await asyncio.wait_for(arrived, entry.timeout)
                except TimeoutError:
                    raise ToolError(f"no message on {entry.name} within {entry.timeout:g}s") from None
                finally:
                    with lock:
                        waiters[:] = [w for w in waiters if w[1] is not arrived]
            with lock:
                received, msg = latest[0]
            return f"latest message ({time.monotonic() - received:.1f}s ago): {summarise(to_plain(msg))}"

        return Tool(name, self._describe(entry, "topic to read"), {}, read)

    def _publisher(self, name: str, entry: Any, msg_type: Any) -> Tool:
        publisher = self._node.create_publisher(msg_type, entry.name, QOS[entry.qos])
        self._handles.append(publisher)

        async def publish(args: dict[str, Any], _ctx: ToolContext) -> str:
            msg = _arguments(msg_type, args, "message")
            # a subscriber that is still being matched would miss the message (volatile QoS)
            deadline = time.monotonic() + entry.timeout
            while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
                await asyncio.sleep(DISCOVERY_POLL)
            publisher.publish(msg)
            count = publisher.get_subscription_count()
            return f"published on {entry.name} ({count} subscriber{'' if count == 1 else 's'})"

        return Tool(name, self._describe(entry, "topic to publish"), properties(msg_type), publish)

    def close(self) -> None:
        for handle in self._handles:
            if isinstance(handle, ActionClient):
                handle.destroy()
            elif hasattr(handle, "srv_name"):
                self._node.destroy_client(handle)
            elif hasattr(handle, "publish"):
                self._node.destroy_publisher(handle)
            else:
                self._node.destroy_subscription(handle)
        self._handles.clear()


async def _cancel_goal(send_future: Any) -> None:
    """Cancel the goal of `send_future`: at once when it was accepted, else as soon as the
    server accepts it. Waits up to CANCEL_WAIT for the server's answer (also when the calling
    task is being cancelled: the cancel request has already been sent)."""
    if not send_future.done():

        def cancel_when_accepted(f: Any) -> None:  # executor thread: must not raise
            try:
                handle = f.result()
                if handle is not None and handle.accepted:
                    handle.cancel_goal_async()
            except Exception:  # noqa: BLE001 - a failed send has no goal to cancel
                pass

        send_future.add_done_callback(cancel_when_accepted)
        return
    handle = send_future.result()
    if handle is None or not handle.accepted:
        return
    cancel_future = handle.cancel_goal_async()
    try:
        await asyncio.wait_for(asyncio.shield(await_ros_future(cancel_future)), CANCEL_WAIT)
    except (TimeoutError, asyncio.CancelledError):
        pass
