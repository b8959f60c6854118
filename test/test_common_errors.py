"""The one exception hierarchy (fay_ros.common.errors): every exception class fay_ros defines is
a FayError; TableError names the file and the line or key of each issue; the LLM client's
failures are one subclass per kind; a bug is no longer mistaken for bad configuration."""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import pkgutil
import socket

import pytest
from pytest_httpserver import HTTPServer

import fay_ros
from fay_ros.bringup import graph
from fay_ros.cli import up
from fay_ros.common.errors import ConfigError, FayError, Issue, TableError
from fay_ros.llm import client as llm
from fay_ros.llm.client import (
    KINDS,
    ApiKeyError,
    ChatClient,
    Endpoint,
    LlmEmpty,
    LlmError,
    LlmHttpError,
    LlmMalformed,
    LlmUnreachable,
    key_from_env,
    parse_json_object,
)


def project_exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined in a fay_ros module, by qualified name."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(fay_ros.__path__, "fay_ros."):
        if info.name.endswith(".__main__"):
            continue  # runs the CLI when imported
        module = importlib.import_module(info.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BaseException) and cls.__module__ == module.__name__:
                found[f"{module.__name__}.{name}"] = cls
    return found


def test_every_exception_class_of_fay_ros_is_a_fay_error():
    classes = project_exception_classes()
    # The walk really reaches the package (a broken walk must not pass by finding nothing).
    for expected in (
        "fay_ros.common.errors.TableError",
        "fay_ros.llm.client.LlmTimeout",
        "fay_ros.dialogue.persona.PersonaError",
        "fay_ros.web.access.AccessError",
        "fay_ros.web.gate_policy.Refused",
        "fay_ros.dialogue.tools.ToolError",
    ):
        assert expected in classes, sorted(classes)
    outside = sorted(name for name, cls in classes.items() if not issubclass(cls, FayError))
    assert outside == [], f"not under FayError: {outside}"


def test_file_and_table_errors_are_configuration_errors_and_stay_value_errors():
    from fay_ros.dialogue.persona import PersonaError
    from fay_ros.dialogue.qa import QaTableError
    from fay_ros.web.access import AccessError

    for cls in (TableError, PersonaError, QaTableError, AccessError):
        assert issubclass(cls, ConfigError) and issubclass(cls, ValueError), cls
    assert issubclass(ApiKeyError, ConfigError) and issubclass(ApiKeyError, ValueError)
    assert issubclass(graph.ParameterFileNotFound, FileNotFoundError)
    # There is one TableError: the action and body tables use the common one.
    from fay_ros import action

    assert action.TableError is TableError


def test_table_error_names_the_file_and_the_line_or_key_of_each_issue(tmp_path, monkeypatch):
    path = tmp_path / "tables" / "servo_map.yaml"
    error = TableError(
        path,
        [
            Issue(3, "code 'a.b' repeats line 2"),  # a CSV row
            Issue(12, "unknown key (misspelt?)", key="behaviors.nod.keyframs"),  # a YAML key
            Issue(0, "missing required key", key="return_to_idle"),  # a key not in the file
            Issue(7, "invalid YAML: expected ':'", column=5),  # YAML syntax
            Issue(0, "file not found"),  # the file as a whole
        ],
    )
    assert str(error).splitlines() == [
        f"{path}:3: code 'a.b' repeats line 2",
        f"{path}: behaviors.nod.keyframs: unknown key (misspelt?) (line 12)",
        f"{path}: return_to_idle: missing required key",
        f"{path}: line 7 column 5: invalid YAML: expected ':'",
        f"{path}: file not found",
    ]
    assert error.path == path and [i.line for i in error.issues] == [3, 12, 0, 7, 0]
    # Below the working directory the path is shown relative to it, as people type it.
    monkeypatch.chdir(tmp_path)
    assert str(TableError(path, [Issue(1, "x")])) == "tables/servo_map.yaml:1: x"


# ---------------------------------------------------------------------------- LLM errors


def test_each_llm_error_kind_has_its_own_class_and_keeps_kind():
    subclasses = [
        cls for cls in vars(llm).values() if isinstance(cls, type) and issubclass(cls, LlmError) and cls is not LlmError
    ]
    kinds = {}
    for cls in subclasses:
        params = list(inspect.signature(cls).parameters)
        error = cls("why", 500) if "status" in params else cls("why")
        assert isinstance(error, FayError) and error.reason == "why" and str(error) == f"{error.kind}: why"
        kinds[error.kind] = cls
    assert sorted(kinds) == sorted(KINDS) and len(subclasses) == len(KINDS)
    assert LlmHttpError("HTTP 503", 503).status == 503
    legacy = LlmError("malformed", "built the old way")  # callers elsewhere still do this
    assert legacy.kind == "malformed" and isinstance(legacy, FayError)


def test_real_failures_raise_the_kind_subclass():
    with pytest.raises(LlmUnreachable, match="no LLM endpoint configured"):
        ChatClient(Endpoint()).complete("s", "u")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(LlmUnreachable) as refused:
        ChatClient(Endpoint(f"http://127.0.0.1:{port}/v1", "m", connect_timeout=1.0)).complete("s", "u")
    assert refused.value.kind == "unreachable"
    with pytest.raises(LlmMalformed):
        parse_json_object("no object here")
    with HTTPServer(host="127.0.0.1") as server:
        server.expect_request("/v1/chat/completions").respond_with_data("overloaded", status=503)
        with pytest.raises(LlmHttpError) as http:
            ChatClient(Endpoint(server.url_for("/v1"), "m")).complete("s", "u")
        assert (http.value.kind, http.value.status) == ("http", 503)
        server.clear()
        answer = {
            "id": "1",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": " "}}],
        }
        server.expect_request("/v1/chat/completions").respond_with_data(
            json.dumps(answer), content_type="application/json"
        )
        with pytest.raises(LlmEmpty):
            ChatClient(Endpoint(server.url_for("/v1"), "m")).complete("s", "u")


def test_an_unset_key_variable_is_a_configuration_error(monkeypatch):
    monkeypatch.delenv("FAY_TEST_UNSET_KEY", raising=False)
    with pytest.raises(ApiKeyError, match="FAY_TEST_UNSET_KEY is not set"):
        key_from_env("FAY_TEST_UNSET_KEY")
    with pytest.raises(ConfigError, match="NAME of an environment variable"):
        key_from_env("sk-pasted key")


# ------------------------------------------------- bugs are not "invalid configuration" any more


def test_fay_ros_up_reports_configuration_errors_but_lets_a_bug_through(monkeypatch, capsys, tmp_path):
    """`fay-ros up` used to catch (ValueError, FileNotFoundError): any ValueError from a bug in
    the bring-up became "fay-ros up: ..." and exit code 2, as if the user had mistyped."""
    assert up.run(argparse.Namespace(options=["asr_backed:=vosk"])) == 2
    assert "unknown bring-up option(s): ['asr_backed']" in capsys.readouterr().out
    assert up.run(argparse.Namespace(options=[f"config:={tmp_path / 'missing.yaml'}"])) == 2
    assert "bring-up parameter file not found" in capsys.readouterr().out

    def buggy(_options):
        return int("not a number")  # a programming error deep in the bring-up

    monkeypatch.setattr(graph, "companion_processes", buggy)
    with pytest.raises(ValueError, match="invalid literal for int"):
        up.run(argparse.Namespace(options=[]))
