"""`fay-ros models pull` then `use`, then the bring-up starts with the chosen model (issue 37),
all as real processes: the pull from a local server that speaks the hub's protocol (nothing
from huggingface.co), `fay-ros up nodes:=dialogue` with its llm server, and a typed line that
the chosen model answers.

The bytes served for the catalogue's `qwen2.5-0.5b-instruct` file are the embedded SmolLM2
GGUF (a real model that runs here; no other is on this machine): what is tested is the path
from the catalogue through the download, the choice and the bring-up to the running server.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fay_msgs.msg import Transcript, Utterance
from fay_ros.llm.embedded import default_model_path
from harness import REPO, NodeProcess, ros_environment
from local_hub import LocalHub
from test_bringup_e2e import companion_config

pytestmark = pytest.mark.slow

NAME, REPO_ID, FILE = "qwen2.5-0.5b-instruct", "Qwen/Qwen2.5-0.5B-Instruct-GGUF", "qwen2.5-0.5b-instruct-q4_k_m.gguf"


def fay_ros(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=300,
        check=False,
    )


def test_a_pulled_and_chosen_model_is_what_make_run_starts(tmp_path, ros):
    gguf = default_model_path().read_bytes()
    hub = LocalHub(files={REPO_ID: {FILE: gguf}}, lfs={FILE}).start()
    env = {
        **os.environ,
        **ros_environment(),
        "HF_ENDPOINT": hub.endpoint,
        "HF_HOME": str(tmp_path / "hf-home"),
        "FAY_MODELS_DIR": str(tmp_path / "models"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    env.pop("HF_TOKEN", None)
    env.pop("HF_HUB_OFFLINE", None)  # `pull` is the one command that goes to the (local) hub
    try:
        pulled = fay_ros(env, "models", "pull", NAME, "--accept-licence")
    finally:
        hub.stop()
    assert pulled.returncode == 0, pulled.stderr
    assert "Apache-2.0" in pulled.stdout + pulled.stderr  # the licence is shown
    assert "100%" in pulled.stderr  # the progress
    on_disk = tmp_path / "models" / NAME / FILE
    assert hashlib.sha256(on_disk.read_bytes()).hexdigest() == hashlib.sha256(gguf).hexdigest()
    used = fay_ros(env, "models", "use", NAME)
    assert used.returncode == 0, used.stderr

    replies = ros.collect(Utterance, "reply")
    typed = ros.publisher(Transcript, "text_input")
    graph = NodeProcess(
        "fay_ros.cli",
        ros=False,
        env={k: env[k] for k in ("HF_HOME", "FAY_MODELS_DIR", "XDG_CONFIG_HOME")},
        args=[
            "up",
            f"config:={companion_config(tmp_path)}",
            "nodes:=dialogue",
            "use_web:=false",
            "use_rosbridge:=false",
        ],
    )
    try:
        ros.wait_ready("dialogue", timeout=120)
        ros.wait_for_subscribers(typed)
        ros.wait_matched(replies, "dialogue")
        typed.publish(Transcript(text="Hello! How are you today?", user_id="user"))
        answer = replies.wait_for_match(lambda m: m.source == "llm" and m.text, timeout=90, what="the model's answer")
        assert answer.text.strip()
        out = graph.output()
        # the server serves the pulled file under the chosen name, and the dialogue asks for it
        assert f"model {NAME} ({FILE})" in out, out[-3000:]
        assert f"dialogue ready: {NAME} at" in out, out[-3000:]
    finally:
        graph.stop(timeout=30)
    assert Path(on_disk).is_file()
