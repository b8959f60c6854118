"""Web face, pure parts: the allow-list, the rendered server configurations, the face table
and the start-up errors of `fay-ros web` (no ROS graph, no browser)."""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path

import pytest
import yaml

from fay_ros.cli import build_parser, main
from fay_ros.common import vocabulary
from fay_ros.web.allowlist import NOTHING, AllowList, AllowListError, resolve
from fay_ros.web.bridge import BRIDGE_NODE_NAME, apt_rosbridge_available, choose
from fay_ros.web.face_map import FaceMapError, load_face_map, validate
from fay_ros.web.page_server import LIVE2D_SCRIPTS, Live2DError, find_live2d, web_root

REPO = Path(__file__).resolve().parents[1]
FACE_MAP = REPO / "web" / "face_map.json"


def rosbridge_server_glob_parse(value: str) -> list[str]:
    """How the apt rosbridge_server's rosbridge_websocket node parses its *_glob strings."""
    return [e.strip().strip("'") for e in value[1:-1].split(",") if e.strip().strip("'")]


# --- allow-list -------------------------------------------------------------------------------


def test_default_allowlist_is_directional_and_has_no_services():
    allow = AllowList.build("/fay")
    assert allow.subscribe == ("/fay/action_cue", "/fay/visemes", "/fay/reply", "/fay/robot_speaking")
    assert allow.publish == ("/fay/text_input", "/fay/interrupt")
    assert allow.services == ()
    assert allow.memory_services("/fay") == []


def test_names_resolve_like_ros_and_bad_names_are_refused():
    assert resolve("memory/recall", "/robot1/fay") == "/robot1/fay/memory/recall"
    assert resolve("/diagnostics", "/fay") == "/diagnostics"
    assert resolve("chat", "/") == "/chat"
    assert resolve("memory/*", "/fay") == "/fay/memory/*"
    for bad in ("", "a b", "/*", "/**", "//fay/x", "fay/", "1abc", "/fay/x;rm"):
        with pytest.raises(AllowListError):
            resolve(bad, "/fay")


def test_opening_memory_services_is_detected():
    allow = AllowList.build("/fay", extra_services=("memory/*", "/other/srv"))
    assert allow.memory_services("/fay") == ["/fay/memory/*"]
    assert AllowList.build("/fay", extra_services=("/fay/memory/recall",)).memory_services("/fay") == [
        "/fay/memory/recall"
    ]


def test_rosbridge_rs_configuration_carries_the_allowlist():
    allow = AllowList.build("/fay", extra_subscribe=("speech/final",))
    config = tomllib.loads(allow.rosbridge_rs_toml("127.0.0.1", 9090))
    assert config["address"] == "127.0.0.1" and config["port"] == 9090
    assert config["topics_sub_glob"] == list(allow.subscribe) and "/fay/speech/final" in config["topics_sub_glob"]
    assert config["topics_pub_glob"] == ["/fay/text_input", "/fay/interrupt"]
    # [] means "deny all" for rosbridge-server-rs (omitting the key would mean "allow all").
    assert config["services_glob"] == [] and config["params_glob"] == []


def test_apt_rosbridge_server_parameters_never_mean_allow_all():
    params = AllowList.build("/fay").rosbridge_server_parameters("127.0.0.1", 9090)
    topics = rosbridge_server_glob_parse(params["topics_glob"])
    assert set(topics) == {
        "/fay/action_cue",
        "/fay/visemes",
        "/fay/reply",
        "/fay/robot_speaking",
        "/fay/text_input",
        "/fay/interrupt",
    }
    # An empty list would mean "no restriction" to rosbridge_server: a never-matching pattern instead.
    assert rosbridge_server_glob_parse(params["services_glob"]) == [NOTHING]
    assert rosbridge_server_glob_parse(params["params_glob"]) == [NOTHING]


def _fake_apt_ros(tmp_path: Path) -> dict[str, str]:
    """An environment that looks like a sourced apt ROS 2 with rosbridge_server installed."""
    prefix = tmp_path / "opt_ros"
    marker = prefix / "share" / "ament_index" / "resource_index" / "packages" / "rosbridge_server"
    marker.parent.mkdir(parents=True)
    marker.write_text("")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    ros2 = bindir / "ros2"
    ros2.write_text("#!/bin/sh\nexit 0\n")
    ros2.chmod(ros2.stat().st_mode | stat.S_IXUSR)
    return {"PATH": str(bindir), "AMENT_PREFIX_PATH": str(prefix)}


def test_apt_rosbridge_server_command_and_parameter_file(tmp_path):
    env = _fake_apt_ros(tmp_path)
    assert apt_rosbridge_available(env)
    command = choose(
        "auto", AllowList.build("/fay"), address="127.0.0.1", port=9090, namespace="/fay", workdir=tmp_path, env=env
    )
    assert command.kind == "apt"
    assert command.argv[1:4] == ["run", "rosbridge_server", "rosbridge_websocket"]
    assert f"__node:={BRIDGE_NODE_NAME}" in command.argv and "__ns:=/fay" in command.argv
    params_file = command.argv[command.argv.index("--params-file") + 1]
    command.write_config()
    params = yaml.safe_load(Path(params_file).read_text())["/**"]["ros__parameters"]
    # The globs must reach the node as strings (a YAML list would break its string parameter).
    assert isinstance(params["topics_glob"], str) and isinstance(params["services_glob"], str)
    assert "/fay/text_input" in rosbridge_server_glob_parse(params["topics_glob"])
    assert params["address"] == "127.0.0.1" and params["port"] == 9090


