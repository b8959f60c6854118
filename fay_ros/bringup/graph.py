"""The companion's node set: the one place `fay-ros up`, companion.launch.py and the tests read.

- `config/companion.yaml` holds every node's parameters (standard ROS 2 parameter-file
  layout, `/**/<node>: ros__parameters: ...`), so a user can also pass it to `ros2 run`.
  It is read with the strict YAML loader: a duplicate key, a key beside `ros__parameters`
  or a node that is not part of the companion is an error naming the file, key and line
  (each would otherwise be ignored without a word).
- `LAUNCH_ARGUMENTS` are the few things people change at start-up; `companion_nodes()`
  applies them on top of the YAML and returns the node list with final parameters.
- The models chosen with `fay-ros models use` ($XDG_CONFIG_HOME/fay_ros/models.yaml) set
  the embedded llm server's model file (and the model name the dialogue sends) and the asr
  model, unless a launch argument names them (`llm_base_url`, `llm_model`, `asr_model`).
- `companion_processes()` lists the non-node processes (local LLM server, web face /
  rosbridge endpoint) that the bring-up starts beside the nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, RootModel

from ..common.errors import ConfigError
from ..common.exit_codes import EXIT_CONFIG_ERROR
from ..common.paths import config_file
from ..common.topics import DEFAULT_NAMESPACE
from ..common.yaml_loader import read_yaml, validate
from ..llm.local_servers import LlmChoiceError, apply_llm_choice
from ..models.store import Chosen, chosen_models

RESPAWN_DELAY = 2.0


class BringupError(ConfigError, ValueError):
    """A bring-up option that cannot be used (a ValueError too, as these errors were)."""


class ParameterFileNotFound(ConfigError, FileNotFoundError):
    """The bring-up parameter file does not exist."""


def respawn_after_exit(returncode: int | None) -> bool:
    """Whether a bring-up restarts a process that exited on its own with this code.

    The one rule for `fay-ros up` (supervisor) and companion.launch.py: a crash (any code,
    signals included) is restarted; a configuration error is not, because a restart would
    only repeat it.
    """
    return returncode != EXIT_CONFIG_ERROR


# name -> (default, description). Strings, because launch arguments are strings.
LAUNCH_ARGUMENTS: dict[str, tuple[str, str]] = {
    "namespace": (DEFAULT_NAMESPACE, "ROS namespace of the whole graph"),
    "config": ("", "parameter file to use instead of the installed config/companion.yaml"),
    "audio_source": ("auto", "'auto' (microphone if present, else the bundled demo WAV), 'mic', or a WAV file path"),
    "asr_backend": ("whisper", "speech recogniser: 'whisper' (embedded offline default) or 'vosk'"),
    "asr_model": ("", "ASR model: a vosk model directory, or a faster-whisper model name/path ('' = bundled default)"),
    "asr_language": ("auto", "recognition language: en, zh or auto"),
    "llm": (
        "",
        "a local LLM server in one setting: ollama:MODEL, lmstudio[:MODEL], llamacpp[:MODEL] or embedded "
        "(sets llm_base_url/llm_model; refused beside a different llm_base_url)",
    ),
    "llm_base_url": ("", "OpenAI-compatible endpoint ('' = start and use the embedded offline model on loopback)"),
    "llm_model": ("", "model name at that endpoint ('' = the endpoint's default / embedded model)"),
    "llm_api_key_env": ("", "NAME of the environment variable holding that endpoint's API key (never the key)"),
    "use_web": ("true", "serve the web face (http, loopback) "),
    "use_rosbridge": ("true", "start the rosbridge websocket endpoint on :9090 for the web face"),
    "demo": ("false", "also run the scripted demo talker"),
    "nodes": ("", "comma-separated subset of nodes to start ('' = all)"),
    "use_llm_server": ("auto", "start the embedded LLM server: auto (when llm_base_url is ''), true or false"),
}

_TRUE = {"1", "true", "yes", "on"}


def parse_options(raw: dict[str, Any] | None) -> dict[str, Any]:
    """Launch-argument strings (or Python values) -> typed options, defaults filled in."""
    raw = dict(raw or {})
    unknown = set(raw) - set(LAUNCH_ARGUMENTS)
    if unknown:
        raise BringupError(f"unknown bring-up option(s): {sorted(unknown)}; known: {sorted(LAUNCH_ARGUMENTS)}")
    options: dict[str, Any] = {}
    for name, (default, _description) in LAUNCH_ARGUMENTS.items():
        value = raw.get(name, default)
        if value is None:
            value = default
        if default in ("true", "false"):
            value = value if isinstance(value, bool) else str(value).strip().lower() in _TRUE
        options[name] = value
    try:
        return apply_llm_choice(options)  # `llm` -> llm_base_url / llm_model
    except LlmChoiceError as exc:
        raise BringupError(str(exc)) from None


@dataclass(frozen=True)
class NodeSpec:
    name: str
    module: str
    parameters: dict[str, Any] = field(default_factory=dict)
    respawn: bool = True
    interactive: bool = False  # gets the terminal's stdin in `fay-ros up` (typed input)

    @property
    def executable(self) -> str:
        return self.name


@dataclass(frozen=True)
class ProcessSpec:
    """A non-node process of the bring-up: a `fay-ros` subcommand and its arguments.

    Each bring-up turns it into a command line its own way: `fay-ros up` runs
    `python -m fay_ros.cli ...`; the launch file runs the installed `lib/fay_ros/fay-ros`
    script, whose interpreter is the one colcon built the package with.
    """

    name: str
    args: tuple[str, ...]
    respawn: bool = True


def default_config_path() -> Path:
    """config/companion.yaml: the source tree's, or the installed share/fay_ros copy."""
    return config_file("companion.yaml")


