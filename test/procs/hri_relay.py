"""A ROS4HRI listener for the REP-155 tests, in its own process: it subscribes to the asr node's
/humans/voices topics with hri_msgs types (the stand-in built by test/hri_stand_in.py, which
the test process itself cannot load: its libraries need LD_LIBRARY_PATH at process start) and
relays every message as JSON on std_msgs/String topics the test reads.

  hri_relay.py <voice id>:  /humans/voices/<voice id>/speech -> hri_relay/speech,
                            /humans/voices/tracked           -> hri_relay/tracked
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import rclpy  # noqa: E402
from hri_msgs.msg import IdsList, LiveSpeech  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from fay_ros.common import qos  # noqa: E402
from proc_serving import serve  # noqa: E402


def main() -> None:
    args = rclpy.utilities.remove_ros_args(sys.argv)
    voice = args[1]
    rclpy.init(args=sys.argv)
    node = rclpy.create_node("hri_relay", namespace="/fay")
    speech_out = node.create_publisher(String, "hri_relay/speech", qos.EVENTS)
    tracked_out = node.create_publisher(String, "hri_relay/tracked", qos.EVENTS)

    def on_speech(msg: LiveSpeech) -> None:
        speech_out.publish(
            String(
                data=json.dumps(
                    {
                        "incremental": msg.incremental,
                        "final": msg.final,
                        "confidence": msg.confidence,
                        "language": msg.language,
                        "stamp": msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9,
                    }
                )
            )
        )

    def on_tracked(msg: IdsList) -> None:
        tracked_out.publish(String(data=json.dumps({"ids": list(msg.ids)})))

    node.create_subscription(LiveSpeech, f"/humans/voices/{voice}/speech", on_speech, qos.EVENTS)
    node.create_subscription(IdsList, "/humans/voices/tracked", on_tracked, qos.LATCHED)
    serve(node)


if __name__ == "__main__":
    main()
