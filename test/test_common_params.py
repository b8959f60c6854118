"""declare_config: parameters from a pydantic model; live ones applied through the on-set
callback, the rest read-only (fay_ros.common.params)."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field
from rclpy.parameter import Parameter

from fay_ros.common.params import ConfigError, declare_config


class Voice(BaseModel):
    engine: Literal["espeak-ng", "pyttsx3"] = Field("espeak-ng", description="engine")
    rate_wpm: int = Field(175, ge=80, le=450, description="rate")
    voice: str = Field("en-us", description="voice")


@pytest.fixture
def node():
    import rclpy
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    made = rclpy.create_node("params_under_test", context=context)
    yield made
    made.destroy_node()
    rclpy.shutdown(context=context)


def _set(node, **values) -> list:
    return node.set_parameters([Parameter(name, value=value) for name, value in values.items()])


def test_a_live_change_is_validated_applied_and_stored(node):
    applied: list[tuple[Voice, frozenset[str]]] = []
    config = declare_config(
        node, Voice, live={"rate_wpm", "voice"}, apply=lambda c, changed: applied.append((c, changed))
    )
    assert config.rate_wpm == 175
    [result] = _set(node, rate_wpm=220)
    assert result.successful, result.reason
    assert applied[-1][0].rate_wpm == 220 and applied[-1][1] == {"rate_wpm"}
    assert node.get_parameter("rate_wpm").value == 220
    # the next change is validated against what is in use now (voice changes, rate stays 220)
    [result] = _set(node, voice="en-gb")
    assert result.successful and applied[-1][0].rate_wpm == 220 and applied[-1][0].voice == "en-gb"


def test_an_invalid_live_value_is_refused_with_the_pydantic_message_and_nothing_changes(node):
    applied: list = []
    declare_config(node, Voice, live={"rate_wpm"}, apply=lambda c, changed: applied.append(c))
    [result] = _set(node, rate_wpm=10)
    assert not result.successful
    assert "parameter 'rate_wpm'" in result.reason and "greater than or equal to 80" in result.reason
    assert applied == [] and node.get_parameter("rate_wpm").value == 175
    [result] = _set(node, rate_wpm="fast")  # dynamic typing: the model checks the type
    assert not result.successful and "valid integer" in result.reason


def test_a_read_only_parameter_is_refused_with_the_reason(node):
    declare_config(node, Voice, live={"rate_wpm"}, apply=lambda c, changed: None)
    [result] = _set(node, engine="pyttsx3")
    assert not result.successful and "read-only" in result.reason
    assert node.get_parameter("engine").value == "espeak-ng"
    assert node.describe_parameter("engine").read_only
    assert "restart the node" in node.describe_parameter("engine").description
    assert not node.describe_parameter("rate_wpm").read_only


def test_apply_may_refuse_a_valid_value_and_it_is_not_stored(node):
    def apply(config: Voice, changed: frozenset[str]) -> None:
        raise ConfigError(f"voice {config.voice!r} is not installed")

    declare_config(node, Voice, live={"voice"}, apply=apply)
    [result] = _set(node, voice="xx")
    assert not result.successful and "voice 'xx' is not installed" in result.reason
    assert node.get_parameter("voice").value == "en-us"


def test_without_live_fields_every_parameter_is_read_only(node):
    declare_config(node, Voice)
    assert all(node.describe_parameter(name).read_only for name in Voice.model_fields)
    [result] = _set(node, rate_wpm=200)
    assert not result.successful


def test_rclpys_own_parameters_still_change(node):
    declare_config(node, Voice, live={"rate_wpm"}, apply=lambda c, changed: None)
    [result] = _set(node, use_sim_time=True)
    assert result.successful and node.get_parameter("use_sim_time").value is True


def test_live_names_must_be_fields_with_an_apply_callback(node):
    with pytest.raises(TypeError, match="not in Voice"):
        declare_config(node, Voice, live={"pitch"}, apply=lambda c, changed: None)
    with pytest.raises(TypeError, match="apply callback"):
        declare_config(node, Voice, live={"voice"})
