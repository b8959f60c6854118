"""What the real-browser tests share: Debian's Chromium (driven by Playwright), a page that
fails the test on any JavaScript error, and the face page's state as the DOM shows it.

The `browser` (one per test module), `viewport` and `page` fixtures are in test/conftest.py;
a module that wants another page size defines its own `viewport` fixture.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from fay_msgs.msg import ActionCue, SpeechState
from fay_ros.web.bridge import BRIDGE_NODE_NAME
from harness import NodeProcess, free_port, start_web, wait_until, write_web_access

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
# Software WebGL (SwiftShader) for a headless machine without a GPU; nothing in the background.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DEFAULT_VIEWPORT = {"width": 640, "height": 760}

needs_chromium = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed")


@contextmanager
def open_page(browser, **options) -> Iterator:
    """A new page (options go to browser.new_page); on a normal exit it is closed and the
    JavaScript errors it threw, if any, fail the test."""
    page = browser.new_page(**options)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    page.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


def dom(page) -> dict[str, str]:
    """The page's state as it publishes it: the data-* attributes of <body>."""
    return page.evaluate("Object.assign({}, document.body.dataset)")


def wait_dom(page, key: str, value: str, timeout: float = 20.0, where: str = "the page") -> dict[str, str]:
    """Wait until data-`key` of <body> is `value`; return the whole state. `where` names the
    page in the timeout message."""
    return wait_until(
        lambda: dom(page) if dom(page).get(key) == value else None,
        timeout,
        message=lambda: f"data-{key}={value!r} on {where}; now {dom(page)}",
    )


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) of a PNG screenshot, after checking it is one."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    zlib.crc32(data)  # the whole file is readable
    return width, height


def keep_screenshot(data: bytes, name: str, tmp_path: Path, update_variable: str) -> None:
    """Write a PNG screenshot to tmp_path/name; with the environment variable `update_variable`
    set, copy it over docs/name too (the screenshots the docs show come from the tests)."""
    artifact = tmp_path / name
    artifact.write_bytes(data)
    if os.environ.get(update_variable):
        shutil.copyfile(artifact, REPO / "docs" / name)


# -- the face page (web/face.js), with the SVG or the Live2D renderer ------------------------------


@contextmanager
def face_web(tmp_path_factory, *options: str, hold_seconds: float = 30.0) -> Iterator[dict]:
    """`fay-ros web` with the rs bridge, one face token, and a copy of the shipped face table
    whose motions hold `hold_seconds` (the table's motion state must not time out mid-check);
    `options` go to the command line. Gives {base (the page's URL), url (with the token), token,
    bridge_port, proc}."""
    table = json.loads((REPO / "web" / "face_map.json").read_text())
    table["motion"]["hold_seconds"] = hold_seconds
    face_map = tmp_path_factory.mktemp("face") / "face_map.json"
    face_map.write_text(json.dumps(table))
    access = tmp_path_factory.mktemp("access") / "web_access.yaml"
    token = write_web_access(access, {"user": "face"})["user"]
    page_port, bridge_port = free_port(), free_port()
    proc = start_web(
        "--port",
        str(page_port),
        "--bridge-port",
        str(bridge_port),
        "--bridge",
        "rs",
        "--face-map",
        str(face_map),
        "--access-file",
        str(access),
        *options,
    )
    base = f"http://127.0.0.1:{page_port}/"
    try:
        yield {"base": base, "url": f"{base}#token={token}", "token": token, "bridge_port": bridge_port, "proc": proc}
    finally:
        proc.stop()


@contextmanager
def admin_over_memory(memory_location: str, tmp_path: Path) -> Iterator[dict]:
    """A memory node on `memory_location` (a SQLite path or a postgresql:// URL) and `fay-ros web
    --admin --memory-db` over it, with one admin client: {page, tokens, db, memory}. The token
    must never reach the web's log."""
    from fay_ros.memory.backend import is_postgres

    where = {"db_url": memory_location} if is_postgres(memory_location) else {"db_path": memory_location}
    memory = NodeProcess("fay_ros.nodes.memory", {**where, "embedder": "hashed"})
    tokens = write_web_access(tmp_path / "access.yaml", {"root": "admin"})
    page_port, bridge_port = free_port(), free_port()
    web = None
    try:
        memory.wait_ready(60)
        web = start_web(
            "--admin",
            "--bridge",
            "rs",
            "--port",
            str(page_port),
            "--bridge-port",
            str(bridge_port),
            "--access-file",
            str(tmp_path / "access.yaml"),
            "--memory-db",
            memory_location,
        )
        yield {"page": f"http://127.0.0.1:{page_port}", "tokens": tokens, "db": memory_location, "memory": memory}
    finally:
        if web is not None:
            web.stop()
            assert tokens["root"] not in web.output(), "a token reached the log of fay-ros web"
        memory.stop()


def connected_page(page, url: str, ros, *publishers) -> None:
    """Open the face at `url` and wait until it is connected and the bridge's subscription for
    the page is matched with each of the test's `publishers` (not merely some subscription: one
    of an earlier test's process may linger in the graph)."""
    page.goto(url)
    wait_dom(page, "connection", "connected")
    for publisher in publishers:  # the bridge subscribes for the page once it is connected
        ros.wait_subscribed(publisher, BRIDGE_NODE_NAME)


def publish_speaking(page, speaking, utterance_id: str) -> dict[str, str]:
    """Publish on `speaking` that the robot speaks `utterance_id` ("": it stopped) and wait until
    the page shows it; return the page's state."""
    speaking.publish(SpeechState(speaking=bool(utterance_id), utterance_id=utterance_id))
    return wait_dom(page, "speaking", "true" if utterance_id else "false")


def cue(behavior: str, affect: str, intensity: float, priority: int, sentiment: float = 0.0, uid: str = "c:0"):
    return ActionCue(
        code=f"test.{behavior}",
        behavior=behavior,
        affect=affect,
        intensity=intensity,
        priority=priority,
        sentiment=sentiment,
        text="",
        utterance_id=uid,
    )
