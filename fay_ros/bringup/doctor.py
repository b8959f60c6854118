"""`fay-ros doctor`'s checks that need no ROS and no other core: each returns a `Check`
(`ok` or `problem`, what was seen, and for a problem the fix). The command (fay_ros/cli/doctor.py)
adds the few that need another package (the whisper model, the ROS graph) and runs them all
at once under one deadline. Every check has its own short timeouts: the doctor never hangs.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..common.urls import is_loopback_url
from ..llm.local_servers import LocalServer, get_json

OK = "ok"
PROBLEM = "problem"
LLM_TIMEOUT = 5.0  # seconds for the first token of the latency check
LOW_DISK_BYTES = 500 * 1024 * 1024


@dataclass
class Check:
    name: str
    status: str  # OK or PROBLEM
    detail: str
    fix: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        fix = f" -> fix: {self.fix}" if self.status == PROBLEM and self.fix else ""
        return f"{self.status:<7} {self.name}: {self.detail}{fix}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def ok(name: str, detail: str, **data: Any) -> Check:
    return Check(name, OK, detail, data=data)


def problem(name: str, detail: str, fix: str, **data: Any) -> Check:
    return Check(name, PROBLEM, detail, fix, data)


def run_checks(checks: dict[str, Callable[[], Check]], deadline: float = 8.0) -> list[Check]:
    """All checks at once; one that raises or is not done by `deadline` seconds is a problem."""
    pool = ThreadPoolExecutor(max_workers=max(1, len(checks)), thread_name_prefix="doctor")
    futures = {name: pool.submit(fn) for name, fn in checks.items()}
    end = time.monotonic() + deadline
    results = []
    for name, future in futures.items():
        try:
            results.append(future.result(timeout=max(0.0, end - time.monotonic())))
        except FutureTimeout:
            results.append(problem(name, f"no answer within {deadline:g} s", "run `fay-ros doctor` again"))
        except Exception as exc:  # noqa: BLE001 - a check that broke is reported, not raised
            results.append(problem(name, f"the check failed: {type(exc).__name__}: {exc}", "report this"))
    pool.shutdown(wait=False, cancel_futures=True)
    return results


# ---------------------------------------------------------------------------------- audio


def check_audio() -> Check:
    name = "audio devices"
    try:
        import sounddevice as sd

        devices = list(sd.query_devices())
    except Exception as exc:  # noqa: BLE001 - no PortAudio: same as no devices
        return ok(name, f"none ({type(exc).__name__}): the demo WAV and headless voice are used", inputs=0, outputs=0)
    inputs = [d["name"] for d in devices if d.get("max_input_channels", 0) > 0]
    outputs = [d["name"] for d in devices if d.get("max_output_channels", 0) > 0]
    if not inputs and not outputs:
        return ok(name, "none: the demo WAV and headless voice are used", inputs=0, outputs=0)
    detail = f"{len(inputs)} input(s) {inputs[:3]}, {len(outputs)} output(s) {outputs[:3]}"
    if not inputs:
        detail += "; no microphone: the demo WAV is played (audio_source:=mic needs one)"
    return ok(name, detail, inputs=len(inputs), outputs=len(outputs))


# ---------------------------------------------------------------------------- ROS settings


def check_dds(env: Mapping[str, str]) -> Check:
    name = "ROS/DDS settings"
    data = {
        "ROS_AUTOMATIC_DISCOVERY_RANGE": env.get("ROS_AUTOMATIC_DISCOVERY_RANGE", ""),
        "ROS_DOMAIN_ID": env.get("ROS_DOMAIN_ID", ""),
        "RMW_IMPLEMENTATION": env.get("RMW_IMPLEMENTATION", ""),
    }
    domain = data["ROS_DOMAIN_ID"] or "0"
    rmw = data["RMW_IMPLEMENTATION"] or "default (rmw_fastrtps_cpp)"
    if not domain.isdigit() or int(domain) > 232:
        return problem(
            name, f"ROS_DOMAIN_ID={domain!r} is not a domain id", "export ROS_DOMAIN_ID=0 (0-101 or 215-232)", **data
        )
    scope = data["ROS_AUTOMATIC_DISCOVERY_RANGE"]
    detail = f"ROS_DOMAIN_ID={domain}, RMW {rmw}, ROS_AUTOMATIC_DISCOVERY_RANGE={scope or 'unset'}"
    if not scope:
        return problem(
            name,
            detail + " (this shell's ROS tools look for nodes on the whole subnet)",
            "export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST (fay-ros up sets it for its own nodes)",
            **data,
        )
    if scope != "LOCALHOST":
        detail += " (nodes visible beyond this machine)"
    return ok(name, detail, **data)


# ---------------------------------------------------------------------------------- models


def check_embedded_model(find_path: Callable[[], Path]) -> Check:
    """find_path: llm.embedded.default_model_path (raises with the fix in its message)."""
    name = "embedded LLM model"
    try:
        path = find_path()
    except Exception as exc:  # noqa: BLE001 - LocalLlmError says what to install
        return problem(name, str(exc), "make setup (requirements/hashed-dialogue-models.txt)")
    return ok(name, f"{path} ({path.stat().st_size / 1e6:.0f} MB)", path=str(path))


# ------------------------------------------------------------------------------------- LLM


def first_token_latency(base_url: str, model: str, api_key: str = "", timeout: float = LLM_TIMEOUT) -> float:
    """Seconds from a streamed chat completion (max_tokens 4) to its first content chunk."""
    body = json.dumps(
        {
            "model": model,
            "messages": [{"role": "user", "content": "Say hi."}],
            "max_tokens": 4,
            "temperature": 0,
            "stream": True,
        }
    ).encode()
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(base_url.rstrip("/") + "/chat/completions", data=body, headers=headers)
    handlers = [urllib.request.ProxyHandler({})] if is_loopback_url(base_url) else []
    start = time.monotonic()
    with urllib.request.build_opener(*handlers).open(request, timeout=timeout) as response:
        for raw in response:
            if time.monotonic() - start > timeout:
                raise TimeoutError(f"no token within {timeout:g} s")
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("data:") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[5:])
            delta = (chunk.get("choices") or [{}])[0].get("delta") or {}
            if delta.get("content") or delta.get("reasoning_content") or delta.get("tool_calls"):
                return time.monotonic() - start
    raise ValueError("the stream ended without a token")


def check_llm(
    base_url: str,
    model: str,
    *,
    explicit: bool,
    api_key: str = "",
    how_to_start: str = "",
    kind: str = "",
    timeout: float = LLM_TIMEOUT,
) -> Check:
    """The endpoint the companion would use. `explicit`: the user named it (unreachable = a
    problem); else it is the embedded default, which is fine when it is not running. `kind`:
    the local server it is (ollama, lmstudio, llamacpp), for the fix of a missing model."""
    name = "LLM"
    data: dict[str, Any] = {"base_url": base_url, "model": model}
    try:
        models = get_json(base_url.rstrip("/") + "/models", min(timeout, 2.0))
        ids = [str(m.get("id")) for m in models.get("data", []) if isinstance(m, dict)]
    except urllib.error.HTTPError:
        ids = []  # some endpoints do not list models; the chat completion below tells
    except (OSError, ValueError, AttributeError) as exc:
        reason = f"{base_url} does not answer ({type(exc).__name__})"
        if explicit:
            return problem(name, reason, how_to_start or "start that server, or check the address", **data)
        return ok(name, f"not running: {reason}; {how_to_start}", running=False, **data)
    if model and ids and model not in ids:
        return problem(
            name,
            f"{base_url} has no model {model!r} (it has: {', '.join(ids[:8]) or 'none'})",
            f"ollama pull {model}" if kind == "ollama" else "load that model, or name one it has",
            models=ids,
            **data,
        )
    model = model or (ids[0] if ids else "")
    data["model"] = model
    try:
        seconds = first_token_latency(base_url, model, api_key, timeout)
    except urllib.error.HTTPError as exc:
        detail = exc.read(200).decode("utf-8", "replace").strip()
        return problem(
            name, f"{base_url} refused a chat completion: HTTP {exc.code} {detail}", "check the model and key", **data
        )
    except (OSError, ValueError) as exc:
        return problem(
            name, f"{base_url} gave no token: {type(exc).__name__}: {exc}", "is the model loaded? try again", **data
        )
    return ok(
        name,
        f"{base_url} model {model or 'default'}: first token in {seconds:.2f} s",
        running=True,
        first_token_s=round(seconds, 3),
        **data,
    )


def check_local_servers(found: list[LocalServer], probed: Mapping[str, str]) -> Check:
    name = "local LLM servers"
    servers = [s.as_dict() for s in found]
    if not found:
        where = ", ".join(f"{k} {v}" for k, v in probed.items())
        return ok(name, f"none found ({where})", servers=servers)
    return ok(name, "; ".join(f"{s.describe()}: use it with {s.setting()}" for s in found), servers=servers)


# -------------------------------------------------------------------------------- web door


def port_open(host: str, port: int, timeout: float = 0.3) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def check_web(host: str, page_port: int, bridge_port: int) -> Check:
    page, bridge = port_open(host, page_port), port_open(host, bridge_port)
    data = {"page": page, "bridge": bridge, "page_port": page_port, "bridge_port": bridge_port}
    if not page and not bridge:
        return ok("web door", f"not running (http://{host}:{page_port}; make run starts it)", **data)
    parts = [f"page http://{host}:{page_port} {'answers' if page else 'closed'}"]
    parts.append(f"websocket :{bridge_port} {'answers' if bridge else 'closed'}")
    return ok("web door", ", ".join(parts) + " (`fay-ros web --show-urls` prints the link)", **data)


# -------------------------------------------------------------------------------- database


def check_sqlite_db(path: Path, known_migrations: list[str], migration_set: str) -> Check:
    """The memory database file: exists, its schema (applied migrations), writable."""
    name = "memory database"
    data: dict[str, Any] = {"path": str(path)}
    if not path.exists():
        parent = next((p for p in path.parents if p.exists()), Path("/"))
        if not os.access(parent, os.W_OK):
            return problem(
                name, f"{path} does not exist and {parent} is not writable", f"mkdir -p {path.parent}", **data
            )
        return ok(name, f"{path} not created yet (the memory node creates it at first start)", exists=False, **data)
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1.0)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            applied = (
                [
                    r[0]
                    for r in conn.execute(
                        "SELECT name FROM _sqlite_migrations WHERE migration_set = ? ORDER BY rowid", [migration_set]
                    )
                ]
                if "_sqlite_migrations" in tables
                else []
            )
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return problem(
            name, f"{path} is not readable as SQLite: {exc}", "move it away; the memory node makes a new one", **data
        )
    data.update(exists=True, schema=applied[-1] if applied else "", applied=len(applied))
    unknown = [m for m in applied if m not in known_migrations]
    if unknown:
        return problem(name, f"{path} has schema {unknown[-1]}, newer than this fay_ros", "update fay_ros", **data)
    writable = os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
    if not writable:
        return problem(name, f"{path} is not writable", f"chmod u+w {path} {path.parent}", **data)
    pending = len(known_migrations) - len(applied)
    schema = applied[-1] if applied else "empty"
    later = f", {pending} migration(s) applied at the next start (with a backup)" if pending else ""
    return ok(name, f"{path}: schema {schema}{later}, writable", **data)


def check_postgres(url: str, safe: str) -> Check:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 5432
    if port_open(host, port, 1.0):
        return ok("memory database", f"PostgreSQL {safe}: {host}:{port} answers", url=safe)
    return problem("memory database", f"PostgreSQL {safe}: {host}:{port} does not answer", "start PostgreSQL", url=safe)


# ------------------------------------------------------------------------------------ disk


def check_disk(places: Mapping[str, Path], low: int = LOW_DISK_BYTES) -> Check:
    name = "disk"
    seen: dict[str, int] = {}
    for what, path in places.items():
        existing = next((p for p in [path, *path.parents] if p.exists()), Path("/"))
        seen[f"{what} ({existing})"] = shutil.disk_usage(existing).free
    detail = ", ".join(f"{what}: {free / 2**30:.1f} GiB free" for what, free in seen.items())
    tight = [what for what, free in seen.items() if free < low]
    if tight:
        return problem(name, detail, f"free space for {', '.join(tight)} (under {low // 2**20} MiB left)", free=seen)
    return ok(name, detail, free=seen)
