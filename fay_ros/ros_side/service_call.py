"""The one ROS service call made from asyncio off the executor thread (the memory gateway, the
reminders port, the allow-listed ROS tools): wait for the service to be discovered, send the
request, await the rclpy future (`await_ros_future`) with a timeout, and withdraw the request
when the wait ends without an answer (timed out or cancelled), so no late response is kept.

Each caller decides how long discovery may take (a memory node started with the dialogue may
not be discovered in the first seconds) and turns `ServiceCallError` into its own answer."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..common.errors import FayError

DISCOVERY_POLL = 0.05  # seconds between checks whether a service / action server has been discovered
# Seconds after a caller started in which its calls wait for a service to be discovered (DDS
# discovery of a node started at the same time), instead of failing its first requests.
DISCOVERY_GRACE = 15.0


def settle(future: asyncio.Future[Any], result: Any) -> None:
    """Complete an asyncio future with `result` unless it is already done (say, cancelled by
    its waiter); scheduled on the future's loop with `call_soon_threadsafe`."""
    if not future.done():
        future.set_result(result)


async def await_ros_future(future: Any) -> Any:
    """Wait in asyncio for an rclpy Future completed by the executor thread; returns the
    future (call `.result()`). Cancelling the waiting task leaves the rclpy future alone: the
    caller cleans up (remove_pending_request, cancel_goal_async). A future that completes after
    the waiting loop has closed is ignored (never an exception in the executor)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future = loop.create_future()

    def finished(f: Any) -> None:  # runs in the executor: an exception here would stop its spin
        try:
            loop.call_soon_threadsafe(settle, done, f)
        except RuntimeError:  # the waiting loop has closed (its task was cancelled): nobody waits
            pass

    future.add_done_callback(finished)
    return await done


class ServiceCallError(FayError):
    """A service call that got no response: the service is not discovered (`absent`), did not
    answer in time, or failed. The message names the service."""

    def __init__(self, message: str, *, absent: bool = False) -> None:
        super().__init__(message)
        self.absent = absent


class DiscoveryGrace:
    """When a caller started, for the deadline of its calls' discovery wait."""

    def __init__(self, grace: float = DISCOVERY_GRACE) -> None:
        self.started = time.monotonic()
        self.grace = grace

    def impatient(self, timeout: float) -> float:
        """Wait for discovery within the call's timeout and only inside the grace: after it an
        absent service fails at once (no delay on every turn)."""
        return min(time.monotonic() + timeout, self.started + self.grace)

    def patient(self, timeout: float) -> float:
        """Wait for discovery the call's timeout, and inside the grace until the grace ends (a
        request worth the wait, as a reminder the user asked for)."""
        return max(time.monotonic() + timeout, self.started + self.grace)


async def call_service(client: Any, request: Any, *, discover_until: float, timeout: float | None = None) -> Any:
    """The response of `client`'s service to `request`. Waits for the service to be discovered
    until `discover_until` (time.monotonic()), then for the response at most `timeout` seconds
    (None: until `discover_until`, one budget for both). Raises ServiceCallError."""
    name = client.srv_name
    while not client.service_is_ready():
        if time.monotonic() >= discover_until:
            raise ServiceCallError(f"service {name} is not running", absent=True)
        await asyncio.sleep(DISCOVERY_POLL)
    wait = timeout if timeout is not None else max(0.0, discover_until - time.monotonic())
    future = client.call_async(request)
    try:
        await asyncio.wait_for(await_ros_future(future), wait)
    except TimeoutError:
        client.remove_pending_request(future)
        raise ServiceCallError(
            f"service {name} did not answer in {timeout:g}s"
            if timeout is not None
            else f"service {name} did not answer in time"
        ) from None
    except asyncio.CancelledError:
        client.remove_pending_request(future)
        raise
    response = future.result()
    if response is None:
        raise ServiceCallError(f"service {name} failed")
    return response
