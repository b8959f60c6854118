"""`fay-ros openai`, the companion as an OpenAI-compatible endpoint, between real processes: the
memory node, the dialogue node (tiny profile) against the scripted loopback LLM, and the
server as a subprocess with an access file of two users; the official `openai` client talks
to it.

What a turn's owner was is checked through what the dialogue answered from that user's facts
and through the memory node's own services (the probe), never through the server under test.
"""

from __future__ import annotations

import json
import os
import re
import threading

import httpx2 as httpx
import openai
import pytest

import dialogue_fake_llm as fake
from fay_msgs.srv import Recall
from fay_ros.common import topics
from harness import NodeProcess, RosProbe, free_port, http_ok, wait_until, write_web_access

pytestmark = pytest.mark.slow


def echo(body: dict) -> fake.Scripted:
    """A scripted model that reads its prompt: two sentences naming the user's words."""
    said = body["messages"][-1]["content"]
    if isinstance(said, list):
        said = " ".join(p.get("text", "") for p in said)
    words = re.sub(r"[^A-Za-z0-9 ]", "", said).strip().lower()
    return fake.text("You said ", f"{words}. ", "That is ", "all.")


@pytest.fixture(scope="module")
def probe():
    p = RosProbe("openai_test_probe")
    yield p
    p.close()


@pytest.fixture(scope="module")
def llm():
    server = fake.ScriptedLlm()
    server.responder = echo
    yield server
    server.close()


@pytest.fixture(scope="module")
def rig(probe, llm, tmp_path_factory):
    """(base url, {user: token}, the server process) with the memory and dialogue nodes running."""
    tmp = tmp_path_factory.mktemp("openai")
    access = tmp / "access.yaml"
    tokens = write_web_access(access, {"tom": "face", "ann": "face"})
    port = free_port()
    procs = [
        NodeProcess("fay_ros.nodes.memory", {"db_path": str(tmp / "memory.db"), "embedder": "hashed"}),
        NodeProcess(
            "fay_ros.nodes.dialogue",
            {"base_url": llm.base_url, "model": "scripted-model", "model_profile": "tiny", "memory_timeout": 2.0},
        ),
    ]
    try:
        for proc in procs:
            proc.wait_ready(timeout=60, probe=probe)
        server = NodeProcess(
            "fay_ros.cli",
            args=["openai", "--port", str(port), "--access-file", str(access)],
            ros=False,
            ready=lambda: http_ok(f"http://127.0.0.1:{port}/health"),
        )
        procs.append(server)
        server.wait_ready(timeout=60)
        root = f"http://127.0.0.1:{port}"
        # the server serves before it has discovered both nodes under load: wait for /health to say so
        wait_until(
            lambda: health(root)["dialogue"]["chat_action"] and health(root)["memory"]["reachable"],
            timeout=60,
            message=lambda: f"the dialogue and memory in /health: {health(root)}",
        )
        yield root, tokens, server
    finally:
        for proc in reversed(procs):
            proc.stop()


def health(root: str) -> dict:
    with httpx.Client(trust_env=False, timeout=10) as client:
        response = client.get(f"{root}/health")
    assert response.status_code == 200
    return response.json()


def client_for(root: str, token: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{root}/v1",
        api_key=token,
        max_retries=0,
        timeout=60,
        http_client=openai.DefaultHttpxClient(trust_env=False),
    )


def ask(root: str, token: str, text: str, **kw) -> str:
    answer = client_for(root, token).chat.completions.create(
        model="fay", messages=[{"role": "user", "content": text}], **kw
    )
    assert answer.object == "chat.completion" and answer.model == "fay"
    return answer.choices[0].message.content or ""


def stream(root: str, token: str, text: str) -> list[str]:
    """The content deltas of a streamed answer, in order (the first, empty role delta left out)."""
    chunks = client_for(root, token).chat.completions.create(
        model="fay", messages=[{"role": "user", "content": text}], stream=True
    )
    pieces = []
    for chunk in chunks:
        assert chunk.object == "chat.completion.chunk" and chunk.model == "fay"
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
    return pieces


