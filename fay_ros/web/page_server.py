"""The loopback HTTP server of the web face.

Serves web/ as static files, `/config.json` (what the page needs to know at run time: the
rosbridge port, the namespace, the typed-chat user id, and whether a Live2D model was
supplied) and, when the user supplied one, their Live2D folder under `/live2d/`. Nothing is
fetched from anywhere else: the page and roslibjs are local files.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ..common.errors import ConfigError
from ..common.paths import shipped_file

# What a Live2D folder must hold: neither Cubism Core nor a model may be shipped with
# fay_ros, and the Cubism 4 renderer plugin bundles the Cubism Framework, so the user brings
# all of them (web/README.md says where each comes from).
LIVE2D_SCRIPTS = ("live2dcubismcore.min.js", "pixi.min.js", "cubism4.min.js")


class Live2DError(ConfigError, ValueError):
    """The Live2D folder lacks a file the page needs; the message names it."""


def web_root() -> Path:
    """web/ of the source tree (editable install), else the installed share/fay_ros/web."""
    root = shipped_file("web")
    if not (root / "index.html").exists():
        raise FileNotFoundError(f"web face files not found (looked in {root} and share/fay_ros/web)")
    return root


@dataclass(frozen=True)
class Live2DAssets:
    folder: Path
    model: str  # path of the .model3.json relative to folder, with '/' separators


def find_live2d(folder: Path, model: str | None = None) -> Live2DAssets:
    folder = Path(folder).expanduser().resolve()
    if not folder.is_dir():
        raise Live2DError(f"Live2D folder {folder} does not exist")
    missing = [name for name in LIVE2D_SCRIPTS if not (folder / name).is_file()]
    if missing:
        raise Live2DError(f"Live2D folder {folder} lacks {', '.join(missing)} (see web/README.md: Cubism Core "
                          "from Live2D, pixi.min.js from pixi.js 6 and cubism4.min.js from pixi-live2d-display)")
    if model:
        path = (folder / model).resolve()
        if not path.is_file() or folder not in path.parents:
            raise Live2DError(f"Live2D model {model!r} is not a file inside {folder}")
    else:
        found = sorted(folder.rglob("*.model3.json"))
        if len(found) != 1:
            raise Live2DError(f"Live2D folder {folder} holds {len(found)} *.model3.json files; "
                              "name one with --live2d-model")
        path = found[0]
    return Live2DAssets(folder, path.relative_to(folder).as_posix())


class FaceRequestHandler(SimpleHTTPRequestHandler):
    page_config: dict[str, Any] = {}
    live2d: Live2DAssets | None = None

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
            self._send_live2d(unquote(path[len("/live2d/"):]))
            return
        super().do_GET()

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

    def __init__(self, host: str, port: int, page_config: dict[str, Any], root: Path | None = None,
                 live2d: Live2DAssets | None = None) -> None:
        handler = type("BoundFaceRequestHandler", (FaceRequestHandler,),
                       {"page_config": page_config, "live2d": live2d})
        self.root = root or web_root()
        self.httpd = ThreadingHTTPServer((host, port), partial(handler, directory=str(self.root)))
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="fay-web-http", daemon=True)

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def start(self) -> "FaceServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)