class _NodeParameters(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ros__parameters: dict[str, Any] | None = Field(description="The node's parameters (name: value).")


class ParameterFile(RootModel[dict[str, _NodeParameters]]):
    """A ROS 2 parameter file for the companion: `<namespace>/<node>: ros__parameters: {...}`."""

    def cross_check(self) -> list[tuple[str, str]]:
        known = [name for name, _module in [*NODE_MODULES, DEMO_NODE]]
        problems: list[tuple[str, str]] = []
        seen: dict[str, str] = {}
        for key in self.root:
            name = node_name(key)
            if name not in known:
                problems.append((key, f"{name!r} is not a node of the companion; known: {', '.join(known)}"))
            elif name in seen:
                problems.append((key, f"node {name!r} already has parameters under {seen[name]!r}"))
            seen.setdefault(name, key)
        return problems


def node_name(key: str) -> str:
    """'/**/tts', '/fay/tts' or 'tts' -> 'tts'."""
    return str(key).rsplit("/", 1)[-1]


def load_parameters(path: Path | str | None = None) -> dict[str, dict[str, Any]]:
    """node name -> parameters, from a ROS 2 parameter file (TableError names file, key, line)."""
    path = Path(path) if path else default_config_path()
    if not path.exists():  # a FileNotFoundError too: what callers of the bring-up have caught
        raise ParameterFileNotFound(f"bring-up parameter file not found: {path}")
    parsed = validate(read_yaml(path), ParameterFile)
    return {node_name(key): dict(entry.ros__parameters or {}) for key, entry in parsed.root.items()}


# Nodes a bring-up starts only for some configurations (the embedded model `fay-ros llm`, when
# the dialogue uses it): its status check waits for them, `fay-ros status` lists them once heard.
OPTIONAL_NODES = ("llm",)

# The node set, in start order: (node name, module). Every node here has a console_scripts
# entry of the same name in setup.py (a test checks it). Services first (memory), then the
# nodes that call them, then the producers, so the first spoken question finds the graph up.
NODE_MODULES: list[tuple[str, str]] = [
    ("memory", "fay_ros.nodes.memory"),
    ("dialogue", "fay_ros.nodes.dialogue"),
    ("action_semantics", "fay_ros.nodes.action_semantics"),
    ("tts", "fay_ros.nodes.tts"),
    ("servo_mapper", "fay_ros.nodes.servo_mapper"),
    ("led_mapper", "fay_ros.nodes.led_mapper"),
    ("asr", "fay_ros.nodes.asr"),
    ("mic", "fay_ros.nodes.mic"),
    ("latency_monitor", "fay_ros.nodes.latency_monitor"),
    ("timeline", "fay_ros.nodes.timeline"),
]
DEMO_NODE = ("demo_talker", "fay_ros.nodes.demo_talker")


def embedded_llm_url() -> str:
    """Where the embedded offline LLM (fay-ros llm) listens when no llm_base_url is given."""
    from ..llm.embedded import EMBEDDED_BASE_URL

    return EMBEDDED_BASE_URL


def demo_wav() -> Path:
    """The bundled spoken demo question, played when there is no microphone."""
    return default_config_path().parent / "demo" / "hello_fay.wav"


def has_input_device() -> bool:
    try:
        import sounddevice as sd

        return any(d["max_input_channels"] > 0 for d in sd.query_devices())
    except Exception:  # noqa: BLE001 - no PortAudio, no devices: same answer
        return False


def resolve_audio_source(value: str) -> tuple[str, str]:
    """audio_source option -> (mic `source` parameter, a line saying what the companion hears)."""
    value = str(value or "auto").strip()
    if value == "mic":
        return "", "listening on the default microphone"
    if value == "auto":
        if has_input_device():
            return "", "listening on the default microphone"
        return str(demo_wav()), (
            f"no microphone found: playing the bundled spoken demo ({demo_wav().name}); "
            "type a sentence and press Enter to talk"
        )
    return str(Path(value).expanduser()), f"listening to the WAV file {value}"


def companion_nodes(raw_options: dict[str, Any] | None = None, *, terminal: bool = False) -> list[NodeSpec]:
    """The node list with final parameters for a bring-up with these options.

    `terminal`: the bring-up owns a terminal whose typed lines the timeline may read (`fay-ros
    up`). A launch owns its stdin itself, so there the timeline never offers typed input, and
    `fay-ros type` publishes typed lines from any terminal instead."""
    options = parse_options(raw_options)
    params = load_parameters(options["config"] or None)
    modules = list(NODE_MODULES)
    if options["demo"]:
        modules.append(DEMO_NODE)
    wanted = [n.strip() for n in str(options["nodes"] or "").split(",") if n.strip()]
    if wanted:
        known = {name for name, _module in modules}
        unknown = sorted(set(wanted) - known)
        if unknown:
            raise BringupError(f"option nodes: unknown node(s) {unknown}; known: {sorted(known)}")
        modules = [(name, module) for name, module in modules if name in wanted]
    nodes = []
    chosen = user_models(options)
    for name, module in modules:
        p = dict(params.get(name, {}))
        _apply_options(name, p, options)
        _apply_models(name, p, options, chosen)
        if not terminal and p.get("typed_input"):
            p["typed_input"] = False
        nodes.append(NodeSpec(name, module, p, interactive=bool(p.get("typed_input"))))
    for spec in nodes:
        if spec.name == "mic" and spec.parameters.get("source"):
            # A WAV is played to a companion that can answer it: the first words are not lost
            # to a node still loading (the embedded LLM included, when this bring-up starts it).
            spec.parameters.setdefault(
                "wait_for_nodes",
                [n.name for n in nodes if n.name != "mic"] + (["llm"] if starts_embedded_llm(options) else []),
            )
            spec.parameters.setdefault("wait_for_nodes_s", READY_WAIT)
    return nodes


def _apply_options(name: str, params: dict[str, Any], options: dict[str, Any]) -> None:
    """Launch arguments override the YAML for the parameters they are about."""
    llm_url = options["llm_base_url"] or embedded_llm_url()
    if name == "mic":
        params["source"] = resolve_audio_source(options["audio_source"])[0]
    elif name == "asr":
        params["backend"] = options["asr_backend"]
        if options["asr_model"]:
            params["model"] = options["asr_model"]
        params["language"] = options["asr_language"]
    elif name == "dialogue":
        params["base_url"] = llm_url
        if options["llm_model"]:
            params["model"] = options["llm_model"]
        if options["llm_api_key_env"]:
            params["api_key_env"] = options["llm_api_key_env"]
    elif name == "memory" and options["llm_base_url"]:
        # Reflection uses the same endpoint; the tiny embedded model is not asked to reflect.
        params.setdefault("llm_base_url", options["llm_base_url"])
        if options["llm_model"]:
            params.setdefault("llm_model", options["llm_model"])
        if options["llm_api_key_env"]:
            params["llm_api_key_env"] = options["llm_api_key_env"]


def user_models(options: dict[str, Any]) -> Chosen:
    """The user's `fay-ros models use` choice; a chosen model that is not on this machine is a
    BringupError naming `fay-ros models pull NAME` (nothing is ever downloaded here)."""
    try:
        return chosen_models()
    except ConfigError as exc:
        raise BringupError(str(exc)) from None


def _apply_models(name: str, params: dict[str, Any], options: dict[str, Any], chosen: Chosen) -> None:
    """The chosen models, where no launch argument names one."""
    if name == "asr" and chosen.asr_dir and not options["asr_model"] and options["asr_backend"] == "whisper":
        params["model"] = str(chosen.asr_dir)
    elif name == "dialogue" and chosen.chat and not options["llm_base_url"] and not options["llm_model"]:
        params["model"] = chosen.chat  # the name the embedded server serves it under


READY_WAIT = 180.0  # seconds the bring-up's `fay-ros status --wait` waits for every node


def companion_processes(raw_options: dict[str, Any] | None = None) -> list[ProcessSpec]:
    """Non-node processes of the bring-up: the embedded LLM server, the web face / bridge, and
    one `fay-ros status --wait` that reports when the companion is ready (the embedded LLM
    server, a lifecycle node too, included).

    `fay-ros web` picks the real rosbridge_server when ROS 2 is installed from apt, else
    rosbridge-server-rs; both expose only the allow-listed topics.
    """
    options = parse_options(raw_options)
    processes = []
    if starts_embedded_llm(options):
        from ..llm.embedded import EMBEDDED_HOST, EMBEDDED_PORT

        llm_args: tuple[str, ...] = (
            "llm",
            "--namespace",
            namespace(options),
            "--host",
            EMBEDDED_HOST,
            "--port",
            str(EMBEDDED_PORT),
        )
        chosen = user_models(options)
        if chosen.chat_file and chosen.chat:
            llm_args += ("--model", str(chosen.chat_file), "--model-name", chosen.chat)
        # the lifecycle node `llm` (fay_ros.nodes.llm_server): ready on ROS once the model serves
        processes.append(ProcessSpec("llm", llm_args))
    if options["use_web"] or options["use_rosbridge"]:
        args = ["web", "--namespace", namespace(options)]
        if not options["use_rosbridge"]:
            args += ["--bridge", "none"]
        elif not options["use_web"]:
            args += ["--no-page"]
        processes.append(ProcessSpec("web", tuple(args)))
    # Once: says when every node is ready, or which is not and why (readiness + /diagnostics).
    nodes = ",".join(
        [spec.name for spec in companion_nodes(options)] + [p.name for p in processes if p.name in OPTIONAL_NODES]
    )
    processes.append(
        ProcessSpec(
            "status",
            ("status", "--namespace", namespace(options), "--nodes", nodes, "--wait", str(READY_WAIT), "--quiet"),
            respawn=False,
        )
    )
    return processes


def starts_embedded_llm(options: dict[str, Any]) -> bool:
    """Whether the bring-up starts the embedded LLM server (`use_llm_server`; auto: when no
    llm_base_url is given)."""
    llm_server = str(options["use_llm_server"]).strip().lower()
    if llm_server not in ("auto", "true", "false"):
        raise BringupError(f"option use_llm_server: expected auto, true or false, got {llm_server!r}")
    return llm_server == "true" or (llm_server == "auto" and not options["llm_base_url"])


def namespace(options: dict[str, Any] | None = None) -> str:
    ns = str((options or {}).get("namespace") or DEFAULT_NAMESPACE)
    return ns if ns.startswith("/") else "/" + ns
