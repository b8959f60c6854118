"""The loopback HTTP server of the web face.

Serves web/ as static files, `/config.json` (what the page needs to know at run time: the
rosbridge port, the namespace, the typed-chat user id, and which Live2D model it may drive)
and the Live2D folder (the user's, or the installed sample) under `/live2d/`. Nothing is
fetched from anywhere else: the page and roslibjs are local files.

With `fay-ros web --admin` it also serves the admin page (web/admin/) and its file endpoint
(fay_ros.web.admin_http, /admin/api/); without it, everything under /admin is 404.
"""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ..common.errors import ConfigError
from ..common.paths import shipped_file
from .admin_http import API_PREFIX, AdminApi

# What a Live2D folder must hold besides the model. Neither a Cubism core nor a model may be
# shipped with fay_ros, so the user brings them (web/README.md says where each comes from), or
# set-up installs the sample from npm (scripts/post_setup.d/live2d.sh, `--live2d sample`).
# Cubism 4: the renderer plugin bundles the Cubism Framework, and Live2D's core is a script.
LIVE2D_SCRIPTS = ("live2dcubismcore.min.js", "pixi.min.js", "cubism4.min.js")
# Cubism 2: Live2D's core live2d.min.js (the sample's is live2d-widget's copy), the pixi.js 6
# bundle and pixi-live2d-display's Cubism 2 build.
CUBISM2_SCRIPTS = ("live2d.min.js", "pixi.min.js", "cubism2.min.js")
# What `--live2d sample` names: the folder scripts/post_setup.d/live2d.sh assembles in the venv.
SAMPLE_NAME = "sample"
SAMPLE_MODEL = "shizuku/shizuku.model.json"


class Live2DError(ConfigError, ValueError):
    """The Live2D folder lacks a file the page needs; the message names it."""


def web_root() -> Path:
    """web/ of the source tree (editable install), else the installed share/fay_ros/web."""
    root = shipped_file("web")
    if not (root / "index.html").exists():
        raise FileNotFoundError(f"web face files not found (looked in {root} and share/fay_ros/web)")
    return root


def sample_live2d_folder() -> Path:
    """Where set-up installs the Live2D sample: <venv>/live2d/sample."""
    return Path(sys.prefix) / "live2d" / SAMPLE_NAME


@dataclass(frozen=True)
class Live2DAssets:
    folder: Path
    model: str  # path of the model settings file relative to folder, with '/' separators
    cubism: int  # 2 (*.model.json) or 4 (*.model3.json)
    scripts: tuple[str, ...]  # file names in folder the page loads first, in order: core, pixi, plugin

    def page_config(self, default: bool = True) -> dict[str, Any]:
        """The page's `live2d` entry of /config.json: what to load and whether to use it
        without being asked (?face=live2d / ?face=svg choose on the page)."""
        return {
            "scripts": [f"/live2d/{name}" for name in self.scripts],
            "model": f"/live2d/{self.model}",
            "cubism": self.cubism,
            "default": default,
        }


def _cubism_of(model: Path) -> int:
    if model.name.endswith(".model3.json"):
        return 4
    if model.name.endswith(".model.json"):
        return 2
    raise Live2DError(f"Live2D model {model.name!r} is neither a Cubism 4 *.model3.json nor a Cubism 2 *.model.json")