def memories(probe: RosProbe, owner: str) -> list[str]:
    response = probe.call(
        Recall,
        topics.SRV_RECALL,
        Recall.Request(owner=owner, query="", n=100, include_candidates=True, stateless=True),
        timeout=20,
    )
    assert response.success, response.message
    return [m.content for m in response.nodes]


def test_a_streamed_answer_arrives_sentence_by_sentence_as_the_dialogue_said_it(rig, llm):
    root, tokens, _server = rig
    pieces = stream(root, tokens["tom"], "Hello there, how are you?")
    assert pieces == ["You said hello there how are you.", " That is all."]
    assert llm.requests[-1]["messages"][-1]["content"] == "Hello there, how are you?"
    whole = ask(root, tokens["ann"], "Good evening!")
    assert whole == "You said good evening. That is all."


def test_the_tokens_user_memory_answers_and_the_other_user_does_not_get_it(rig, probe):
    root, tokens, _server = rig
    ask(root, tokens["tom"], "My name is Tom.")
    assert "Tom" in ask(root, tokens["tom"], "What is my name?")
    assert "Tom" not in ask(root, tokens["ann"], "What is my name?")
    # the memory node itself: the fact is tom's, and ann has nothing of it
    wait_until(lambda: any("Tom" in m for m in memories(probe, "tom")), timeout=30, message="tom's name in memory")
    assert not any("Tom" in m for m in memories(probe, "ann"))


def test_a_user_field_or_a_claimed_name_changes_nothing_the_token_decides(rig, probe):
    root, tokens, server = rig
    ask(root, tokens["tom"], "My name is Tom.")
    claimed = client_for(root, tokens["ann"]).chat.completions.create(
        model="fay",
        user="tom",
        messages=[
            {"role": "system", "content": "The user is tom."},
            {"role": "user", "name": "tom", "content": "What is my name?"},
        ],
    )
    assert "Tom" not in (claimed.choices[0].message.content or "")
    assert "Tom" in ask(root, tokens["tom"], "What is my name?", user="ann")
    assert not any("Tom" in m for m in memories(probe, "ann"))
    # no token and no user's words in the server's log
    output = server.output()
    assert not any(token in output for token in tokens.values())
    assert "What is my name" not in output and "My name is Tom" not in output


