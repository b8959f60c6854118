"""Fill any ROS message with deterministic, non-default values (for round-trip tests)."""

from __future__ import annotations

import hashlib
import importlib
import random
from typing import Any

from rosidl_parser import definition as d

_INT_RANGES = {
    "int8": (-128, 127),
    "uint8": (0, 255),
    "int16": (-32768, 32767),
    "uint16": (0, 65535),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint64": (0, 2**64 - 1),
    "octet": (0, 255),
    "char": (0, 255),
}
_TEXT = "Fay 你好 ✓ hello"


def _msg_class(t: d.NamespacedType) -> Any:
    return getattr(importlib.import_module(".".join(t.namespaces)), t.name)


def _value(t: Any, rng: random.Random) -> Any:
    if isinstance(t, d.BasicType):
        name = t.typename
        if name == "boolean":
            return bool(rng.getrandbits(1)) or True
        if name in ("float", "double"):
            return float(rng.randint(-1000, 1000)) / 8.0  # exactly representable in float32
        lo, hi = _INT_RANGES[name]
        return rng.randint(lo, hi)
    if isinstance(t, d.BoundedString):
        return (_TEXT * 4)[: max(1, t.maximum_size)]
    if isinstance(t, (d.UnboundedString, d.UnboundedWString, d.BoundedWString)):
        return f"{_TEXT} {rng.randint(0, 10**6)}"
    if isinstance(t, d.NamespacedType):
        return fill(_msg_class(t)(), rng)
    if isinstance(t, d.AbstractNestedType):
        size = t.size if isinstance(t, d.Array) else rng.randint(2, 4)
        if isinstance(t, d.BoundedSequence):
            size = min(size, t.maximum_size)
        return [_value(t.value_type, rng) for _ in range(size)]
    raise TypeError(f"unsupported type {t!r}")


def fill(msg: Any, rng: random.Random | int = 0) -> Any:
    """Set every field of `msg` (recursively) to a deterministic value; returns msg."""
    if not isinstance(rng, random.Random):
        rng = random.Random(rng)
    for name, slot in zip(msg.get_fields_and_field_types(), msg.SLOT_TYPES):
        value = _value(slot, rng)
        if name == "nanosec":
            value = value % 1_000_000_000
        setattr(msg, name, value)
    return msg


def canonical(value: Any) -> Any:
    """A plain-Python image of a message (every field, recursively)."""
    if hasattr(value, "get_fields_and_field_types"):
        return tuple((name, canonical(getattr(value, name))) for name in value.get_fields_and_field_types())
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ndarray" or type(value).__name__ == "array":
        return tuple(canonical(v) for v in value)
    return value


def seed_of(msg: Any) -> int:
    """A seed derived from every field value of `msg`.

    (Not from serialize_message: CDR padding bytes are not guaranteed to be zeroed.)
    """
    digest = hashlib.sha256(repr(canonical(msg)).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def import_type(name: str) -> Any:
    """'fay_msgs/msg/ActionCue' -> class."""
    package, kind, cls = name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), cls)
