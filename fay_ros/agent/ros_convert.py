"""JSON <-> ROS 2 messages, and the JSON schema of a message type, without rosidl_runtime_py.

Works on the generated Python classes only through what every rosidl message class has:
`get_fields_and_field_types()` (field name -> type string such as `int32`, `string<=10`,
`test_msgs/BasicTypes`, `double[3]`, `sequence<uint8>`, `sequence<string, 5>`) and plain
attribute access. Nothing here imports ROS; interface classes are imported by name at run time
(`import_interface("std_srvs/srv/Trigger")` -> `std_srvs.srv.Trigger`).

- `to_message(cls, data)`: a JSON object -> a message; every value is checked against its
  field type (integer ranges, booleans, string bounds, array sizes, sequence bounds, nested
  objects, unknown keys), and a `ConversionError` names the field path (`goal.order`,
  `poses[2].position.x`). Missing fields keep their defaults.
- `to_plain(msg)`: a message -> JSON-compatible dicts, lists and scalars.
- `properties(cls)`: JSON-schema `properties` of the message's fields (what the model sees).
- `summarise(value, limit)`: compact JSON text for the model, long lists and text cut.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass
from typing import Any

from ..common.errors import FayError

INT_RANGES: dict[str, tuple[int, int]] = {
    "int8": (-(2**7), 2**7 - 1),
    "uint8": (0, 2**8 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint64": (0, 2**64 - 1),
    "char": (0, 255),
    "octet": (0, 255),
    "byte": (0, 255),
}
FLOATS = {"float", "double", "float32", "float64", "long double"}
FLOAT32_MAX = 3.4028234663852886e38
STRINGS = {"string", "wstring"}
BOOLEANS = {"boolean", "bool"}

_SEQUENCE = re.compile(r"^sequence<(.+?)(?:,\s*(\d+))?>$")
_ARRAY = re.compile(r"^(.+)\[(\d+)\]$")
_BOUNDED_STRING = re.compile(r"^(w?string)<=?(\d+)>$")
_NAMESPACED = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)/(?:msg/)?([A-Za-z_][A-Za-z0-9_]*)$")
_INTERFACE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)/(msg|srv|action)/([A-Za-z_][A-Za-z0-9_]*)$")


class ConversionError(FayError, ValueError):
    """A value does not fit its field; str() starts with the field path."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path or '(message)'}: {problem}")


class InterfaceError(FayError, ValueError):
    """An interface type name that cannot be imported."""


@dataclass(frozen=True)
class FieldType:
    """A parsed field type string: `base` (`int32`, `string`, `pkg/Name`), the string bound,
    and the container (`array` with a fixed size, `sequence` with an optional bound)."""

    base: str
    string_bound: int | None = None
    container: str | None = None  # None | "array" | "sequence"
    size: int | None = None  # array size, or sequence bound (None = unbounded)

    @property
    def element(self) -> FieldType:
        return FieldType(self.base, self.string_bound)

    @property
    def is_message(self) -> bool:
        return "/" in self.base


def parse_type(text: str) -> FieldType:
    """Parse a type string of `get_fields_and_field_types()`."""
    text = text.strip()
    if m := _SEQUENCE.match(text):
        inner = parse_type(m.group(1))
        if inner.container:
            raise InterfaceError(f"nested containers are not ROS types: {text!r}")
        return FieldType(inner.base, inner.string_bound, "sequence", int(m.group(2)) if m.group(2) else None)
    if m := _ARRAY.match(text):
        inner = parse_type(m.group(1))
        if inner.container:
            raise InterfaceError(f"nested containers are not ROS types: {text!r}")
        return FieldType(inner.base, inner.string_bound, "array", int(m.group(2)))
    if m := _BOUNDED_STRING.match(text):
        return FieldType(m.group(1), int(m.group(2)))
    if text in INT_RANGES or text in FLOATS or text in STRINGS or text in BOOLEANS:
        return FieldType(text)
    if m := _NAMESPACED.match(text):
        return FieldType(f"{m.group(1)}/{m.group(2)}")
    raise InterfaceError(f"unknown field type {text!r}")


def import_interface(type_name: str) -> Any:
    """`pkg/srv/Name` -> the class `pkg.srv.Name` (also msg, action); `pkg/Name` is a message."""
    m = _INTERFACE.match(type_name)
    if m is None:
        if n := _NAMESPACED.match(type_name):
            return import_interface(f"{n.group(1)}/msg/{n.group(2)}")
        raise InterfaceError(f"{type_name!r} is not an interface type name (pkg/msg|srv|action/Name)")
    package, kind, name = m.groups()
    try:
        module = importlib.import_module(f"{package}.{kind}")
    except ImportError as exc:
        raise InterfaceError(
            f"interface {type_name}: package {package!r} cannot be imported ({exc}); is it installed and sourced?"
        ) from None
    cls = getattr(module, name, None)
    if cls is None:
        raise InterfaceError(f"interface {type_name}: {package}.{kind} has no {name!r}")
    needed = {
        "msg": ("get_fields_and_field_types",),
        "srv": ("Request", "Response"),
        "action": ("Goal", "Result", "Feedback"),
    }[kind]
    if not all(hasattr(cls, attr) for attr in needed):
        raise InterfaceError(f"interface {type_name}: {package}.{kind}.{name} is not a ROS {kind} type")
    return cls


def fields(cls: Any) -> dict[str, FieldType]:
    return {name: parse_type(text) for name, text in cls.get_fields_and_field_types().items()}


# -- JSON -> message -----------------------------------------------------------------------


