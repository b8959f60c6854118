"""The one way fay_ros reads a YAML configuration file: strict, and every error names the file
and the line.

PyYAML's `safe_load` keeps the last of two equal keys without a word, and a pydantic model
with default settings drops keys it does not know: either way a typo silently becomes "use
the default". Here instead:

- `parse_yaml` / `read_yaml` parse with `StrictLoader`, a SafeLoader (no Python object tags,
  so nothing is ever executed) whose mappings refuse a duplicate key, naming both lines. A
  syntax error names line and column (and a likely cause for the usual mistakes).
- `validate` checks the data with a pydantic model. Models used here forbid extra keys
  (`extra="forbid"`), so an unknown key is an error naming its key path and line. A model
  may also define `cross_check()` returning (key path, problem) pairs for rules that span
  several keys.
- Every problem is an `Issue` of one TableError (or the caller's subclass of it), all
  problems of the file at once, so a person fixes them in one go.

Key paths are written `behaviors.nod.keyframes[1].at`: mapping keys joined with dots, list
positions in brackets (so a list item never looks like a key named "1").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from .errors import FayError, Issue, TableError, read_table_text

M = TypeVar("M", bound=BaseModel)


class DuplicateKeyError(FayError, yaml.constructor.ConstructorError):
    """A mapping lists the same key twice (PyYAML would keep the last one silently). Raised
    inside the parser (a YAML error, with its mark); `parse_yaml` turns it into an Issue."""


class StrictLoader(yaml.SafeLoader):
    """SafeLoader whose mappings refuse duplicate keys."""


def _construct_mapping(loader: StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    # Only the keys written in this mapping count: a key that overrides one brought in by a
    # merge (<<: *base) is what merging is for.
    seen: dict[Any, yaml.Node] = {}
    for key_node, _value_node in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=deep)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: construct_mapping below reports it
            continue
        if first is not None:
            raise DuplicateKeyError(
                None,
                None,
                f"duplicate key {key!r} (first defined on line {first.start_mark.line + 1})",
                key_node.start_mark,
            )
        seen[key] = key_node
    return loader.construct_mapping(node, deep=deep)  # SafeConstructor's: flattens merges first


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def key_path(parts: tuple[Any, ...], dotted_indices: bool = False) -> str:
    """('behaviors', 'nod', 'keyframes', 1, 'at') -> 'behaviors.nod.keyframes[1].at'."""
    out = ""
    for part in parts:
        if isinstance(part, int) and not dotted_indices:
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


@dataclass(frozen=True)
class YamlDocument:
    """A parsed file: its data and the line of every key (and list item) in it."""

    path: Path
    data: Any
    key_lines: dict[str, int] = field(default_factory=dict)  # key_path(...) -> 1-based line

    def line_of(self, key: str) -> int:
        """The line of `key`, else of its nearest enclosing key that is in the file (a missing
        key is reported at the mapping that lacks it); 0 when none is."""
        while key:
            if key in self.key_lines:
                return self.key_lines[key]
            cut = max(key.rfind("."), key.rfind("["))
            if cut <= 0:
                break
            key = key[:cut]
        return 0


def _key_lines(root: yaml.Node | None) -> dict[str, int]:
    lines: dict[str, int] = {}
    visited: set[int] = set()

    def walk(node: yaml.Node, parts: tuple[Any, ...]) -> None:
        # An alias is the same node object again: walk it once (no blow-up, no endless loop).
        if id(node) in visited:
            return
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    child = parts + (key_node.value,)
                    # the last pair wins, as in the data (an explicit key after merged ones)
                    lines[key_path(child)] = key_node.start_mark.line + 1
                    walk(value_node, child)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                child = parts + (index,)
                lines[key_path(child)] = item.start_mark.line + 1
                walk(item, child)

    if root is not None:
        walk(root, ())
    return lines


def _hint(text: str, mark: yaml.Mark | None) -> str:
    """A likely cause for a syntax error people make in these files."""
    if mark is None:
        return ""
    nearby = text.splitlines()[max(0, mark.line - 1) : mark.line + 1]
    if any(re.search(r"(:|,|\[)\s*#[0-9A-Fa-f]{3,8}\b", line) for line in nearby):
        return " (an unquoted # starts a YAML comment: quote colours, e.g. '#FFC83C')"
    return ""


def parse_yaml(text: str, path: Path | str, *, error: type[TableError] = TableError) -> YamlDocument:
    """Parse `text` (the content of `path`, which errors name) with StrictLoader."""
    path = Path(path)
    loader = StrictLoader(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "not valid"
        problem = what if isinstance(exc, DuplicateKeyError) else f"invalid YAML: {what}{_hint(text, mark)}"
        if mark is None:
            raise error(path, [Issue(0, problem)]) from None
        raise error(path, [Issue(mark.line + 1, problem, column=mark.column + 1)]) from None
    except yaml.YAMLError as exc:  # e.g. a control character (ReaderError): no line mark
        raise error(path, [Issue(0, f"invalid YAML: {exc}")]) from None
    finally:
        loader.dispose()
    return YamlDocument(path, data, _key_lines(root))


def read_yaml(path: Path | str, *, error: type[TableError] = TableError) -> YamlDocument:
    """Read and parse a UTF-8 YAML file; a missing or unreadable file is an `error` too."""
    text = read_table_text(path, error=error)
    return parse_yaml(text, path, error=error)


def validation_issues(
    exc: ValidationError, document: YamlDocument, *, show_input: bool = True, dotted_indices: bool = False
) -> list[Issue]:
    """One Issue per pydantic error: key path, line, and a message for people."""
    issues = []
    for err in exc.errors(include_url=False):
        # pydantic puts validator names (function-after[...]) into loc; they are no keys.
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        kind = err["type"]
        if kind == "extra_forbidden":
            problem = "unknown key (misspelt?)"
        elif kind == "missing":
            problem = "missing required key"
        else:
            problem = err["msg"].removeprefix("Value error, ")
            got = err.get("input")
            if show_input and not isinstance(got, dict):
                problem += f" (got {got!r})"
        issues.append(Issue(document.line_of(key_path(loc)), problem, key=key_path(loc, dotted_indices)))
    return issues


def validate(
    document: YamlDocument, model: type[M], *, error: type[TableError] = TableError, dotted_indices: bool = False
) -> M:
    """The document's data as `model`; every problem (type, range, unknown or missing key, and
    the model's own `cross_check()`) in one `error`. An empty file is an empty mapping.

    The offending value is quoted in each problem unless the model sets pydantic's
    `hide_input_in_errors` (files holding secrets)."""
    data = {} if document.data is None else document.data
    if not isinstance(data, dict):
        raise error(
            document.path, [Issue(0, f"expected a mapping of keys, got {type(data).__name__}", key="(top level)")]
        )
    try:
        value = model.model_validate(data)
    except ValidationError as exc:
        show_input = not model.model_config.get("hide_input_in_errors", False)
        raise error(
            document.path, validation_issues(exc, document, show_input=show_input, dotted_indices=dotted_indices)
        ) from None
    cross_check = getattr(value, "cross_check", None)
    problems = cross_check() if callable(cross_check) else []
    if problems:
        raise error(document.path, [Issue(document.line_of(where), problem, key=where) for where, problem in problems])
    return value


def load_model(path: Path | str, model: type[M], *, error: type[TableError] = TableError) -> M:
    """Read `path` and validate it with `model` (see `read_yaml` and `validate`)."""
    return validate(read_yaml(path, error=error), model, error=error)
