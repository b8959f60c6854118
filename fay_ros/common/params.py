"""Node parameters declared from a pydantic model: one source for defaults, descriptions and
validation.

A node describes its configuration as a pydantic model whose fields carry a default and a
`description`. `declare_config` declares every field as a ROS parameter (with that
description in its descriptor), reads the values given on the command line / YAML, and
validates them with the model. Invalid values raise ConfigError with one line per problem,
naming the parameter, so the node stops at start-up with the reason.

Live parameters: a node names the fields it can apply while running (`live=`) and gives an
`apply(new_config, changed_names)` callback. Every other field is declared read-only, so
`ros2 param set` refuses it with ROS's own reason instead of accepting a value that would be
ignored. A set of live parameters is validated by the same model (refused with the pydantic
message, naming the parameter), then handed to `apply`, which may refuse it by raising
ConfigError or ValueError (e.g. a table file that does not load); only an accepted change is
stored, so `ros2 param get` always shows what is in use.
"""

from __future__ import annotations

import threading
import typing
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from rcl_interfaces.msg import ParameterDescriptor, ParameterType, SetParametersResult

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


READ_ONLY_NOTE = " (read-only: applied at start-up; restart the node to change it)"


def declare_config(
    node: Any, model: type[M], *, live: Iterable[str] = (), apply: Callable[[M, frozenset[str]], None] | None = None
) -> M:
    """Declare every field of `model` on `node` and return the validated config.

    `live`: the fields the node applies at run time through `apply(new_config, changed)`;
    all others are read-only."""
    live = frozenset(live)
    unknown = live - set(model.model_fields)
    if unknown:
        raise TypeError(f"live parameters not in {model.__name__}: {sorted(unknown)}")
    if live and apply is None:
        raise TypeError("live parameters need an apply callback")
    values: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        read_only = name not in live
        descriptor = ParameterDescriptor(
            description=(field.description or name)
            + (READ_ONLY_NOTE if read_only else " (live: takes effect at once)"),
            type=_ros_type(field.annotation),
            # Types are checked by pydantic below, so a wrong-type override gets our message.
            dynamic_typing=True,
            read_only=read_only,
        )
        default = field.get_default(call_default_factory=True)
        param = node.declare_parameter(name, default, descriptor)
        values[name] = param.value
    try:
        config = model.model_validate(values)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc)) from None
    if live and apply is not None:
        node.add_on_set_parameters_callback(_LiveParameters(model, values, live, apply))
    return config


class _LiveParameters:
    """The on-set callback of one node's live parameters (see the module docstring)."""

    def __init__(
        self,
        model: type[BaseModel],
        values: dict[str, Any],
        live: frozenset[str],
        apply: Callable[[Any, frozenset[str]], None],
    ) -> None:
        self._model = model
        self._values = dict(values)  # what is in use
        self._live = live
        self._apply = apply
        self._lock = threading.Lock()  # parameter services may run on several executor threads

    def __call__(self, parameters: list[Any]) -> SetParametersResult:
        ours = {p.name: p.value for p in parameters if p.name in self._model.model_fields}
        if not ours:  # e.g. use_sim_time: rclpy's own
            return SetParametersResult(successful=True)
        refused = sorted(set(ours) - self._live)
        if refused:  # normally stopped by read_only already; kept for descriptors set elsewhere
            return SetParametersResult(
                successful=False, reason="; ".join(f"parameter '{name}'{READ_ONLY_NOTE}" for name in refused)
            )
        with self._lock:
            candidate = {**self._values, **ours}
            try:
                config = self._model.model_validate(candidate)
            except ValidationError as exc:
                return SetParametersResult(successful=False, reason=format_validation_error(exc))
            changed = frozenset(name for name in ours if ours[name] != self._values.get(name))
            try:
                self._apply(config, changed)
            except (ConfigError, ValueError) as exc:
                return SetParametersResult(successful=False, reason=f"refused: {exc}")
            self._values = candidate
        return SetParametersResult(successful=True)


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
