"""Stand-ins for local LLM servers that cannot run here, as real loopback HTTP servers:

- `FakeOllama`: Ollama's own API (GET /api/tags, /api/version) and its OpenAI-compatible
  /v1/models and streamed /v1/chat/completions (the project's scripted server, dialogue_fake_llm);
- `FakeLlamaCpp`: llama.cpp's server (GET /health, /v1/models).
"""

from __future__ import annotations

from pytest_httpserver import HTTPServer

import dialogue_fake_llm as fake

OLLAMA_MODELS = ("qwen2.5:7b", "llama3.2:1b")


class FakeOllama(fake.ScriptedLlm):
    def __init__(self, models: tuple[str, ...] = OLLAMA_MODELS) -> None:
        super().__init__()
        self.server.expect_request("/api/tags", method="GET").respond_with_json(
            {"models": [{"name": m, "model": m, "size": 1} for m in models]}
        )
        self.server.expect_request("/api/version", method="GET").respond_with_json({"version": "0.9.0"})
        self.server.expect_request("/v1/models", method="GET").respond_with_json(
            {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "library"} for m in models]}
        )
        self.default = lambda: fake.text("Hello ", "from the fake Ollama.")

    @property
    def host(self) -> str:
        """What OLLAMA_HOST says for it."""
        return f"127.0.0.1:{self.server.port}"


class FakeLlamaCpp:
    def __init__(self, model: str = "local-gguf") -> None:
        self.server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
        self.server.expect_request("/health", method="GET").respond_with_json({"status": "ok"})
        self.server.expect_request("/v1/models", method="GET").respond_with_json(
            {"object": "list", "data": [{"id": model, "object": "model"}]}
        )
        self.server.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def close(self) -> None:
        self.server.clear()
        if self.server.is_running():
            self.server.stop()
