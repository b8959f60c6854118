"""One settings object: each engine default is written once (dialogue/settings.py), and the
node, `fay-ros chat` and a bare EngineSettings() all run with it."""

from __future__ import annotations

import dataclasses

import pytest
import yaml
from pydantic import ValidationError

from fay_ros.cli import build_parser
from fay_ros.cli.chat import settings_for
from fay_ros.common.paths import config_file
from fay_ros.dialogue.engine import EngineSettings
from fay_ros.dialogue.settings import SHARED_FIELDS, EngineConfig, engine_settings
from fay_ros.nodes.dialogue import DialogueConfig

BASE_URL = "http://127.0.0.1:9/v1"  # any endpoint that is not the embedded one


def _chat_args(*options: str):
    return build_parser().parse_args(["chat", *options])


def _shared(settings: EngineSettings) -> dict[str, object]:
    return {name: getattr(settings, name) for name in (*SHARED_FIELDS, "profile")}


def test_every_engine_parameter_is_shared_with_the_engine():
    # a field of EngineConfig that EngineSettings lacks would be a parameter nothing reads
    assert set(EngineConfig.model_fields) - set(SHARED_FIELDS) == {"model_profile"}
    assert {"frequency_penalty", "background_tasks", "max_tokens", "judge_format"} <= set(SHARED_FIELDS)


def test_the_node_does_not_write_an_engine_default_again():
    redeclared = set(DialogueConfig.__annotations__) & set(EngineConfig.model_fields)
    assert not redeclared, f"DialogueConfig declares {sorted(redeclared)} again: they belong to EngineConfig"
    for name, field in EngineConfig.model_fields.items():
        assert field.description, f"{name} needs a description (it is a ROS parameter of the node)"


def test_node_cli_and_bare_engine_settings_have_the_same_defaults():
    node = engine_settings(DialogueConfig(), base_url=BASE_URL, model="m")
    cli = settings_for(_chat_args(), BASE_URL, "m")
    bare = EngineSettings()
    assert _shared(node) == _shared(cli) == _shared(bare)
    # the values users run (`make run`): the node's
    assert bare.frequency_penalty == 0.3 and bare.background_tasks == "dual"
    # the engine-only fields, which no config sets, are EngineSettings' own
    assert dataclasses.asdict(node) == dataclasses.asdict(cli) | {"llm_tools": node.llm_tools}


def test_cli_options_override_only_what_they_name():
    cli = settings_for(
        _chat_args("--no-judge", "--max-tokens", "40", "--judge-format", "none", "--profile", "tiny"), BASE_URL, "m"
    )
    assert (cli.judge, cli.max_tokens, cli.judge_format, cli.profile) == (False, 40, "none", "tiny")
    assert cli.frequency_penalty == EngineSettings().frequency_penalty
    with pytest.raises(ValidationError):  # the node's bounds hold on the command line too
        settings_for(_chat_args("--max-tokens", "3"), BASE_URL, "m")


def test_the_companion_launch_file_sets_only_dialogue_parameters_the_model_accepts():
    sections = yaml.safe_load(config_file("companion.yaml").read_text())
    given = sections["/**/dialogue"]["ros__parameters"]
    assert set(given) <= set(DialogueConfig.model_fields), set(given) - set(DialogueConfig.model_fields)
    DialogueConfig.model_validate(given)
