"""A ManagedNode for the lifecycle tests: configure fails with parameter `fail_reason` when it
is set (as a node with a missing model does); its resource is a counter of configure calls."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fay_ros.common.errors import ConfigError  # noqa: E402
from fay_ros.common.lifecycle import ManagedNode  # noqa: E402
from fay_ros.common.node_main import run_node  # noqa: E402


class ManagedProbe(ManagedNode):
    def __init__(self) -> None:
        super().__init__("managed_probe", namespace="/fay")
        self.fail_reason = self.declare_parameter("fail_reason", "").value

    def configure_node(self) -> None:
        if self.fail_reason:
            raise ConfigError(self.fail_reason)


if __name__ == "__main__":
    raise SystemExit(run_node(ManagedProbe))
