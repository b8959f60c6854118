"""The one LLM client (fay_ros.llm.client) of the dialogue (`stream`) and the memory
(`complete`), against real servers on loopback: the key rule, URLs without credentials in
every error text, one error kind per failure on both paths, one retry of a dropped connection."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import socket
import threading
from collections.abc import Callable
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug.wrappers import Request, Response

from fay_ros.common.urls import safe_url
from fay_ros.llm.client import NO_KEY, ChatClient, Endpoint, LlmError, key_from_env
from harness import free_port

KEY = "sk-fay-client-0123456789"
USERINFO, QUERY = "fayuser:pw-7f3a9c", "api_key=sk-query-5e1d&x=1"
# Nothing of these may appear in an error text, a repr or a log line.
SECRETS = [KEY, "fayuser", "pw-7f3a9c", "sk-query-5e1d", QUERY, "x=1", base64.b64encode(USERINFO.encode()).decode()]


@pytest.mark.parametrize(
    "url, shown",
    [
        ("http://user:secret@host:8080/v1?api_key=sk-abc&x=1", "http://host:8080/v1"),
        ("https://api.example.com/v1", "https://api.example.com/v1"),
        ("https://user@API.Example.com/v1/#frag", "https://api.example.com/v1/"),
        ("http://u:p@[::1]:11434/v1?key=k", "http://[::1]:11434/v1"),
        ("http://host:notaport/v1?api_key=sk-abc", "<invalid URL>"),
        ("", ""),
    ],
)
def test_safe_url_keeps_scheme_host_port_and_path_only(url, shown):
    assert safe_url(url) == shown


def test_the_key_rule_and_reprs(monkeypatch):
    assert key_from_env("") == ""  # no variable named: no key, NO_KEY is sent
    monkeypatch.setenv("FAY_TEST_LLM_KEY", KEY)
    assert key_from_env("FAY_TEST_LLM_KEY") == KEY
    monkeypatch.setenv("FAY_TEST_LLM_KEY", "")
    with pytest.raises(ValueError, match="FAY_TEST_LLM_KEY is not set"):
        key_from_env("FAY_TEST_LLM_KEY")
    with pytest.raises(ValueError, match="NAME of an environment variable") as err:
        key_from_env(KEY)  # the key itself pasted where its variable's name belongs
    assert KEY not in str(err.value)
    endpoint = Endpoint(f"http://{USERINFO}@127.0.0.1:8080/v1?{QUERY}", "m", KEY)
    for text in (repr(endpoint), repr(ChatClient(endpoint))):
        assert "***" in text and "http://127.0.0.1:8080/v1" in text
        assert not [s for s in SECRETS if s in text], text


# ---------------------------------------------------------------- a real server on loopback
class Server:
    """pytest-httpserver answering every path (a query in base_url ends up in the path the
    OpenAI client requests) with the handler a test sets; records each request."""

    def __init__(self) -> None:
        self.http = HTTPServer(host="127.0.0.1", port=0, threaded=True)
        self.http.expect_request(re.compile(".*")).respond_with_handler(self._handle)
        self.http.start()
        self.handler: Callable[[Request, dict[str, Any]], Response] = lambda r, b: Response(status=500)
        self.requests: list[tuple[Request, dict[str, Any]]] = []
        self.release = threading.Event()  # lets a handler that holds its answer back go

    def _handle(self, request: Request) -> Response:
        body = request.get_json(force=True)
        self.requests.append((request, body))
        return self.handler(request, body)

    def endpoint(self, key: str = KEY, credentials: bool = True, **timeouts: float) -> Endpoint:
        auth, query = (f"{USERINFO}@", f"?{QUERY}") if credentials else ("", "")
        return Endpoint(f"http://{auth}127.0.0.1:{self.http.port}/v1{query}", "m", key, **timeouts)

    def close(self) -> None:
        self.release.set()
        self.http.clear()
        self.http.stop()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


def _sse(*deltas: dict[str, Any], finish: str = "stop") -> Response:
    chunks = [{"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    head = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    events = "".join(f"data: {json.dumps({**head, **c})}\n\n" for c in chunks)
    return Response(events + "data: [DONE]\n\n", mimetype="text/event-stream")


def _answer(content: str) -> Response:
    return Response(
        json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
                ],
            }
        ),
        mimetype="application/json",
    )


def _ask(client: ChatClient, path: str) -> str:
    """One turn on the dialogue's path (stream) or the memory's (complete); the answer text."""
    if path == "complete":
        return client.complete("system", "hello")

    async def stream() -> str:
        try:
            return "".join([e.content async for e in client.stream([{"role": "user", "content": "hello"}])])
        finally:
            await client.close()

    return asyncio.run(stream())


def _echo_401(request: Request, body: dict[str, Any]) -> Response:
    # a server that quotes the request back in its error, as some proxies do
    message = f"Incorrect API key provided: {request.headers.get('Authorization')} for {request.url}"
    return Response(json.dumps({"error": {"message": message}}), status=401, mimetype="application/json")


def _hold(server: Server) -> Callable[[Request, dict[str, Any]], Response]:
    def handler(request: Request, body: dict[str, Any]) -> Response:
        server.release.wait(30)
        return _answer("too late")

    return handler


FAILURES: dict[str, Callable[[Server], Callable[[Request, dict[str, Any]], Response]]] = {
    "http": lambda s: _echo_401,
    "timeout": _hold,
    "malformed": lambda s: (
        lambda r, b: (
            Response("data: {not json\n\n", mimetype="text/event-stream")
            if b.get("stream")
            else Response("{not json", mimetype="application/json")
        )
    ),
    "empty": lambda s: lambda r, b: _sse({"role": "assistant", "content": ""}) if b.get("stream") else _answer(""),
}


@pytest.mark.parametrize("path", ["stream", "complete"])
@pytest.mark.parametrize("failure", ["http", "unreachable", "timeout", "malformed", "empty"])
def test_every_failure_is_one_error_kind_that_shows_no_credentials(server, failure, path):
    if failure == "unreachable":
        port = free_port()  # nothing listens there
        endpoint = Endpoint(f"http://{USERINFO}@127.0.0.1:{port}/v1?{QUERY}", "m", KEY)
        where = f"http://127.0.0.1:{port}/v1"
    else:
        server.handler = FAILURES[failure](server)
        endpoint = server.endpoint(first_token_timeout=0.5)
        where = f"http://127.0.0.1:{server.http.port}/v1"
    # with credentials in the URL the HTTP client sends them (Basic) instead of the key
    endpoints = [endpoint, server.endpoint(credentials=False)] if failure == "http" else [endpoint]
    for e in endpoints:
        with pytest.raises(LlmError) as err:
            _ask(ChatClient(e), path)
        text = str(err.value)
        assert err.value.kind == failure, text
        assert where in text and not [s for s in SECRETS if s in text], text
        if failure == "http":
            assert err.value.status == 401 and re.search(r"provided: (Basic|Bearer) \*\*\* for ", text), text
    if failure == "http":  # the echoes above really carried both kinds of credentials
        assert [r.headers["Authorization"].split()[0] for r, _b in server.requests] == ["Basic", "Bearer"]


@pytest.mark.parametrize("path", ["stream", "complete"])
def test_both_paths_send_the_key_or_the_placeholder(server, path):
    server.handler = lambda r, b: (
        _sse({"content": "Hi "}, {"content": "there."}) if b.get("stream") else _answer("Hi there.")
    )
    assert _ask(ChatClient(server.endpoint(credentials=False)), path) == "Hi there."
    assert _ask(ChatClient(server.endpoint(key="", credentials=False)), path) == "Hi there."
    (first, body), (second, _) = server.requests
    assert first.headers["Authorization"] == f"Bearer {KEY}" and second.headers["Authorization"] == f"Bearer {NO_KEY}"
    assert body["stream"] is (path == "stream") and body["model"] == "m"


def test_complete_json_finds_the_object_in_a_fenced_answer(server):
    server.handler = lambda r, b: _answer('Sure:\n```json\n{"insights": []}\n```')
    assert ChatClient(server.endpoint(credentials=False)).complete_json("s", "u") == {"insights": []}
    server.handler = lambda r, b: _answer("no json here")
    with pytest.raises(LlmError) as err:
        ChatClient(server.endpoint(credentials=False)).complete_json("s", "u")
    assert err.value.kind == "malformed"


def test_no_endpoint_is_an_error_without_any_request():
    with pytest.raises(LlmError) as err:
        ChatClient(Endpoint()).complete("s", "u")
    assert err.value.kind == "unreachable" and "no LLM endpoint configured" in err.value.reason


# ---------------------------------------------------------------- a dropped pooled connection
class DroppingServer:
    """A raw HTTP server on loopback that closes the first `drops` connections after reading
    the request, without a response (as llama.cpp may do to a pooled keep-alive
    connection), then answers."""

    def __init__(self, drops: int) -> None:
        self.drops = drops
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data or len(data.partition(b"\r\n\r\n")[2]) < _length(data):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                body = data.partition(b"\r\n\r\n")[2]
                self.connections += 1
                if self.connections <= self.drops:
                    continue
                response = _sse({"content": "Back."}) if json.loads(body)["stream"] else _answer("Back.")
                payload = response.get_data()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: "
                    + response.mimetype.encode()
                    + b"\r\nContent-Length: "
                    + str(len(payload)).encode()
                    + b"\r\nConnection: close\r\n\r\n"
                    + payload
                )

    def close(self) -> None:
        self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept()
        self.sock.close()
        self.thread.join(5)


def _length(data: bytes) -> int:
    match = re.search(rb"(?i)\r\ncontent-length: *(\d+)", data.partition(b"\r\n\r\n")[0])
    return int(match.group(1)) if match else 0


@pytest.mark.parametrize("path", ["stream", "complete"])
def test_a_dropped_connection_is_retried_once(path):
    once = DroppingServer(drops=1)
    always = DroppingServer(drops=10)
    try:
        assert _ask(ChatClient(Endpoint(f"http://127.0.0.1:{once.port}/v1", "m")), path) == "Back."
        assert once.connections == 2
        with pytest.raises(LlmError) as err:
            _ask(ChatClient(Endpoint(f"http://127.0.0.1:{always.port}/v1", "m")), path)
        assert err.value.kind == "unreachable" and always.connections == 2, "one retry, not more"
    finally:
        once.close()
        always.close()


def test_a_rejected_url_parameter_is_shown_without_credentials():
    """A node's refused parameter is quoted in its error; a URL there loses userinfo and query."""
    from pydantic import BaseModel, ValidationError, field_validator

    from fay_ros.common.params import format_validation_error

    class Config(BaseModel):
        base_url: str
        retries: int = 0

        @field_validator("base_url")
        @classmethod
        def _http(cls, value: str) -> str:
            if not value.startswith("http"):
                raise ValueError("must be an http:// or https:// URL")
            return value

    with pytest.raises(ValidationError) as error:
        Config(base_url=f"ftp://{USERINFO}@127.0.0.1:21/v1?{QUERY}", retries="x")  # type: ignore[arg-type]
    text = format_validation_error(error.value)
    assert "parameter 'base_url'" in text and "(got 'ftp://127.0.0.1:21/v1')" in text
    assert "(got 'x')" in text  # other values are shown as they are
    assert not [s for s in (USERINFO, "pw-7f3a9c", "sk-query-5e1d", QUERY) if s in text], text
