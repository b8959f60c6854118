"""fay_ros.common.node_main.spin: the executor goes on spinning when a subscription is destroyed
on another thread while messages flow (rclpy's own executor.spin() ends there with
InvalidHandle, measured within 130-1,050 such subscriptions on this machine; a node or a test
probe spun by it then stops answering)."""

from __future__ import annotations

import threading

import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from std_msgs.msg import UInt32

from fay_ros.common.node_main import spin

CYCLES = 1000  # subscriptions made and destroyed while the node publishes every 0.5 ms


@pytest.mark.parametrize("executor_type", [SingleThreadedExecutor, MultiThreadedExecutor])
def test_spin_goes_on_past_a_subscription_destroyed_on_another_thread(executor_type):
    context = Context()
    rclpy.init(context=context)
    node = rclpy.create_node("spin_race", context=context)
    executor = executor_type(context=context)
    executor.add_node(node)
    publisher = node.create_publisher(UInt32, "~/counter", 10)
    sent = iter(range(1 << 31))
    node.create_timer(0.0005, lambda: publisher.publish(UInt32(data=next(sent))))
    closing = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            spin(executor, lambda: not closing.is_set())
        except BaseException as exc:  # noqa: BLE001 - what ended the spin, for the assertion
            failure.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        for cycle in range(CYCLES):
            heard = threading.Event()
            subscription = node.create_subscription(UInt32, "~/counter", lambda _m, h=heard: h.set(), 10)
            # in the executor's wait set once a message came through it; then destroyed from here
            assert heard.wait(10), f"cycle {cycle}: nothing heard; the spin ended with {failure}"
            node.destroy_subscription(subscription)
        assert thread.is_alive() and not failure, failure
        last = threading.Event()
        node.create_subscription(UInt32, "~/counter", lambda _m: last.set(), 10)
        assert last.wait(10), f"the node no longer spins: {failure}"
    finally:
        closing.set()
        executor.shutdown(timeout_sec=2)
        thread.join(5)
        node.destroy_node()
        rclpy.shutdown(context=context)
    assert not thread.is_alive()
