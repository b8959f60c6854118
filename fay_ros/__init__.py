"""fay_ros: a talking companion for ROS 2 (Jazzy).

Sub-packages hold pure-Python cores with no ROS import (unit-tested on their own);
`fay_ros.nodes` holds the thin rclpy shells around them; `fay_ros.cli` the `fay-ros` tool.
"""

import os

__version__ = "0.1.0"

# One BLAS thread per process unless the user chose otherwise (read when numpy loads, so it is
# set before any of our modules imports numpy). The companion is a dozen small processes on a
# few cores: a BLAS pool per process oversubscribes them, and its spinning threads delayed a
# memory recall (a few small matrix products) by up to 140 ms while the recogniser decoded on
# the other core (docs/ARCHITECTURE.md, "CPU budget").
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