def to_message(cls: Any, data: Any, path: str = "") -> Any:
    """A new `cls` message with the values of the JSON object `data` (see the module doc)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConversionError(path, f"expected an object with the fields of {_type_label(cls)}, got {_json_kind(data)}")
    known = fields(cls)
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ConversionError(
            _join(path, unknown[0]), f"no such field in {_type_label(cls)} (fields: {', '.join(known) or 'none'})"
        )
    msg = cls()
    for name, value in data.items():
        where = _join(path, name)
        converted = _convert(known[name], value, where)
        try:
            setattr(msg, name, converted)
        except (AssertionError, TypeError, ValueError) as exc:  # the generated setter's own checks
            raise ConversionError(where, f"rejected by the message class: {exc or type(exc).__name__}") from None
    return msg


def _convert(ftype: FieldType, value: Any, path: str) -> Any:
    if ftype.container is None:
        return _scalar(ftype, value, path)
    if not isinstance(value, list):
        raise ConversionError(path, f"expected an array, got {_json_kind(value)}")
    if ftype.container == "array" and len(value) != ftype.size:
        raise ConversionError(path, f"expected exactly {ftype.size} items, got {len(value)}")
    if ftype.container == "sequence" and ftype.size is not None and len(value) > ftype.size:
        raise ConversionError(path, f"at most {ftype.size} items allowed, got {len(value)}")
    element = ftype.element
    return [_scalar(element, item, f"{path}[{i}]") for i, item in enumerate(value)]


def _scalar(ftype: FieldType, value: Any, path: str) -> Any:
    base = ftype.base
    if ftype.is_message:
        return to_message(import_interface(base), value, path)
    if base in BOOLEANS:
        if not isinstance(value, bool):
            raise ConversionError(path, f"expected true or false, got {_json_kind(value)}")
        return value
    if base in INT_RANGES:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConversionError(path, f"expected an integer ({base}), got {_json_kind(value)}")
        lo, hi = INT_RANGES[base]
        if not lo <= value <= hi:
            raise ConversionError(path, f"{value} is out of range for {base} ({lo}..{hi})")
        return bytes([value]) if base in ("octet", "byte") else value
    if base in FLOATS:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConversionError(path, f"expected a number ({base}), got {_json_kind(value)}")
        if base in ("float", "float32") and abs(value) > FLOAT32_MAX:
            raise ConversionError(path, f"{value} is out of range for float32")
        return float(value)
    if base in STRINGS:
        if not isinstance(value, str):
            raise ConversionError(path, f"expected a string, got {_json_kind(value)}")
        if ftype.string_bound is not None and len(value) > ftype.string_bound:
            raise ConversionError(path, f"at most {ftype.string_bound} characters allowed, got {len(value)}")
        return value
    raise ConversionError(path, f"unsupported field type {base!r}")


# -- message -> JSON -----------------------------------------------------------------------


def to_plain(value: Any) -> Any:
    """A message (or field value) as JSON-compatible data: dicts, lists, numbers, strings."""
    if hasattr(value, "get_fields_and_field_types"):
        return {name: to_plain(getattr(value, name)) for name in value.get_fields_and_field_types()}
    if isinstance(value, (bytes, bytearray)):
        return value[0] if len(value) == 1 else list(value)
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars, array.array
        return to_plain(value.tolist())
    return value


# -- JSON schema ---------------------------------------------------------------------------


def properties(cls: Any) -> dict[str, Any]:
    """JSON-schema `properties` for the fields of a message class."""
    return {name: _schema(ftype) for name, ftype in fields(cls).items()}


def _schema(ftype: FieldType) -> dict[str, Any]:
    if ftype.container is not None:
        schema: dict[str, Any] = {"type": "array", "items": _schema(ftype.element)}
        if ftype.container == "array":
            schema["minItems"] = schema["maxItems"] = ftype.size
        elif ftype.size is not None:
            schema["maxItems"] = ftype.size
        return schema
    base = ftype.base
    if ftype.is_message:
        cls = import_interface(base)
        return {"type": "object", "description": base, "properties": properties(cls), "additionalProperties": False}
    if base in BOOLEANS:
        return {"type": "boolean"}
    if base in INT_RANGES:
        lo, hi = INT_RANGES[base]
        return {"type": "integer", "description": base, "minimum": lo, "maximum": hi}
    if base in FLOATS:
        return {"type": "number", "description": base}
    string: dict[str, Any] = {"type": "string"}
    if ftype.string_bound is not None:
        string["maxLength"] = ftype.string_bound
    return string


# -- text for the model --------------------------------------------------------------------


def summarise(value: Any, limit: int = 2000, max_items: int = 32) -> str:
    """Compact JSON of `value` for a tool result: lists longer than `max_items` keep their
    first items and say how many were left out; the text is cut at `limit` characters."""
    text = json.dumps(_shorten(value, max_items), ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters)"


def _shorten(value: Any, max_items: int) -> Any:
    if isinstance(value, dict):
        return {k: _shorten(v, max_items) for k, v in value.items()}
    if isinstance(value, list):
        kept = [_shorten(v, max_items) for v in value[:max_items]]
        if len(value) > max_items:
            kept.append(f"... ({len(value) - max_items} more items)")
        return kept
    return value


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _json_kind(value: Any) -> str:
    kinds = {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
        type(None): "null",
    }
    return f"{kinds.get(type(value), type(value).__name__)} ({json.dumps(value, default=str)[:40]})"


def _type_label(cls: Any) -> str:
    module = getattr(cls, "__module__", "")
    return f"{module.split('.')[0]}/{cls.__name__}" if module else cls.__name__
