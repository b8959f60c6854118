"""How `fay-ros web` starts the rosbridge v2 websocket endpoint.

Two servers, one allow-list (fay_ros.web.allowlist):

- pip setup: `rosbridge-server-rs` (PyPI). Its wheel ships one binary per ROS distro; with
  the ros-jazzy-* wheels it needs three things (scripts/post_setup.d/web.sh does the first two
  once, `rs_command` the third on every start):
    1. the exec bit on the binary (pip installs it 0644);
    2. `librmw_implementation.so`, which the wheels do not ship: a symlink in <venv>/lib
       to the one RMW they do ship, librmw_fastrtps_cpp.so;
    3. libpython preloaded (LD_PRELOAD): the wheels' *_rosidl_generator_py libraries use
       Python symbols without linking libpython, and the binary is no Python process;
  and the wheels' library folders on LD_LIBRARY_PATH. rosapi is turned off (--no-rosapi):
  the face needs none of it and the allow-list denies every service anyway.
- apt ROS 2: the real `rosbridge_server` (rosbridge_websocket node) with its
  topics_glob / services_glob / params_glob parameters from a parameter file. We run the
  node with `ros2 run ... --params-file` rather than its XML launch file because the launch
  file passes the glob strings through YAML, which turns "[a, b]" into a list and breaks the
  node's string parameter (rosbridge_suite issue #727).
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..common.errors import ConfigError
from .allowlist import AllowList

BRIDGE_NODE_NAME = "web_bridge"
SUPPORTED_DISTROS = ("jazzy", "humble")


class BridgeUnavailable(ConfigError, RuntimeError):
    """The requested rosbridge server cannot be started here; the message says why and what to do."""


@dataclass
class BridgeCommand:
    kind: str  # "rs" or "apt"
    argv: list[str]
    env: dict[str, str]
    config_files: dict[str, str] = field(default_factory=dict)  # path -> content to write first

    def write_config(self) -> None:
        for path, content in self.config_files.items():
            Path(path).write_text(content, encoding="utf-8")


def venv_prefix() -> Path:
    return Path(sys.prefix)


def rs_binary(distro: str | None = None, prefix: Path | None = None) -> Path:
    """Path of the rosbridge-server-rs binary for `distro` (default: $ROS_DISTRO or jazzy)."""
    distro = distro or os.environ.get("ROS_DISTRO") or "jazzy"
    if distro not in SUPPORTED_DISTROS:
        raise BridgeUnavailable(
            f"rosbridge-server-rs has no binary for ROS_DISTRO={distro!r} (it ships: {', '.join(SUPPORTED_DISTROS)})"
        )
    try:
        import rosbridge_server_rs
    except ImportError:
        raise BridgeUnavailable(
            "rosbridge-server-rs is not installed: run `make setup` (requirements/web.txt)"
        ) from None
    binary = Path(rosbridge_server_rs.__file__).with_name(f"rosbridge_server_rs_{distro}")
    if not binary.is_file():
        raise BridgeUnavailable(f"{binary} is missing: reinstall rosbridge-server-rs (`make setup`)")
    if not os.access(binary, os.X_OK):
        raise BridgeUnavailable(
            f"{binary} is not executable: run `make setup` (scripts/post_setup.d/web.sh sets the exec bit)"
        )
    return binary


def libpython_path() -> Path:
    """The shared libpython of this interpreter (preloaded into the bridge binary)."""
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    for name in (sysconfig.get_config_var("INSTSONAME"), sysconfig.get_config_var("LDLIBRARY")):
        if name and ".so" in name:
            candidate = Path(libdir) / name
            if candidate.exists():
                return candidate
    raise BridgeUnavailable(
        f"no shared libpython for {sys.executable} in {libdir!r}: the bridge needs a "
        "Python built with --enable-shared (Debian's python3.11 and pyenv with "
        "PYTHON_CONFIGURE_OPTS=--enable-shared are)"
    )


def wheel_library_path(prefix: Path | None = None) -> list[str]:
    """<venv>/lib and the ros_*.libs folders of the ros-jazzy-* wheels."""
    prefix = prefix or venv_prefix()
    site = Path(sysconfig.get_paths()["purelib"])
    dirs = [str(prefix / "lib")] + sorted(str(p) for p in site.glob("ros_*.libs") if p.is_dir())
    return dirs


def rs_command(
    allow: AllowList,
    *,
    address: str,
    port: int,
    namespace: str,
    config_path: Path,
    env: dict[str, str] | None = None,
    distro: str | None = None,
    url_path: str = "/",
) -> BridgeCommand:
    binary = rs_binary(distro)
    prefix = venv_prefix()
    rmw = prefix / "lib" / "librmw_implementation.so"
    if not rmw.exists():
        raise BridgeUnavailable(
            f"{rmw} is missing: run `make setup` (scripts/post_setup.d/web.sh links it to librmw_fastrtps_cpp.so)"
        )
    env = dict(os.environ if env is None else env)
    library_path = wheel_library_path(prefix) + [p for p in env.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p]
    env["LD_LIBRARY_PATH"] = os.pathsep.join(dict.fromkeys(library_path))
    preload = [str(libpython_path())] + [p for p in env.get("LD_PRELOAD", "").split() if p]
    env["LD_PRELOAD"] = " ".join(dict.fromkeys(preload))
    env.setdefault("ROS_DISTRO", distro or "jazzy")
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    # Log level warn: at info it logs every handshake's path, and behind the web door that
    # path is a secret (it keeps browser pages that find the loopback port out).
    argv = [
        str(binary),
        "--config",
        str(config_path),
        "--no-rosapi",
        "--log-ansi",
        "false",
        "--log-level",
        "warn",
        "--node-name",
        BRIDGE_NODE_NAME,
        "--namespace",
        namespace,
    ]
    return BridgeCommand("rs", argv, env, {str(config_path): allow.rosbridge_rs_toml(address, port, url_path)})


def apt_rosbridge_available(env: dict[str, str] | None = None) -> bool:
    """True when ROS 2 from apt (sourced) has rosbridge_server and the ros2 CLI."""
    env = dict(os.environ if env is None else env)
    if not shutil.which("ros2", path=env.get("PATH")):
        return False
    for prefix in env.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if (
            prefix
            and (Path(prefix) / "share" / "ament_index" / "resource_index" / "packages" / "rosbridge_server").exists()
        ):
            return True
    return False


def apt_command(
    allow: AllowList, *, address: str, port: int, namespace: str, params_path: Path, env: dict[str, str] | None = None
) -> BridgeCommand:
    env = dict(os.environ if env is None else env)
    if not apt_rosbridge_available(env):
        raise BridgeUnavailable(
            "rosbridge_server is not installed in the sourced ROS 2 "
            "(sudo apt install ros-jazzy-rosbridge-server; source /opt/ros/jazzy/setup.bash)"
        )
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    params = {"/**": {"ros__parameters": allow.rosbridge_server_parameters(address, port)}}
    argv = [
        shutil.which("ros2", path=env.get("PATH")) or "ros2",
        "run",
        "rosbridge_server",
        "rosbridge_websocket",
        "--ros-args",
        "-r",
        f"__node:={BRIDGE_NODE_NAME}",
        "-r",
        f"__ns:={namespace}",
        "--params-file",
        str(params_path),
    ]
    return BridgeCommand("apt", argv, env, {str(params_path): yaml.safe_dump(params, sort_keys=False)})


def choose(
    kind: str,
    allow: AllowList,
    *,
    address: str,
    port: int,
    namespace: str,
    workdir: Path,
    env: dict[str, str] | None = None,
    url_path: str = "/",
) -> BridgeCommand:
    """kind: 'auto' (apt rosbridge_server when installed, else rosbridge-server-rs), 'rs' or 'apt'.
    `url_path` is honoured by rosbridge-server-rs only (rosbridge_server serves every path)."""
    if kind == "auto":
        kind = "apt" if apt_rosbridge_available(env) else "rs"
    if kind == "rs":
        return rs_command(
            allow,
            address=address,
            port=port,
            namespace=namespace,
            config_path=workdir / "rosbridge.toml",
            env=env,
            url_path=url_path,
        )
    if kind == "apt":
        return apt_command(
            allow,
            address=address,
            port=port,
            namespace=namespace,
            params_path=workdir / "rosbridge_params.yaml",
            env=env,
        )
    raise BridgeUnavailable(f"unknown bridge kind {kind!r} (auto, rs, apt or none)")
