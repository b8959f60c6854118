"""Local LLM servers found (fay_ros.llm.local_servers) and the one `llm:=` setting: against
real loopback stand-ins for Ollama and llama.cpp (test/local_servers_rig.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fay_ros.bringup import graph
from fay_ros.llm.local_servers import LlmChoiceError, find_local_servers, parse_llm, summary_line
from harness import REPO, free_port, ros_environment
from local_servers_rig import OLLAMA_MODELS, FakeLlamaCpp, FakeOllama


@pytest.fixture
def ollama():
    server = FakeOllama()
    yield server
    server.close()


@pytest.fixture
def llamacpp():
    server = FakeLlamaCpp()
    yield server
    server.close()


def _nothing(port: int) -> str:
    return f"http://127.0.0.1:{port}"


def test_finds_ollama_and_llamacpp_with_models_and_the_setting(ollama, llamacpp):
    env = {"OLLAMA_HOST": ollama.host, "FAY_LLAMACPP_URL": llamacpp.url, "FAY_LMSTUDIO_URL": _nothing(free_port())}
    found = find_local_servers(env)
    assert [s.kind for s in found] == ["ollama", "llamacpp"]
    olla, llama = found
    assert olla.base_url == f"http://{ollama.host}/v1" and olla.models == OLLAMA_MODELS and olla.version == "0.9.0"
    assert olla.setting() == 'make run ARGS="llm:=ollama:qwen2.5:7b"'
    assert olla.explicit_setting() == f"llm_base_url:=http://{ollama.host}/v1 llm_model:=qwen2.5:7b"
    assert llama.base_url == f"{llamacpp.url}/v1" and llama.models == ("local-gguf",)
    assert llama.setting() == 'make run ARGS="llm:=llamacpp:local-gguf"'
    line = summary_line(found)
    assert 'use it with make run ARGS="llm:=ollama:qwen2.5:7b"' in line and "llama.cpp server" in line


def test_nothing_listening_is_nothing_found():
    env = {
        "OLLAMA_HOST": f"127.0.0.1:{free_port()}",
        "FAY_LLAMACPP_URL": _nothing(free_port()),
        "FAY_LMSTUDIO_URL": _nothing(free_port()),
    }
    assert find_local_servers(env) == []
    assert summary_line([]).startswith("no local LLM server found")


def test_another_http_server_is_not_taken_for_an_llm_server(ollama):
    # Ollama's server answers /v1/models but not llama.cpp's /health; no Ollama API on llamacpp's port
    env = {
        "OLLAMA_HOST": f"127.0.0.1:{free_port()}",
        "FAY_LLAMACPP_URL": f"http://{ollama.host}",
        "FAY_LMSTUDIO_URL": _nothing(free_port()),
    }
    assert find_local_servers(env) == []
    # ...while as LM Studio (an OpenAI-compatible /v1/models only) it counts
    env["FAY_LMSTUDIO_URL"] = f"http://{ollama.host}"
    assert [s.kind for s in find_local_servers(env)] == ["lmstudio"]


def test_ollama_host_forms():
    assert parse_llm("ollama:m", {}).base_url == "http://127.0.0.1:11434/v1"
    assert parse_llm("ollama:m", {"OLLAMA_HOST": "0.0.0.0"}).base_url == "http://127.0.0.1:11434/v1"
    assert parse_llm("ollama:m", {"OLLAMA_HOST": "https://box:8443/"}).base_url == "https://box:8443/v1"
    assert parse_llm("ollama:qwen2.5:7b", {"OLLAMA_HOST": "box:1"}).model == "qwen2.5:7b"
    assert parse_llm("", {}) is None and parse_llm("embedded", {}).base_url == ""
    assert parse_llm("llamacpp", {}).base_url == "http://127.0.0.1:8080/v1"
    for bad in ("ollama", "gpt:x", "embedded:x"):
        with pytest.raises(LlmChoiceError):
            parse_llm(bad, {})


def test_llm_option_sets_the_dialogue_and_memory_endpoint_and_no_embedded_server(ollama, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", ollama.host)
    nodes = {n.name: n for n in graph.companion_nodes({"llm": "ollama:qwen2.5:7b"})}
    assert nodes["dialogue"].parameters["base_url"] == ollama.base_url
    assert nodes["dialogue"].parameters["model"] == "qwen2.5:7b"
    assert nodes["memory"].parameters["llm_base_url"] == ollama.base_url
    assert "llm" not in [p.name for p in graph.companion_processes({"llm": "ollama:qwen2.5:7b"})]
    # the same endpoint given twice is fine; two different ones are refused with both named
    same = graph.parse_options({"llm": "ollama:qwen2.5:7b", "llm_base_url": ollama.base_url})
    assert same["llm_model"] == "qwen2.5:7b"
    with pytest.raises(graph.BringupError, match="name two endpoints"):
        graph.parse_options({"llm": "ollama:qwen2.5:7b", "llm_base_url": "http://elsewhere:1/v1"})
    # embedded: the bring-up starts its server, as with no option at all
    assert "llm" in [p.name for p in graph.companion_processes({"llm": "embedded"})]


def test_the_launch_file_takes_the_same_llm_argument():
    assert "llm" in graph.LAUNCH_ARGUMENTS
    source = (REPO / "launch" / "companion.launch.py").read_text()
    assert "graph.LAUNCH_ARGUMENTS.items()" in source and "graph.parse_options(options)" in source


def _chat(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "chat", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(REPO),
        env=env,
    )


def test_chat_answers_through_ollama(ollama):
    env = {**ros_environment(), "OLLAMA_HOST": ollama.host}
    result = _chat("--llm", "ollama:qwen2.5:7b", "--qa", "none", "--no-judge", "hi", env=env)
    assert result.returncode == 0, result.stderr
    assert "Hello from the fake Ollama." in result.stdout
    assert ollama.requests and {r["model"] for r in ollama.requests} == {"qwen2.5:7b"}


def test_chat_refuses_two_endpoints(ollama):
    env = {**ros_environment(), "OLLAMA_HOST": ollama.host}
    result = _chat("--llm", "ollama:m", "--base-url", "http://elsewhere:1/v1", "hi", env=env)
    assert result.returncode == 2
    assert "--llm ollama:m and --base-url http://elsewhere:1/v1 name two endpoints" in result.stderr
    assert ollama.requests == []
