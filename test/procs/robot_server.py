"""A stand-in robot for the ROS tools tests: real services, a real action server and topics.

  python -m procs.robot_server   (node /fay/robot_server; announces ~/ready)

- /robot/dock (std_srvs/Trigger): "docked"; /robot/secret (Trigger): never on the allow-list;
  /robot/light (std_srvs/SetBool); /robot/stats (Trigger): JSON of the calls each service got.
- /fibonacci (test_msgs/action/Fibonacci): one feedback per number. A goal with order >= HOLD
  sends its first feedback and then holds until it is cancelled (or HOLD_LIMIT passes); a goal
  of order LATE_ACCEPT is accepted only once /robot/release (Trigger) is called.
- /robot/battery (std_msgs/Float32, latched): 87.5; /robot/say (std_msgs/String): each message
  heard becomes an event.
- /robot/events (std_msgs/String): what happened, in order ("call /robot/dock", "goal 5",
  "cancel requested", "goal canceled", "goal succeeded", "heard <text>"), for the tests to
  wait on.
"""

import json
import sys
import threading
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import rclpy  # noqa: E402
from rclpy.action import ActionServer, CancelResponse, GoalResponse  # noqa: E402
from rclpy.callback_groups import ReentrantCallbackGroup  # noqa: E402
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor  # noqa: E402
from std_msgs.msg import Float32, String  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402
from test_msgs.action import Fibonacci  # noqa: E402

from fay_ros.common import qos  # noqa: E402
from fay_ros.common.readiness import announce_ready  # noqa: E402

HOLD = 999  # orders from here on hold after the first feedback until cancelled
LATE_ACCEPT = 999  # a goal of this order is accepted only when /robot/release is called
HOLD_LIMIT = 60.0  # seconds a held goal waits for its cancel at most


def main() -> None:
    rclpy.init(args=sys.argv)
    node = rclpy.create_node("robot_server", namespace="/fay")
    group = ReentrantCallbackGroup()
    events = node.create_publisher(String, "/robot/events", qos.EVENTS)
    calls: Counter = Counter()
    lock = threading.Lock()
    cancels: dict[bytes, threading.Event] = {}

    def event(text: str) -> None:
        events.publish(String(data=text))

    def trigger(name: str, message: str):
        def serve(_request, response):
            with lock:
                calls[name] += 1
            event(f"call {name}")
            response.success = True
            response.message = message
            return response

        node.create_service(Trigger, name, serve, callback_group=group)

    trigger("/robot/dock", "docked")
    trigger("/robot/secret", "the secret service was called")

    def light(request, response):
        with lock:
            calls["/robot/light"] += 1
        event(f"call /robot/light {request.data}")
        response.success = True
        response.message = f"light {'on' if request.data else 'off'}"
        return response

    node.create_service(SetBool, "/robot/light", light, callback_group=group)

    def stats(_request, response):
        with lock:
            response.message = json.dumps(dict(calls))
        response.success = True
        return response

    node.create_service(Trigger, "/robot/stats", stats, callback_group=group)

    def execute(goal_handle):
        order = goal_handle.request.order
        cancelled = cancels.setdefault(bytes(goal_handle.goal_id.uuid), threading.Event())
        event(f"goal {order}")
        sequence = [0, 1]
        feedback = Fibonacci.Feedback()
        for i in range(1, max(order, 1)):
            if goal_handle.is_cancel_requested:
                break
            sequence.append(sequence[i] + sequence[i - 1])
            feedback.sequence = sequence
            goal_handle.publish_feedback(feedback)
            if order >= HOLD:
                cancelled.wait(HOLD_LIMIT)
        result = Fibonacci.Result()
        # each event goes out before the client can learn the outcome, so a test that has the
        # outcome never sees this goal's event arrive later, in the next test
        if goal_handle.is_cancel_requested:
            event("goal canceled")
            goal_handle.canceled()
            return result
        result.sequence = sequence
        event("goal succeeded")
        goal_handle.succeed()
        return result

    def cancel(goal_handle):
        event("cancel requested")
        cancels.setdefault(bytes(goal_handle.goal_id.uuid), threading.Event()).set()
        return CancelResponse.ACCEPT

    release = threading.Event()

    def decide(goal_request):
        if goal_request.order == LATE_ACCEPT:
            event(f"goal request {goal_request.order}")
            release.wait(HOLD_LIMIT)
            release.clear()
        return GoalResponse.ACCEPT

    def release_goal(_request, response):
        release.set()
        response.success = True
        return response

    node.create_service(Trigger, "/robot/release", release_goal, callback_group=group)
    ActionServer(
        node, Fibonacci, "/fibonacci", execute, goal_callback=decide, cancel_callback=cancel, callback_group=group
    )
    battery = node.create_publisher(Float32, "/robot/battery", qos.LATCHED)
    battery.publish(Float32(data=87.5))
    node.create_subscription(
        String, "/robot/say", lambda msg: event(f"heard {msg.data}"), qos.EVENTS, callback_group=group
    )
    announce_ready(node)
    executor = MultiThreadedExecutor(num_threads=4)
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass


if __name__ == "__main__":
    main()