def test_auto_uses_rosbridge_server_rs_without_apt_ros(tmp_path):
    env = {"PATH": str(tmp_path), "LD_LIBRARY_PATH": "/somewhere"}
    assert not apt_rosbridge_available(env)
    command = choose(
        "auto", AllowList.build("/fay"), address="127.0.0.1", port=9191, namespace="/fay", workdir=tmp_path, env=env
    )
    assert command.kind == "rs"
    assert Path(command.argv[0]).name == "rosbridge_server_rs_jazzy" and os.access(command.argv[0], os.X_OK)
    assert "--no-rosapi" in command.argv
    assert "libpython3" in command.env["LD_PRELOAD"]
    assert command.env["LD_LIBRARY_PATH"].endswith("/somewhere")
    assert (Path(command.env["LD_LIBRARY_PATH"].split(os.pathsep)[0]) / "librmw_implementation.so").exists()


# --- the face table -----------------------------------------------------------------------------


def test_shipped_face_map_is_valid_and_maps_the_whole_vocabulary():
    table = load_face_map(FACE_MAP)
    assert set(vocabulary.BEHAVIORS) <= set(table["motion"]["behaviors"])
    assert set(vocabulary.AFFECTS) <= set(table["expression"]["affects"])
    assert table["mouth"]["visemes"]["sil"] == 0.0 and table["mouth"]["visemes"]["aa"] >= 0.8


# How the table picks a motion is tested on face.js itself, in a browser: test_web_face_motion.py.


def _broken(tmp_path: Path, edit) -> Path:
    table = json.loads(FACE_MAP.read_text())
    edit(table)
    path = tmp_path / "face_map.json"
    path.write_text(json.dumps(table))
    return path


@pytest.mark.parametrize(
    "edit, key",
    [
        (lambda t: t["motion"]["behaviors"].pop("wave"), "motion.behaviors.wave"),
        (lambda t: t["motion"]["behaviors"].__setitem__("nod", [0, "1"]), "motion.behaviors.nod"),
        (lambda t: t["expression"]["affects"].__setitem__("sad", "sad_face"), "expression.affects.sad"),
        (lambda t: t["mouth"]["visemes"].__setitem__("aa", 1.5), "mouth.visemes.aa"),
        (lambda t: t["mouth"]["visemes"].__setitem__("xx", 0.5), "mouth.visemes.xx"),
        (lambda t: t["motion"].__setitem__("strong_from_intensity", "high"), "motion.strong_from_intensity"),
        (lambda t: t["svg"]["motions"].pop("2"), "svg.motions.2"),
        (lambda t: t["svg"]["expressions"].pop("F03"), "svg.expressions.F03"),
        (lambda t: t.pop("blink"), "blink"),
    ],
)
def test_bad_face_map_names_file_and_key(tmp_path, edit, key):
    path = _broken(tmp_path, edit)
    with pytest.raises(FaceMapError) as err:
        load_face_map(path)
    assert str(path) in str(err.value) and key in str(err.value)


def test_face_map_with_broken_json_names_line(tmp_path):
    path = tmp_path / "face_map.json"
    path.write_text('{\n  "motion": {\n    "group": "TapBody",\n  }\n}\n')
    with pytest.raises(FaceMapError, match=r"face_map\.json: line 4"):
        load_face_map(path)
    assert validate([]) == ["(top level): expected a JSON object"]


# --- fay-ros web start-up -----------------------------------------------------------------------


def test_cli_defaults_are_loopback_and_port_9090():
    args = build_parser().parse_args(["web"])
    assert args.host == "127.0.0.1" and args.bridge_port == 9090 and args.bridge == "auto"
    assert args.allow_service == []


def test_cli_bad_face_map_stops_with_exit_2(tmp_path, capsys):
    path = _broken(tmp_path, lambda t: t["expression"]["affects"].pop("smile"))
    assert main(["web", "--face-map", str(path), "--bridge", "none", "--port", "18099"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "expression.affects.smile" in err


def test_cli_allow_everything_glob_stops_with_exit_2(capsys):
    assert main(["web", "--allow-service", "/*", "--bridge", "none", "--port", "18099"]) == 2
    assert "would allow every name" in capsys.readouterr().err


def test_cli_incomplete_live2d_folder_stops_with_exit_2(tmp_path, capsys):
    (tmp_path / "live2dcubismcore.min.js").write_text("// user's Cubism Core")
    assert main(["web", "--live2d", str(tmp_path), "--bridge", "none", "--port", "18099"]) == 2
    err = capsys.readouterr().err
    assert "pixi.min.js" in err and "cubism4.min.js" in err


def test_live2d_folder_finds_its_model_and_refuses_paths_outside(tmp_path):
    for name in LIVE2D_SCRIPTS:
        (tmp_path / name).write_text("//")
    (tmp_path / "Hiyori").mkdir()
    (tmp_path / "Hiyori" / "Hiyori.model3.json").write_text("{}")
    assert find_live2d(tmp_path).model == "Hiyori/Hiyori.model3.json"
    with pytest.raises(Live2DError):
        find_live2d(tmp_path, "../etc/passwd")


def test_web_root_holds_page_and_vendored_roslib():
    root = web_root()
    for name in (
        "index.html",
        "face.js",
        "door.js",
        "svg_face.js",
        "live2d_face.js",
        "face_map.json",
        "vendor/roslib.min.js",
        "vendor/roslib.LICENSE",
    ):
        assert (root / name).is_file(), name
    page = (root / "index.html").read_text()
    assert "http://" not in page and "https://" not in page  # nothing from a CDN
