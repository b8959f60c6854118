"""fay_ros: a talking companion for ROS 2 (Jazzy).

Sub-packages hold pure-Python cores with no ROS import (unit-tested on their own);
`fay_ros.nodes` holds the thin rclpy shells around them; `fay_ros.cli` the `fay-ros` tool.
"""
__version__ = "0.1.0"
