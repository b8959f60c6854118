"""DDS round trip of an ActionCue between two processes vs. in-process serialisation."""

from __future__ import annotations

import random
import threading
import time

from bench.stats import ms, percentile

TITLE = "Transport: fay_msgs over DDS between two processes"


def run() -> str:
    from rclpy.serialization import deserialize_message, serialize_message

    from fay_msgs.msg import ActionCue
    from harness import NodeProcess, RosProbe
    from msgfill import fill

    msg = fill(ActionCue(), random.Random(3))
    baseline = []
    for _ in range(2000):
        t0 = time.perf_counter()
        deserialize_message(serialize_message(msg), ActionCue)
        baseline.append(time.perf_counter() - t0)

    echo = NodeProcess("procs.echo", args=["msg", "fay_msgs/msg/ActionCue"])
    probe = RosProbe("bench_probe")
    try:
        echo.wait_ready(probe=probe)
        got = threading.Event()
        probe.node.create_subscription(ActionCue, "echo_out", lambda _m: got.set(), 10)
        pub = probe.publisher(ActionCue, "echo_in")
        probe.wait_for_subscribers(pub)
        probe.wait_for_publishers("echo_out")
        trips = []
        for i in range(300):
            got.clear()
            t0 = time.perf_counter()
            pub.publish(msg)
            if not got.wait(5):
                raise RuntimeError("echo lost a message")
            if i >= 20:  # warm-up excluded
                trips.append(time.perf_counter() - t0)
    finally:
        probe.close()
        echo.stop()
    b50, t50 = percentile(baseline, 0.5), percentile(trips, 0.5)
    return (
        "| measure | p50 | p95 |\n|---|---|---|\n"
        f"| baseline: serialise + deserialise in process | {ms(b50)} | {ms(percentile(baseline, 0.95))} |\n"
        f"| ActionCue round trip through an echo process | {ms(t50)} | {ms(percentile(trips, 0.95))} |\n\n"
        f"Round trip / in-process baseline: **{t50 / b50:.0f}×** (p50). A DDS hop between processes "
        f"costs about {ms(t50 / 2)} one way here, which is the unit every per-stage latency budget "
        "in the pipeline pays per topic crossed."
    )
