"""A REP-155 person tracker for the presence test, in its own process (hri_msgs is the stand-in
built by test/hri_stand_in.py, which the test process cannot load): publishes the person ids
given as arguments on /humans/persons/tracked (hri_msgs/IdsList) every 0.2 s, as a tracker
repeats the list it sees.

  hri_tracker.py <person id> ...
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import rclpy  # noqa: E402
from hri_msgs.msg import IdsList  # noqa: E402

from fay_ros.common import qos  # noqa: E402
from fay_ros.hearing.voices import PERSONS_TRACKED_TOPIC  # noqa: E402
from proc_serving import serve  # noqa: E402


def main() -> None:
    persons = rclpy.utilities.remove_ros_args(sys.argv)[1:]
    rclpy.init(args=sys.argv)
    node = rclpy.create_node("hri_tracker", namespace="/fay")
    tracked = node.create_publisher(IdsList, PERSONS_TRACKED_TOPIC, qos.EVENTS)

    def publish() -> None:
        msg = IdsList(ids=persons)
        msg.header.stamp = node.get_clock().now().to_msg()
        tracked.publish(msg)

    node.create_timer(0.2, publish)
    serve(node)


if __name__ == "__main__":
    main()
