"""Loading the body's YAML mapping tables with errors that name the file, line and key.

A table is parsed with a strict loader (duplicate keys are errors: PyYAML would silently keep
the last one) and validated with a pydantic model (unknown keys are errors, so a typo never
turns into a silently ignored setting). Every problem becomes a TableError whose message
starts with the file name and names the key path, e.g.
`config/servo_map.yaml: behaviors.invite.keyframes[1].at: ...`.
"""
from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generic, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from ..common.paths import config_file

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

class TableError(ValueError):
    """A mapping table cannot be used; the message names the file and the key or line."""


def default_table_path(file_name: str) -> Path:
    """The shipped table: the source tree's config/ (pip/editable), else the ament share."""
    return config_file(file_name)


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys (and so never executes anything)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    seen: dict[Any, yaml.Node] = {}
    for key_node, _value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            first = seen[key].start_mark.line + 1
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first defined on line {first})", key_node.start_mark)
        seen[key] = key_node
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _location(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def format_validation_error(name: str, exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        # pydantic puts the validator of a tagged/keyed union into loc; model-level checks add
        # nothing useful after the last real key.
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key (misspelt?)"
        elif err["type"] == "missing":
            msg = "missing required key"
        got = err.get("input")
        suffix = f" (got {got!r})" if err["type"] not in ("missing", "extra_forbidden") and not isinstance(got, dict) else ""
        lines.append(f"{name}: {_location(loc)}: {msg}{suffix}")
    return "\n".join(lines)


def _hint(text: str, mark: yaml.Mark | None) -> str:
    """A likely cause for a syntax error that people make in these tables."""
    if mark is None:
        return ""
    lines = text.splitlines()
    nearby = lines[max(0, mark.line - 1):mark.line + 1]
    if any(re.search(r"(:|,|\[)\s*#[0-9A-Fa-f]{3,8}\b", line) for line in nearby):
        return " (an unquoted # starts a YAML comment: quote colours, e.g. '#FFC83C')"
    return ""


def parse_table(text: str, name: str, model: type[M]) -> M:
    """Parse YAML text and validate it with `model`; `name` is used in every error.

    After the per-field validation, a model may define `cross_check()` returning
    (key path, problem) pairs for rules that span several keys (a joint named in a pose must
    exist in `joints`, keyframe times must increase, ...).
    """
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - _StrictLoader is a SafeLoader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else "?"
        problem = exc.problem or exc.context or "invalid YAML"
        raise TableError(f"{name}: {where}: {problem}{_hint(text, mark)}") from None
    except yaml.YAMLError as exc:
        raise TableError(f"{name}: invalid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise TableError(f"{name}: (top level): expected a mapping of keys, got {type(data).__name__}")
    try:
        table = model.model_validate(data)
    except ValidationError as exc:
        raise TableError(format_validation_error(name, exc)) from None
    cross_check = getattr(table, "cross_check", None)
    problems = cross_check() if callable(cross_check) else []
    if problems:
        raise TableError("\n".join(f"{name}: {where}: {problem}" for where, problem in problems))
    return table


def load_table(path: str | Path, model: type[M]) -> M:
    path = Path(path)
    name = _display(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TableError(f"{name}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TableError(f"{name}: cannot read: {exc}") from None
    return parse_table(text, name, model)


def finite(value: float, default: float) -> float:
    """A float from a message field, or `default` when it is NaN or infinite."""
    return value if isinstance(value, (int, float)) and math.isfinite(value) else default


def unit(value: float, default: float = 0.5) -> float:
    """Clamp to 0..1 (NaN → default): cue intensities come from other processes."""
    return min(1.0, max(0.0, finite(value, default)))


@dataclass
class ReloadResult(Generic[T]):
    changed: bool
    table: T
    error: str | None = None


class ReloadingTable(Generic[T]):
    """A table loaded from a file, reloaded when the file changes; a bad edit keeps the last
    good table and reports the error once per bad version of the file."""

    def __init__(self, path: str | Path, loader: Callable[[Path], T]) -> None:
        self.path = Path(path)
        self._loader = loader
        self.table: T = loader(self.path)  # a bad table at start-up raises TableError
        self._digest = self._read_digest()
        self._failed_digest: str | None = None

    def _read_digest(self) -> str:
        try:
            return hashlib.sha256(self.path.read_bytes()).hexdigest()
        except OSError as exc:
            return f"unreadable: {exc}"

    def poll(self) -> ReloadResult[T]:
        """Reload if the file's content changed. Never raises for a bad file."""
        digest = self._read_digest()
        if digest == self._digest or digest == self._failed_digest:
            return ReloadResult(False, self.table)
        try:
            table = self._loader(self.path)
        except TableError as exc:
            self._failed_digest = digest
            return ReloadResult(False, self.table, str(exc))
        self.table, self._digest, self._failed_digest = table, digest, None
        return ReloadResult(True, table)