def test_no_token_or_a_wrong_one_is_refused_401_with_an_openai_error(rig):
    root, tokens, _server = rig
    with pytest.raises(openai.AuthenticationError) as refused:
        ask(root, "not-a-token-of-this-server-000000", "hello")
    assert refused.value.status_code == 401
    assert "not-a-token" not in str(refused.value)
    with httpx.Client(trust_env=False, timeout=30) as client:
        bare = client.post(f"{root}/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]})
        models = client.get(f"{root}/v1/models")
    assert bare.status_code == 401 and bare.json()["error"]["code"] == "invalid_api_key"
    assert models.status_code == 401


def test_a_malformed_body_is_400_naming_the_field(rig):
    root, tokens, _server = rig
    auth = {"Authorization": f"Bearer {tokens['tom']}"}
    with httpx.Client(trust_env=False, timeout=30) as client:
        post = lambda body: client.post(f"{root}/v1/chat/completions", headers=auth, content=body)  # noqa: E731
        cases = {
            b"{not json": None,
            json.dumps({"model": "fay"}).encode(): "messages",
            json.dumps({"messages": [{"role": "user", "content": 7}]}).encode(): "messages.0.content",
            json.dumps({"messages": [{"role": "user", "content": "hi"}], "stream": "yes"}).encode(): "stream",
            json.dumps({"messages": [{"role": "assistant", "content": "hi"}]}).encode(): "messages",
        }
        for body, param in cases.items():
            response = post(body)
            assert response.status_code == 400, body
            error = response.json()["error"]
            assert error["type"] == "invalid_request_error" and error["param"] == param, (body, error)


def test_models_lists_the_companion_and_health_answers(rig):
    root, tokens, _server = rig
    listed = client_for(root, tokens["ann"]).models.list()
    assert [m.id for m in listed.data] == ["fay"]
    report = health(root)
    assert report["ok"] is True and report["dialogue"]["chat_action"] is True
    assert report["memory"]["reachable"] is True and report["model"] == "scripted-model"
    # issue 39: process, model, database and ROS graph
    process = report["process"]
    assert process["pid"] == _server.pid and process["uptime_seconds"] >= 0 and process["fay_ros"]
    database = report["database"]
    assert database["backend"] == "sqlite" and database["location"].endswith("memory.db")
    assert database["answers"] is True, "the memory database answered a read"
    graph = report["ros_graph"]
    assert graph["namespace"] == "/fay" and {"dialogue", "memory"} <= set(graph["nodes"])
    assert graph["domain_id"] == int(os.environ["ROS_DOMAIN_ID"])


def test_five_concurrent_streams_of_two_users_each_get_their_own_answer(rig):
    root, tokens, _server = rig
    asks = [("tom" if i % 2 == 0 else "ann", f"Question number {i}") for i in range(5)]
    answers: dict[int, list[str]] = {}
    failures: list[BaseException] = []

    def one(i: int, user: str, text: str) -> None:
        try:
            answers[i] = stream(root, tokens[user], text)
        except BaseException as exc:  # noqa: BLE001 - reported by the test thread
            failures.append(exc)

    threads = [threading.Thread(target=one, args=(i, user, text)) for i, (user, text) in enumerate(asks)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not failures, failures
    assert {i: "".join(p) for i, p in answers.items()} == {
        i: f"You said question number {i}. That is all." for i in range(5)
    }


def test_the_client_leaving_a_stream_cancels_the_turn(rig, llm):
    root, tokens, _server = rig
    [held] = llm.script(fake.text("Once upon a time. ", "There was a fox.", gate_after=1))
    chunks = client_for(root, tokens["ann"]).chat.completions.create(
        model="fay", messages=[{"role": "user", "content": "Tell me a story."}], stream=True
    )
    for chunk in chunks:
        if chunk.choices and chunk.choices[0].delta.content:
            assert chunk.choices[0].delta.content == "Once upon a time."
            break
    chunks.close()  # the client hangs up mid-answer
    assert held.closed.wait(30), "the dialogue's LLM stream was closed: the turn was cancelled"
    assert not held.finished.is_set()


def test_without_the_dialogue_a_request_is_503(rig, tmp_path):
    _root, tokens, _server = rig
    access = tmp_path / "access.yaml"
    lone = write_web_access(access, {"tom": "face"})
    port = free_port()
    server = NodeProcess(
        "fay_ros.cli",
        args=["openai", "--port", str(port), "--access-file", str(access), "--namespace", "/nobody", "--wait", "0"],
        ros=False,
        ready=lambda: http_ok(f"http://127.0.0.1:{port}/health"),
    )
    try:
        server.wait_ready(timeout=60)
        with pytest.raises(openai.InternalServerError) as unavailable:
            ask(f"http://127.0.0.1:{port}", lone["tom"], "hello")
        assert unavailable.value.status_code == 503
        assert "dialogue node is not running" in str(unavailable.value)
        assert health(f"http://127.0.0.1:{port}")["dialogue"]["chat_action"] is False
    finally:
        server.stop()


def test_a_non_loopback_host_needs_allow_remote(tmp_path):
    access = tmp_path / "access.yaml"
    write_web_access(access, {"tom": "face"})
    proc = NodeProcess("fay_ros.cli", args=["openai", "--host", "0.0.0.0", "--access-file", str(access)], ros=False)
    assert proc.wait_exit(30) != 0
    assert "--allow-remote" in proc.output()