def find_live2d(folder: Path | str, model: str | None = None) -> Live2DAssets:
    """The model and scripts in a Live2D folder; `sample` names the installed sample."""
    if str(folder) == SAMPLE_NAME:
        sample = sample_live2d_folder()
        if not (sample / SAMPLE_MODEL).is_file():
            raise Live2DError(
                f"the Live2D sample is not installed in {sample} (make setup installs it with npm; "
                "FAY_LIVE2D=skip leaves it out)"
            )
        return find_live2d(sample, model or SAMPLE_MODEL)
    folder = Path(folder).expanduser().resolve()
    if not folder.is_dir():
        raise Live2DError(f"Live2D folder {folder} does not exist")
    if model:
        path = (folder / model).resolve()
        if not path.is_file() or folder not in path.parents:
            raise Live2DError(f"Live2D model {model!r} is not a file inside {folder}")
    else:
        found = sorted([*folder.rglob("*.model3.json"), *folder.rglob("*.model.json")])
        if not found:  # say everything that is missing, for the Cubism version its scripts suggest
            scripts = CUBISM2_SCRIPTS if (folder / CUBISM2_SCRIPTS[0]).is_file() else LIVE2D_SCRIPTS
            missing = [name for name in scripts if not (folder / name).is_file()]
            raise Live2DError(
                f"Live2D folder {folder} holds no model file (*.model3.json, *.model.json)"
                + (f" and lacks {', '.join(missing)}" if missing else "")
                + " (see web/README.md)"
            )
        if len(found) != 1:
            raise Live2DError(
                f"Live2D folder {folder} holds {len(found)} model files (*.model3.json, *.model.json); "
                "name one with --live2d-model"
            )
        path = found[0]
    cubism = _cubism_of(path)
    if cubism == 4:
        scripts = LIVE2D_SCRIPTS
        missing = [name for name in scripts if not (folder / name).is_file()]
        hint = "Cubism Core from Live2D, pixi.min.js from pixi.js 6 and cubism4.min.js from pixi-live2d-display"
    else:
        scripts = CUBISM2_SCRIPTS
        missing = [name for name in scripts if not (folder / name).is_file()]
        hint = "the Cubism 2 core, pixi.min.js from pixi.js 6 and cubism2.min.js from pixi-live2d-display"
    if missing:
        raise Live2DError(
            f"Live2D folder {folder} lacks {', '.join(missing)} for its Cubism {cubism} model "
            f"{path.relative_to(folder).as_posix()} (see web/README.md: {hint})"
        )
    return Live2DAssets(folder, path.relative_to(folder).as_posix(), cubism, scripts)


def installed_sample() -> Live2DAssets | None:
    """The installed sample, offered to the page (?face=live2d) when no --live2d is given."""
    try:
        return find_live2d(SAMPLE_NAME)
    except Live2DError:
        return None


class FaceRequestHandler(SimpleHTTPRequestHandler):
    page_config: dict[str, Any] = {}
    live2d: Live2DAssets | None = None
    admin: AdminApi | None = None

    def end_headers(self) -> None:
        # The page and its table change while people edit them; never serve a stale copy.
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        path = urlsplit(self.path).path
        if path == "/config.json":
            body = json.dumps(self.page_config).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if path.startswith("/live2d/"):
            self._send_live2d(unquote(path[len("/live2d/") :]))
            return
        if self._admin_route(path, "GET"):
            return
        super().do_GET()

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        if not self._admin_route(urlsplit(self.path).path, "POST"):
            self.send_error(405)

    def _admin_route(self, path: str, method: str) -> bool:
        """True when the request was an admin one (answered here): 404 while admin is off,
        the file endpoint for /admin/api/, else the static admin page (GET)."""
        if path != "/admin" and not path.startswith("/admin/"):
            return False
        if self.admin is None:
            self.send_error(404, "the admin page is off (fay-ros web --admin)")
            return True
        if path.startswith(API_PREFIX):
            self.admin.handle(self, method)
            return True
        return False  # a static file of web/admin/: served like the face's

    def _send_live2d(self, relative: str) -> None:
        if self.live2d is None:
            self.send_error(404, "no Live2D folder was given to fay-ros web")
            return
        target = (self.live2d.folder / relative).resolve()
        if self.live2d.folder not in target.parents or not target.is_file():
            self.send_error(404)
            return
        data = target.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(target)))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base class signature
        pass  # one line per asset request drowns the bridge's log; errors still reach the page


class FaceServer:
    """The HTTP server in a background thread."""

    def __init__(
        self,
        host: str,
        port: int,
        page_config: dict[str, Any],
        root: Path | None = None,
        live2d: Live2DAssets | None = None,
        admin: AdminApi | None = None,
    ) -> None:
        handler = type(
            "BoundFaceRequestHandler",
            (FaceRequestHandler,),
            {"page_config": page_config, "live2d": live2d, "admin": admin},
        )
        self.root = root or web_root()
        self.httpd = ThreadingHTTPServer((host, port), partial(handler, directory=str(self.root)))
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="fay-web-http", daemon=True)

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def start(self) -> FaceServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)
