"""llm: the embedded offline LLM (fay_ros.llm.embedded) as a lifecycle node, so the
bring-up, `fay-ros status` and tests see on ROS when the model serves, and why not.

`fay-ros llm` runs this node (`--no-ros`: the bare server); the bring-ups start it in the
companion namespace (`/fay/llm`) unless the dialogue uses another endpoint.

- configure loads the GGUF model, starts llama.cpp's server on loopback and waits until it
  has answered its warm-up chat completion. A missing model file, a port in use or a
  warm-up that fails leaves the node alive and unconfigured, with the reason on
  /diagnostics (`fay/llm: state`, ERROR) and `~/ready` false.
- activate: serving (`~/ready` true). deactivate and cleanup stop the server: llama.cpp's
  server cannot hold its clients off while keeping its port, and an inactive model that
  still answers would be a lie. Activating again loads the model again (about 2 s).
- health `fay/llm: server`: model (the file), port (the real one, also with port 0),
  threads, batch_threads, base_url while serving.

Every parameter is read-only (they are the server's start-up options; restart the node to
change them).
"""

from __future__ import annotations

from ..common import topics
from ..common.diagnostics import health
from ..common.lifecycle import ManagedNode
from ..common.node_main import run_node
from ..common.params import ConfigError, declare_config
from ..llm.embedded import (
    MODEL_FILE,
    LocalLlmConfig,
    LocalLlmError,
    LocalLlmServer,
    default_batch_threads,
    default_threads,
)

NODE_NAME = "llm"


class LlmServerNode(ManagedNode):
    def __init__(self) -> None:
        super().__init__(NODE_NAME, namespace=topics.DEFAULT_NAMESPACE)
        self.config = declare_config(self, LocalLlmConfig)
        self.server: LocalLlmServer | None = None
        health(self).add("server", self._server_health)

    # -- lifecycle -------------------------------------------------------------------------
    def configure_node(self) -> None:
        self._start_server()

    def activate_node(self) -> None:
        if self.server is None:  # deactivate stopped it
            self._start_server()

    def deactivate_node(self) -> None:
        self._stop_server("deactivated")

    def cleanup_node(self) -> None:
        self._stop_server("cleaned up")

    def _start_server(self) -> None:
        try:
            server = self.config.start()
        except LocalLlmError as exc:
            raise ConfigError(str(exc)) from None
        self.server = server
        self.get_logger().info(f"ready: {server.describe()}")
        health(self).update(only="server")

    def _stop_server(self, why: str) -> None:
        server, self.server = self.server, None
        if server is not None:
            server.close()
            self.get_logger().info(f"{why}: the server on port {server.port} stopped")
            health(self).update(only="server")

    # -- health ----------------------------------------------------------------------------
    def _server_health(self) -> tuple[str, str, dict[str, str]]:
        server = self.server
        if server is not None:
            return (
                "ok",
                f"serving {server.base_url}",
                {
                    "model": str(server.model_path),
                    "port": str(server.port),
                    "threads": str(server.threads),
                    "batch_threads": str(server.batch_threads),
                    "base_url": server.base_url,
                },
            )
        config = self.config
        return (
            "warning",
            "not serving",
            {
                "model": config.model_file or f"(the shipped {MODEL_FILE})",
                "port": str(config.port),
                "threads": str(config.threads or default_threads()),
                "batch_threads": str(config.batch_threads or default_batch_threads()),
            },
        )


def main(args: list[str] | None = None) -> int:
    return run_node(LlmServerNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
