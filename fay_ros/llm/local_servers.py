"""Local LLM servers on this machine, and the one `llm` setting that picks an endpoint.

Two things, both pure (no ROS, only the standard library):

- `find_local_servers()`: short probes, in parallel, for the servers people run beside the
  companion: Ollama (`OLLAMA_HOST`, else 127.0.0.1:11434; GET /api/tags lists its models),
  LM Studio (127.0.0.1:1234, GET /v1/models) and a llama.cpp server (127.0.0.1:8080, GET
  /health and /v1/models). Each probe gives up after PROBE_TIMEOUT; a server found is
  returned with its kind, its OpenAI-compatible base url (…/v1), its models and the setting
  that uses it. The embedded model (`fay-ros llm`, port EMBEDDED_PORT) is never "found": it
  is the default already. `FAY_LMSTUDIO_URL` / `FAY_LLAMACPP_URL` move the LM Studio and
  llama.cpp probes to another address (a server started on another port).
- `parse_llm(spec)`: the launch argument `llm:=…` and `fay-ros chat --llm …`, read in one
  place: `ollama:MODEL`, `lmstudio[:MODEL]`, `llamacpp[:MODEL]` or `embedded` -> base url
  and model. The bring-up (fay_ros.bringup.graph) turns it into llm_base_url / llm_model.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ..common.errors import ConfigError
from ..common.urls import is_loopback_url
from .embedded import EMBEDDED_PORT

PROBE_TIMEOUT = 0.3  # seconds per request of a probe: a local server answers in milliseconds
OLLAMA_DEFAULT = "127.0.0.1:11434"
LMSTUDIO_DEFAULT = "http://127.0.0.1:1234"
LLAMACPP_DEFAULT = "http://127.0.0.1:8080"
KINDS = ("ollama", "lmstudio", "llamacpp")
NAMES = {"ollama": "Ollama", "lmstudio": "LM Studio", "llamacpp": "llama.cpp server"}


class LlmChoiceError(ConfigError, ValueError):
    """An `llm` setting that cannot be used; the message says the forms that can."""


# ------------------------------------------------------------------------------- addresses


def ollama_root(env: Mapping[str, str] | None = None) -> str:
    """Ollama's address as its own client reads OLLAMA_HOST: `host`, `host:port`,
    `http(s)://host:port`; a bind-all address (0.0.0.0, ::) is reached on loopback."""
    env = os.environ if env is None else env
    raw = (env.get("OLLAMA_HOST") or "").strip() or OLLAMA_DEFAULT
    scheme = "http"
    if "://" in raw:
        scheme, _sep, raw = raw.partition("://")
    raw = raw.rstrip("/")
    parts = urllib.parse.urlsplit(f"//{raw}")
    host = parts.hostname or "127.0.0.1"
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    try:
        port = parts.port or (443 if scheme == "https" else 11434)
    except ValueError:
        port = 11434
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}"


def _root(env: Mapping[str, str], name: str, default: str) -> str:
    value = (env.get(name) or "").strip().rstrip("/") or default
    value = value if "://" in value else "http://" + value
    return value[: -len("/v1")] if value.endswith("/v1") else value


def server_roots(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """kind -> the address probed for it (no /v1)."""
    env = os.environ if env is None else env
    return {
        "ollama": ollama_root(env),
        "lmstudio": _root(env, "FAY_LMSTUDIO_URL", LMSTUDIO_DEFAULT),
        "llamacpp": _root(env, "FAY_LLAMACPP_URL", LLAMACPP_DEFAULT),
    }


# ------------------------------------------------------------------------------ the choice


@dataclass(frozen=True)
class LlmChoice:
    """What an `llm` setting names: `base_url` '' = the embedded model (the bring-up starts it)."""

    kind: str
    base_url: str
    model: str

    @property
    def spec(self) -> str:
        return self.kind + (f":{self.model}" if self.model else "")


LLM_FORMS = "ollama:MODEL, lmstudio[:MODEL], llamacpp[:MODEL] or embedded"


def parse_llm(spec: str, env: Mapping[str, str] | None = None) -> LlmChoice | None:
    """`llm` setting -> LlmChoice (None for ''); LlmChoiceError names the forms."""
    spec = str(spec or "").strip()
    if not spec:
        return None
    kind, _sep, model = spec.partition(":")
    kind, model = kind.strip().lower(), model.strip()
    if kind == "embedded":
        if model:
            raise LlmChoiceError(f"llm: 'embedded' takes no model (got {spec!r}); the embedded model is fixed")
        return LlmChoice("embedded", "", "")
    if kind not in KINDS:
        raise LlmChoiceError(f"llm: {spec!r} is not one of {LLM_FORMS}")
    if kind == "ollama" and not model:
        raise LlmChoiceError("llm: Ollama needs a model name, e.g. llm:=ollama:qwen2.5:7b (`ollama list` shows yours)")
    return LlmChoice(kind, server_roots(env)[kind] + "/v1", model)


def apply_llm_choice(options: dict[str, Any], env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Options with `llm` turned into llm_base_url / llm_model (a new dict).

    An explicit llm_base_url or llm_model that says something else than `llm` is refused (two
    settings for one thing: which one was meant is not guessable). The same value twice is
    fine, so options that were already applied can be applied again. A choice without a model
    (llamacpp, lmstudio) takes llm_model when it is given.
    """
    choice = parse_llm(options.get("llm", ""), env)
    if choice is None:
        return dict(options)
    result = dict(options)
    base_url = str(options.get("llm_base_url") or "")
    model = str(options.get("llm_model") or "")
    if base_url and base_url.rstrip("/") != choice.base_url:
        raise LlmChoiceError(
            f"llm:={choice.spec} and llm_base_url:={base_url} name two endpoints: give one of them "
            "(llm:= for a local server, llm_base_url:= for any other endpoint)"
        )
    if model and choice.model and model != choice.model:
        raise LlmChoiceError(f"llm:={choice.spec} and llm_model:={model} name two models: give the model in llm:= only")
    result["llm_base_url"] = choice.base_url
    result["llm_model"] = choice.model or model
    return result


