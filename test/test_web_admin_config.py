"""The admin config API (issue 39, seed 003 "/api/config (密钥掩码)"): GET /admin/api/config
shows the running configuration with every secret masked (`****` and at most the last 4
characters), behind the admin token, over the real page server; the voice examples file is
one of the editable files, checked by its own loader."""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from fay_ros.common.masking import mask_config, mask_secret
from fay_ros.web.access import load as load_access
from fay_ros.web.admin_files import EditableFiles
from fay_ros.web.admin_http import AdminApi
from fay_ros.web.page_server import FaceServer
from harness import write_web_access

REPO = Path(__file__).resolve().parents[1]
KEY = "sk-live-0123456789abcdefWXYZ"
DB_PASSWORD = "s3cret-db-pass-9876"
HEADER_TOKEN = "Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig1"
ENV_KEY = "env-key-value-abcdef-5555"


def request(url: str, token: str | None, body: dict | None = None) -> tuple[int, dict]:
    headers = {"X-Fay-Token": token} if token else {}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(urllib.request.Request(url, data=data, headers=headers), timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.setenv("FAY_TEST_LLM_KEY", ENV_KEY)
    companion = tmp_path / "companion.yaml"
    companion.write_text(
        "/**/memory:\n"
        "  ros__parameters:\n"
        f"    db_url: 'postgresql://fay:{DB_PASSWORD}@127.0.0.1:5432/fay'\n"
        "/**/dialogue:\n"
        "  ros__parameters:\n"
        "    model: qwen\n"
        "    api_key_env: FAY_TEST_LLM_KEY\n"
        f"    api_key: {KEY}\n"
        "    max_tokens: 80\n"
    )
    tools = tmp_path / "tools.yaml"
    tools.write_text(
        "mcp:\n"
        "  weather:\n"
        f"    headers: {{Authorization: '{HEADER_TOKEN}'}}\n"
        "    headers_from_env: {X-Api-Key: FAY_TEST_UNSET_VARIABLE}\n"
    )
    broken = tmp_path / "models.yaml"
    broken.write_text(f"token: {KEY}\ntoken: again\n")
    examples = tmp_path / "voice_examples.yaml"
    shutil.copyfile(REPO / "config" / "voice_examples.yaml", examples)
    tokens = write_web_access(tmp_path / "access.yaml", {"root": "admin", "alice": "face"})
    api = AdminApi(
        load_access(tmp_path / "access.yaml"),
        EditableFiles({"voice_examples": examples}),
        set(),
        config_files={"companion.yaml": companion, "tools.yaml": tools, "models.yaml": broken},
    )
    face = FaceServer("127.0.0.1", 0, {}, admin=api).start()
    yield f"http://127.0.0.1:{face.port}/admin/api", tokens, examples
    face.stop()


def test_the_config_shows_every_secret_masked_to_its_last_four_characters(server):
    base, tokens, _examples = server
    assert request(f"{base}/config", None)[0] == 401
    assert request(f"{base}/config", tokens["alice"])[0] == 403
    status, body = request(f"{base}/config", tokens["root"])
    assert status == 200, body
    text = json.dumps(body)
    for secret in (KEY, DB_PASSWORD, HEADER_TOKEN, "eyJhbGciOiJIUzI1NiJ9", ENV_KEY):
        assert secret not in text
    dialogue = body["files"]["companion.yaml"]["config"]["/**/dialogue"]["ros__parameters"]
    assert dialogue == {"model": "qwen", "api_key_env": "FAY_TEST_LLM_KEY", "api_key": "****WXYZ", "max_tokens": 80}
    memory = body["files"]["companion.yaml"]["config"]["/**/memory"]["ros__parameters"]
    assert memory["db_url"].startswith("postgresql://") and "@127.0.0.1:5432/fay" in memory["db_url"]
    weather = body["files"]["tools.yaml"]["config"]["mcp"]["weather"]
    assert weather["headers"] == {"Authorization": "****sig1"}
    assert weather["headers_from_env"] == {"X-Api-Key": "FAY_TEST_UNSET_VARIABLE"}, "a variable's name is shown"
    assert body["environment"] == {
        "FAY_TEST_LLM_KEY": {"set": True, "value": "****5555"},
        "FAY_TEST_UNSET_VARIABLE": {"set": False, "value": None},
    }
    # a file that does not parse says where, never what
    broken = body["files"]["models.yaml"]
    assert "duplicate key 'token'" in broken["error"] and "line 2" in broken["error"] and "config" not in broken


@pytest.mark.parametrize(
    ("secret", "shown"),
    [("abcdefghijkl", "****ijkl"), ("short-pass", "****"), ("", "****")],
)
def test_a_short_secret_shows_nothing_of_itself(secret, shown):
    assert mask_secret(secret) == shown


def test_names_of_variables_and_plain_settings_stay_readable():
    config = {"api_key_env": "OPENAI_KEY", "keyframes": [1, 2], "monkey": "banana", "url": "http://127.0.0.1:8080/v1"}
    assert mask_config(config) == config


def test_the_voice_examples_are_an_editable_file_checked_by_their_loader(server):
    base, tokens, examples = server
    status, current = request(f"{base}/files/voice_examples", tokens["root"])
    assert status == 200 and "scene: morning" in current["text"]
    bad = current["text"].replace("scene: play", "scene: disco", 1)
    status, result = request(
        f"{base}/files/voice_examples", tokens["root"], {"text": bad, "version": current["version"]}
    )
    assert status == 422 and "scene" in result["problems"][0]["message"] and result["problems"][0]["line"] > 0
    assert "disco" not in examples.read_text(), "a bad edit is not written"
