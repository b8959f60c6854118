"""A local HTTP server that speaks the Hugging Face hub's download protocol, for the
`fay-ros models` tests (nothing is ever fetched from huggingface.co in a test).

    HEAD/GET /{repo}/resolve/{revision}/{file}
        an LFS file: 302 to /cdn/{repo}/{file} on `localhost` (another host name than the
        endpoint's 127.0.0.1, so huggingface_hub takes the metadata from the redirect, as it
        does with the hub's CDN), with X-Repo-Commit, X-Linked-Etag (the quoted sha256),
        X-Linked-Size and ETag;
        a small (non-LFS) file: 200 with X-Repo-Commit, ETag (the quoted git blob id) and
        Content-Length.
    GET /cdn/{repo}/{file}: the bytes; `Range: bytes=N-` -> 206 with Content-Range.

`cut_after[file] = N`: the first GET of that file's bytes sends all headers (the full
Content-Length) but only N bytes, then closes the connection. `serve_instead[file]`: bytes
sent in place of the real ones, while the headers still advertise the real ones' hash.
Every request is recorded (method, path, headers).
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

import huggingface_hub.constants

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names


@dataclass
class LocalHub:
    files: dict[str, dict[str, bytes]] = field(default_factory=dict)  # repo -> file -> bytes
    lfs: set[str] = field(default_factory=set)  # file names served as LFS files
    cut_after: dict[str, int] = field(default_factory=dict)
    serve_instead: dict[str, bytes] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> LocalHub:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_HEAD(self) -> None:
                hub.handle(self, head=True)

            def do_GET(self) -> None:
                hub.handle(self, head=False)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()

    def seen(self, method: str, file_name: str) -> list[Request]:
        with self.lock:
            return [r for r in self.requests if r.method == method and r.path.endswith("/" + file_name)]

    def _find(self, repo_and_file: str) -> tuple[str, str, bytes] | None:
        for repo, files in self.files.items():
            prefix = repo + "/"
            if repo_and_file.startswith(prefix) and repo_and_file[len(prefix) :] in files:
                name = repo_and_file[len(prefix) :]
                return repo, name, files[name]
        return None

    def handle(self, h: BaseHTTPRequestHandler, *, head: bool) -> None:
        path = unquote(h.path.split("?")[0])
        with self.lock:
            self.requests.append(Request(h.command, path, {k.lower(): v for k, v in h.headers.items()}))
        if path.startswith("/cdn/"):
            return self._serve_bytes(h, path[len("/cdn/") :], head)
        repo_part, sep, rest = path.lstrip("/").partition("/resolve/")
        _revision, _slash, name = rest.partition("/")
        found = self._find(f"{repo_part}/{name}") if sep else None
        if found is None:
            h.send_response(404)
            h.send_header("X-Error-Code", "EntryNotFound")
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        repo, name, data = found
        if name not in self.lfs:
            return self._body(h, name, data, head, {"X-Repo-Commit": COMMIT, "ETag": f'"{git_blob_id(data)}"'})
        h.send_response(302)
        h.send_header("X-Repo-Commit", COMMIT)
        h.send_header("X-Linked-Etag", f'"{hashlib.sha256(data).hexdigest()}"')
        h.send_header("X-Linked-Size", str(len(data)))
        h.send_header("ETag", f'"{git_blob_id(data)}"')
        h.send_header("Location", f"http://localhost:{self.port}/cdn/{repo}/{name}")
        h.send_header("Content-Length", "0")
        h.end_headers()

    def _serve_bytes(self, h: BaseHTTPRequestHandler, repo_and_file: str, head: bool) -> None:
        found = self._find(repo_and_file)
        if found is None:
            h.send_response(404)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        _repo, name, data = found
        self._body(h, name, data, head, {})

    def _body(self, h: BaseHTTPRequestHandler, name: str, data: bytes, head: bool, headers: dict[str, str]) -> None:
        data = self.serve_instead.get(name, data)
        start = 0
        ranged = h.headers.get("Range", "")
        if ranged.startswith("bytes=") and not head:
            start = int(ranged[len("bytes=") :].split("-")[0])
            h.send_response(206)
            h.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            h.send_response(200)
        for key, value in headers.items():
            h.send_header(key, value)
        h.send_header("Content-Length", str(len(data) - start))
        h.send_header("Accept-Ranges", "bytes")
        h.end_headers()
        if head:
            return
        body = data[start:]
        with self.lock:
            cut = self.cut_after.pop(name, None)
        if cut is not None:
            h.wfile.write(body[:cut])
            h.wfile.flush()
            h.close_connection = True
            return
        h.wfile.write(body)


def point_at(hub: LocalHub, tmp_path, monkeypatch) -> None:
    """This test process and the commands it runs pull from `hub` into `tmp_path`: HF_ENDPOINT,
    FAY_MODELS_DIR, HF_HOME and XDG_CONFIG_HOME set, no token, and not offline (a pull is the
    one network action, whatever offline default another test in this process set)."""
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    monkeypatch.setenv("FAY_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
