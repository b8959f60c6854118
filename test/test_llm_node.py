"""The embedded LLM bring-up as the lifecycle node `llm` (`fay-ros llm`, fay_ros.nodes.llm_server):
ready on ROS once the real model serves, not ready with the reason when it cannot, and the
lifecycle starting and stopping the server."""

from __future__ import annotations

import subprocess
import sys
import urllib.parse

import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from lifecycle_msgs.msg import Transition

from fay_ros.common import topics
from fay_ros.common.diagnostics import status_name
from fay_ros.llm.embedded import MODEL_FILE, default_batch_threads, default_model_path
from harness import REPO, free_port, http_ok, ros_environment, wait_until


def values(status: DiagnosticStatus) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


def find_status(diagnostics, name: str, predicate) -> DiagnosticStatus | None:
    return next((s for a in diagnostics.messages for s in a.status if s.name == name and predicate(s)), None)


@pytest.mark.parametrize(("cores", "threads"), [(1, 1), (2, 1), (3, 2), (8, 4), (None, 1)])
def test_the_model_leaves_a_core_to_the_rest_of_the_companion(monkeypatch, cores, threads):
    import fay_ros.llm.embedded as embedded

    monkeypatch.setattr(embedded.os, "cpu_count", lambda: cores)
    assert embedded.default_threads() == threads


@pytest.mark.parametrize(("cores", "batch_threads"), [(1, 1), (2, 2), (3, 3), (8, 4), (None, 1)])
def test_the_prompt_is_computed_on_every_core(monkeypatch, cores, batch_threads):
    import fay_ros.llm.embedded as embedded

    monkeypatch.setattr(embedded.os, "cpu_count", lambda: cores)
    assert embedded.default_batch_threads() == batch_threads


@pytest.mark.slow
def test_the_embedded_model_says_on_ros_that_it_serves(embedded_llm, ros):
    url, _process = embedded_llm  # `fay-ros llm --threads 2` on a free port, its /health answering
    port = str(urllib.parse.urlsplit(url).port)
    diagnostics = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 50)
    ros.wait_ready("llm")
    # this process's server (another `fay-ros llm` of the session would show another port)
    server = diagnostics.wait_for(
        lambda _a: find_status(diagnostics, "fay/llm: server", lambda s: values(s).get("port") == port),
        what=f"the llm node's server health with port {port}",
    )
    assert server.level == DiagnosticStatus.OK and server.message == f"serving {url}"
    assert values(server)["threads"] == "2" and values(server)["model"].endswith(MODEL_FILE)
    assert values(server)["batch_threads"] == str(default_batch_threads())  # not given: every core


@pytest.mark.slow
def test_a_missing_model_is_reported_and_the_lifecycle_starts_and_stops_the_server(ros, launch_node, tmp_path):
    namespace = "/llm_lifecycle_test"  # its own: the session's embedded model is /fay/llm
    model = tmp_path / "model.gguf"
    port = free_port()
    health_url = f"http://127.0.0.1:{port}/health"
    diagnostics = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 50)
    ready = ros.readiness("llm", namespace)
    node = launch_node(
        "fay_ros.cli",
        args=[
            "llm",
            *("--model", str(model), "--port", str(port), "--threads", "2", "--batch-threads", "1"),
            *("--namespace", namespace),
        ],
        ros=False,
    )

    state = diagnostics.wait_for(
        lambda _a: find_status(diagnostics, status_name("llm", "state", namespace), lambda s: str(model) in s.message),
        what="the llm node's state naming the missing model",
    )
    assert state.level == DiagnosticStatus.ERROR
    assert state.message == f"not ready: model file not found: {model}"
    ready.wait_for(lambda msgs: msgs and not msgs[-1].data, what="false on its ~/ready")
    assert ros.lifecycle_state("llm", namespace) == "unconfigured" and node.alive()
    assert not http_ok(health_url)

    # the model appears: configure loads it and answers the warm-up, activate serves
    model.symlink_to(default_model_path())
    assert ros.change_state("llm", Transition.TRANSITION_CONFIGURE, namespace)
    assert ros.change_state("llm", Transition.TRANSITION_ACTIVATE, namespace)
    ready.wait_for(lambda msgs: msgs[-1].data, what="true on its ~/ready")
    assert http_ok(health_url)
    server = diagnostics.wait_for(
        lambda _a: find_status(
            diagnostics,
            status_name("llm", "server", namespace),
            lambda s: values(s).get("port") == str(port) and s.level == DiagnosticStatus.OK,
        ),
        what="its server health while serving",
    )
    assert values(server) == {
        "model": str(model),
        "port": str(port),
        "threads": "2",
        "batch_threads": "1",
        "base_url": f"http://127.0.0.1:{port}/v1",
    }

    # deactivate stops the server; activate starts it again
    assert ros.change_state("llm", Transition.TRANSITION_DEACTIVATE, namespace)
    ready.wait_for(lambda msgs: not msgs[-1].data, what="false on its ~/ready after deactivate")
    wait_until(lambda: not http_ok(health_url), message="the server stopped")
    assert ros.change_state("llm", Transition.TRANSITION_ACTIVATE, namespace)
    assert http_ok(health_url) and ready.wait_for(lambda msgs: msgs[-1].data, what="true again")
    assert node.alive()


def test_without_ros_a_missing_model_stops_the_command_with_the_reason(tmp_path):
    missing = tmp_path / "missing.gguf"
    done = subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "llm", "--no-ros", "--model", str(missing)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(REPO),
        env=ros_environment(),
    )
    assert done.returncode == 2, done.stderr
    assert f"cannot start: model file not found: {missing}" in done.stderr


def test_options_are_checked_like_the_node_parameters():
    done = subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "llm", "--no-ros", "--host", "192.168.1.5"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(REPO),
        env=ros_environment(),
    )
    assert done.returncode == 2
    assert "--host: Value error, the embedded LLM only listens on loopback, not 192.168.1.5" in done.stderr
