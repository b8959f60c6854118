"""Node parameters declared from a pydantic model: one source for defaults, descriptions and
validation.

A node describes its configuration as a pydantic model whose fields carry a default and a
`description`. `declare_config` declares every field as a ROS parameter (with that
description in its descriptor), reads the values given on the command line / YAML, and
validates them with the model. Invalid values raise ConfigError with one line per problem,
naming the parameter, so the node stops at start-up with the reason.
"""
from __future__ import annotations

import typing
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from rcl_interfaces.msg import ParameterDescriptor, ParameterType

from .errors import ConfigError
from .urls import safe_url

__all__ = ["ConfigError", "declare_config", "format_validation_error"]  # ConfigError: for the nodes' imports

M = TypeVar("M", bound=BaseModel)


_PARAM_TYPES: dict[Any, int] = {
    str: ParameterType.PARAMETER_STRING,
    bool: ParameterType.PARAMETER_BOOL,
    int: ParameterType.PARAMETER_INTEGER,
    float: ParameterType.PARAMETER_DOUBLE,
    list[str]: ParameterType.PARAMETER_STRING_ARRAY,
    list[float]: ParameterType.PARAMETER_DOUBLE_ARRAY,
    list[int]: ParameterType.PARAMETER_INTEGER_ARRAY,
    list[bool]: ParameterType.PARAMETER_BOOL_ARRAY,
}


def _ros_type(annotation: Any) -> int:
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return _ros_type(type(typing.get_args(annotation)[0]))
    if origin is typing.Union or str(origin) == "types.UnionType":
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _ros_type(args[0])
    if annotation in _PARAM_TYPES:
        return _PARAM_TYPES[annotation]
    raise TypeError(f"no ROS parameter type for {annotation!r}")


def declare_config(node: Any, model: type[M]) -> M:
    """Declare every field of `model` on `node` and return the validated config."""
    values: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        descriptor = ParameterDescriptor(
            description=field.description or name,
            type=_ros_type(field.annotation),
            # Types are checked by pydantic below, so a wrong-type override gets our message.
            dynamic_typing=True,
        )
        default = field.get_default(call_default_factory=True)
        param = node.declare_parameter(name, default, descriptor)
        values[name] = param.value
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc)) from None


def _shown(value: object) -> str:
    """A rejected value as an error may show it: a URL without its userinfo and query (they
    may hold credentials), anything else as it is."""
    if isinstance(value, str) and "://" in value:
        return repr(safe_url(value))
    return repr(value)


def format_validation_error(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(config)"
        lines.append(f"parameter '{where}': {err['msg']} (got {_shown(err.get('input'))})")
    return "invalid parameters:\n  " + "\n  ".join(lines)
