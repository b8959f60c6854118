"""`fay-ros doctor` as a real process, with loopback stand-ins for Ollama and llama.cpp and
HOME / XDG directories in tmp; and the database check on files made here."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from fay_ros.bringup.doctor import OK, PROBLEM, check_sqlite_db
from harness import REPO, free_port, ros_environment
from local_servers_rig import FakeLlamaCpp, FakeOllama

CHECKS = {
    "audio devices",
    "ROS/DDS settings",
    "ROS graph",
    "embedded LLM model",
    "whisper model",
    "LLM",
    "local LLM servers",
    "web door",
    "memory database",
    "disk",
}


@pytest.fixture
def servers():
    ollama, llamacpp = FakeOllama(), FakeLlamaCpp()
    yield ollama, llamacpp
    ollama.close()
    llamacpp.close()


def _doctor(tmp_path, ollama, llamacpp, *args: str, **more_env: str) -> subprocess.CompletedProcess:
    env = {
        **ros_environment(),
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "OLLAMA_HOST": ollama.host,
        "FAY_LLAMACPP_URL": llamacpp.url,
        "FAY_LMSTUDIO_URL": f"http://127.0.0.1:{free_port()}",
        "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
        **more_env,
    }
    return subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "doctor", "--graph-seconds", "0.5", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(REPO),
        env=env,
    )


def test_doctor_json_reports_every_check_and_the_llm_latency(tmp_path, servers):
    ollama, llamacpp = servers
    result = _doctor(tmp_path, ollama, llamacpp, "--json", "--llm", "ollama:qwen2.5:7b")
    report = json.loads(result.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert set(checks) == CHECKS
    assert all(c["status"] in (OK, PROBLEM) and c["detail"] for c in checks.values())
    assert result.returncode == (0 if report["ok"] else 1), result.stdout
    llm = checks["LLM"]
    assert llm["status"] == OK, llm
    assert llm["data"]["model"] == "qwen2.5:7b" and isinstance(llm["data"]["first_token_s"], float)
    asked = ollama.requests[-1]
    assert asked["stream"] is True and asked["model"] == "qwen2.5:7b" and asked["max_tokens"] <= 8
    found = {s["kind"]: s for s in checks["local LLM servers"]["data"]["servers"]}
    assert set(found) == {"ollama", "llamacpp"}
    assert found["ollama"]["setting"] == 'make run ARGS="llm:=ollama:qwen2.5:7b"'
    db = checks["memory database"]
    assert db["status"] == OK and db["data"]["path"] == str(tmp_path / "data" / "fay_ros" / "memory.db")  # XDG
    assert "not created yet" in db["detail"]


def test_a_missing_model_is_a_problem_with_its_fix_and_exit_1(tmp_path, servers):
    ollama, llamacpp = servers
    result = _doctor(tmp_path, ollama, llamacpp, "--llm", "ollama:no-such-model")
    assert result.returncode == 1, result.stdout
    line = next(x for x in result.stdout.splitlines() if x.split()[1:2] == ["LLM:"])
    assert line.startswith("problem") and "fix: ollama pull no-such-model" in line
    assert ollama.requests == []  # found out from the model list, no chat completion asked


def test_an_endpoint_that_does_not_answer_says_how_to_start_it(tmp_path, servers):
    ollama, llamacpp = servers
    result = _doctor(
        tmp_path, ollama, llamacpp, "--json", "--llm", "ollama:qwen2.5:7b", OLLAMA_HOST=f"127.0.0.1:{free_port()}"
    )
    checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    llm = checks["LLM"]
    assert result.returncode == 1 and llm["status"] == PROBLEM and "does not answer" in llm["detail"]
    assert "ollama serve" in llm["fix"]
    assert [s["kind"] for s in checks["local LLM servers"]["data"]["servers"]] == ["llamacpp"]


def test_the_embedded_default_not_running_is_no_problem(tmp_path, servers):
    ollama, llamacpp = servers
    result = _doctor(tmp_path, ollama, llamacpp, "--json")
    llm = {c["name"]: c for c in json.loads(result.stdout)["checks"]}["LLM"]
    if llm["data"].get("running"):  # someone's `fay-ros llm` serves on this machine: measured then
        assert "first token" in llm["detail"]
    else:
        assert llm["status"] == OK and "fay-ros llm" in llm["detail"]


def _db(path, names):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE _sqlite_migrations (migration_set TEXT, name TEXT, applied_at TEXT)")
    conn.executemany("INSERT INTO _sqlite_migrations VALUES ('fay_memory', ?, '')", [(n,) for n in names])
    conn.commit()
    conn.close()


def test_database_schema_known_pending_and_newer(tmp_path):
    path = tmp_path / "memory.db"
    _db(path, ["0001_a"])
    check = check_sqlite_db(path, ["0001_a", "0002_b"], "fay_memory")
    assert check.status == OK and "schema 0001_a" in check.detail and "1 migration(s)" in check.detail
    newer = tmp_path / "newer.db"
    _db(newer, ["0001_a", "0009_future"])
    check = check_sqlite_db(newer, ["0001_a"], "fay_memory")
    assert check.status == PROBLEM and "newer than this fay_ros" in check.detail and check.fix == "update fay_ros"
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"not a database at all" * 100)
    assert check_sqlite_db(broken, [], "fay_memory").status == PROBLEM
