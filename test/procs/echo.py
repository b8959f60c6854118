"""Echo process for round-trip tests.

echo.py msg <pkg/msg/Type>   : republish every message from `echo_in` on `echo_out`
echo.py srv <pkg/srv/Type>   : serve `echo_srv`; response = fill(Response, seed_of(request))
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import rclpy  # noqa: E402
from rclpy.executors import ExternalShutdownException  # noqa: E402

from fay_ros.common import qos  # noqa: E402
from fay_ros.common.readiness import announce_ready  # noqa: E402
from msgfill import fill, import_type, seed_of  # noqa: E402


def main() -> None:
    kind, type_name = sys.argv[1], sys.argv[2]
    rclpy.init(args=sys.argv)
    node = rclpy.create_node("echo", namespace="/fay")
    cls = import_type(type_name)
    if kind == "msg":
        pub = node.create_publisher(cls, "echo_out", qos.EVENTS)
        node.create_subscription(cls, "echo_in", pub.publish, qos.EVENTS)
    else:

        def serve(request, response):
            return fill(response, seed_of(request))

        node.create_service(cls, "echo_srv", serve)
    announce_ready(node)  # ~/ready, as every fay_ros node does
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass


if __name__ == "__main__":
    main()