# ---------------------------------------------------------------------------------- probes


@dataclass(frozen=True)
class LocalServer:
    kind: str
    base_url: str  # OpenAI-compatible, ends in /v1
    models: tuple[str, ...] = ()
    version: str = ""

    @property
    def name(self) -> str:
        return NAMES[self.kind]

    @property
    def llm_option(self) -> str:
        """The value of `llm:=` that uses this server (its first model)."""
        return self.kind + (f":{self.models[0]}" if self.models else "")

    def setting(self) -> str:
        """The one setting that uses it with `make run`."""
        return f'make run ARGS="llm:={self.llm_option}"'

    def explicit_setting(self) -> str:
        """The same with the general options (for ros2 launch users and other tools)."""
        model = f" llm_model:={self.models[0]}" if self.models else ""
        return f"llm_base_url:={self.base_url}{model}"

    def describe(self) -> str:
        models = ", ".join(self.models[:5]) + (f" (+{len(self.models) - 5})" if len(self.models) > 5 else "")
        version = f" {self.version}" if self.version else ""
        return f"{self.name}{version} at {self.base_url} ({models or 'no model loaded'})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "base_url": self.base_url,
            "models": list(self.models),
            "version": self.version,
            "llm": self.llm_option,
            "setting": self.setting(),
            "explicit_setting": self.explicit_setting(),
        }


def get_json(url: str, timeout: float) -> Any:
    """GET url -> parsed JSON (loopback never through an environment proxy); raises OSError
    / ValueError (http.client errors included) when there is no JSON answer."""
    handlers = [urllib.request.ProxyHandler({})] if is_loopback_url(url) else []
    opener = urllib.request.build_opener(*handlers)
    with opener.open(urllib.request.Request(url, headers={"Accept": "application/json"}), timeout=timeout) as r:
        return json.loads(r.read(1 << 20))


def _model_ids(answer: Any) -> tuple[str, ...]:
    """/v1/models -> ids; ValueError when it is not that answer (another web server)."""
    if not isinstance(answer, dict) or not isinstance(answer.get("data"), list):
        raise ValueError("not an OpenAI-compatible /v1/models answer")
    return tuple(str(m["id"]) for m in answer["data"] if isinstance(m, dict) and m.get("id"))


def _probe_ollama(root: str, timeout: float) -> LocalServer:
    tags = get_json(root + "/api/tags", timeout)
    if not isinstance(tags, dict) or not isinstance(tags.get("models"), list):
        raise ValueError("not an Ollama /api/tags answer")
    models = tuple(str(m.get("name") or m.get("model")) for m in tags["models"] if isinstance(m, dict))
    version = ""
    try:
        answer = get_json(root + "/api/version", timeout)
        version = str(answer.get("version", "")) if isinstance(answer, dict) else ""
    except Exception:  # noqa: BLE001 - the version is a nicety; tags said it is Ollama
        pass
    return LocalServer("ollama", root + "/v1", models, version)


def _probe_openai(kind: str, root: str, timeout: float) -> LocalServer:
    if kind == "llamacpp":
        health = get_json(root + "/health", timeout)  # 503 while loading: an HTTPError (OSError)
        if not isinstance(health, dict) or health.get("status") != "ok":
            raise ValueError("not a llama.cpp /health answer")
    return LocalServer(kind, root + "/v1", _model_ids(get_json(root + "/v1/models", timeout)))


def _probe(kind: str, root: str, timeout: float) -> LocalServer | None:
    parts = urllib.parse.urlsplit(root)
    if is_loopback_url(root) and parts.port == EMBEDDED_PORT:
        return None  # the embedded model: the default, not a server found
    try:
        return _probe_ollama(root, timeout) if kind == "ollama" else _probe_openai(kind, root, timeout)
    except Exception:  # noqa: BLE001 - refused, timeout, not that server: not found
        return None


def find_local_servers(
    env: Mapping[str, str] | None = None, timeout: float = PROBE_TIMEOUT, kinds: tuple[str, ...] = KINDS
) -> list[LocalServer]:
    """The local LLM servers that answer, in KINDS order; all probes at once (each at most
    a few `timeout`s: Ollama's version and llama.cpp's models are second requests)."""
    roots = server_roots(env)
    with ThreadPoolExecutor(max_workers=len(kinds), thread_name_prefix="llm-probe") as pool:
        futures = [pool.submit(_probe, kind, roots[kind], timeout) for kind in kinds]
        return [s for s in (f.result() for f in futures) if s is not None]


def summary_line(found: list[LocalServer]) -> str:
    """One line for `fay-ros up` on the embedded default: what was found and how to use it."""
    if not found:
        return "no local LLM server found (Ollama, LM Studio, llama.cpp); using the embedded model"
    first = found[0]
    others = "; ".join(s.describe() for s in found[1:])
    return f"found {first.describe()}: use it with {first.setting()}" + (f"; also {others}" if others else "")
