"""The files the admin page edits: read, validate with the project's own loaders, write.

Each editable file is checked exactly as the component that uses it reads it (the action
rules and the sentiment lexicon as `fay-ros action --check` does, the persona, qa.csv and
the schedule with their own loaders), so what the page accepts is what the running node
will accept. A text with any problem is refused as a whole, with every problem as line and
message; the file on disk is then untouched, so the running node keeps its table. A good
text replaces the file atomically (a temporary file in the same folder, then rename), which
the nodes' hot reload (fay_ros.common.reloading: the file's inode/mtime/size changed) picks
up.

Pure Python, no ROS and no HTTP: fay_ros.web.admin_http serves it.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..action import LEXICON_FILE, RULES_FILE, default_table_path, load_lexicon, load_rules
from ..common.errors import FayError, TableError, display_path
from ..common.paths import config_file
from ..dialogue.persona import Persona
from ..dialogue.qa import QaTable
from ..dialogue.style import StyleTable
from ..schedule.config import load_schedule

MAX_FILE_BYTES = 1024 * 1024  # a table a person edits, not a data dump


class EditError(FayError):
    """A save that was not attempted (unknown file, too large, changed on disk meanwhile)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status  # the HTTP status that says it


def _check_rules(path: Path) -> list[str]:
    return list(load_rules(path).warnings)


def _check_lexicon(path: Path) -> list[str]:
    load_lexicon(path)
    return []


def _check_persona(path: Path) -> list[str]:
    Persona.load(path)
    return []


def _check_voice_examples(path: Path) -> list[str]:
    StyleTable.load(path)
    return []


def _check_qa(path: Path) -> list[str]:
    QaTable.load(path)
    return []


def _check_schedule(path: Path) -> list[str]:
    load_schedule(path)
    return []


@dataclass(frozen=True)
class EditableKind:
    name: str  # the id the page uses
    title: str  # what the page shows
    default: str  # file name in config/
    check: Callable[[Path], list[str]]  # raises TableError; returns warnings
    reloaded_by: str  # who picks the change up


KINDS = (
    EditableKind("rules", "Action rules", RULES_FILE, _check_rules, "action_semantics (hot reload)"),
    EditableKind("lexicon", "Sentiment lexicon", LEXICON_FILE, _check_lexicon, "action_semantics (hot reload)"),
    EditableKind("persona", "Persona", "persona.yaml", _check_persona, "dialogue (hot reload)"),
    EditableKind("qa", "Questions and answers (qa.csv)", "qa.csv", _check_qa, "dialogue (hot reload)"),
    EditableKind(
        "voice_examples",
        "Voice examples (scene, relation)",
        "voice_examples.yaml",
        _check_voice_examples,
        "dialogue (hot reload)",
    ),
    EditableKind(
        "schedule", "Proactive schedule", "schedule.yaml", _check_schedule, "dialogue and memory (hot reload)"
    ),
)


@dataclass(frozen=True)
class Problem:
    line: int  # 1-based; 0 = the file as a whole
    message: str  # as the command line shows it: file:line: problem


@dataclass(frozen=True)
class SaveResult:
    ok: bool
    problems: tuple[Problem, ...] = ()
    warnings: tuple[str, ...] = ()
    version: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "problems": [{"line": p.line, "message": p.message} for p in self.problems],
            "warnings": list(self.warnings),
            "version": self.version,
        }


def version_of(data: bytes) -> str:
    """What the page sends back on save, so an edit based on an older copy is refused."""
    return hashlib.sha256(data).hexdigest()[:16]


class EditableFiles:
    """The editable files of this `fay-ros web`: kind name -> path (default: the shipped
    config/ file, which is what the nodes read when their parameter is '')."""

    def __init__(self, paths: dict[str, Path | None] | None = None) -> None:
        given = paths or {}
        self.paths: dict[str, Path] = {}
        for kind in KINDS:
            path = given.get(kind.name)
            if path is None:
                path = (
                    default_table_path(kind.default) if kind.name in ("rules", "lexicon") else config_file(kind.default)
                )
            self.paths[kind.name] = Path(path).expanduser().resolve()
        self.kinds = {kind.name: kind for kind in KINDS}

    def _kind(self, name: str) -> EditableKind:
        kind = self.kinds.get(name)
        if kind is None:
            raise EditError(f"no editable file {name!r} (one of {', '.join(self.kinds)})", 404)
        return kind

    def listing(self) -> list[dict[str, str]]:
        return [
            {"name": k.name, "title": k.title, "path": display_path(self.paths[k.name]), "reloaded_by": k.reloaded_by}
            for k in KINDS
        ]

    def read(self, name: str) -> dict[str, Any]:
        kind = self._kind(name)
        path = self.paths[name]
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            data = b""  # a schedule may not exist yet: saving creates it
        except OSError as exc:
            raise EditError(f"cannot read {display_path(path)}: {exc.strerror or exc}", 500) from None
        return {
            "name": name,
            "title": kind.title,
            "path": display_path(path),
            "reloaded_by": kind.reloaded_by,
            "text": data.decode("utf-8-sig", errors="replace"),
            "version": version_of(data),
        }

    def check(self, name: str, text: str) -> SaveResult:
        """Validate `text` as file `name` without writing it."""
        return self._validate(name, text, write=False, base_version=None)

    def save(self, name: str, text: str, base_version: str | None) -> SaveResult:
        """Validate `text`; when good, replace the file with it. `base_version`: the version
        the edit started from (None: do not check); a file changed meanwhile is an EditError
        409, so one person's save never silently drops another's."""
        return self._validate(name, text, write=True, base_version=base_version)

    def _validate(self, name: str, text: str, *, write: bool, base_version: str | None) -> SaveResult:
        kind = self._kind(name)
        path = self.paths[name]
        data = text.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise EditError(f"{len(data)} bytes exceeds the {MAX_FILE_BYTES} an editable file may have", 413)
        if base_version is not None:
            try:
                current = version_of(path.read_bytes())
            except FileNotFoundError:
                current = version_of(b"")
            if current != base_version:
                raise EditError(
                    f"{display_path(path)} changed on disk since it was opened: reload it, then apply the edit again",
                    409,
                )
        # The loaders read files: check a sibling temporary copy (same folder, so relative
        # references and the final rename behave as for the real file).
        fd, temporary_name = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix or ".tmp", dir=path.parent)
        temporary = Path(temporary_name)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            try:
                warnings = kind.check(temporary)
            except TableError as exc:
                shown = display_path(path)
                return SaveResult(False, tuple(Problem(issue.line, issue.format(shown)) for issue in exc.issues))
            warnings = [
                w.replace(str(temporary), display_path(path)).replace(temporary.name, path.name) for w in warnings
            ]
            if not write:
                return SaveResult(True, (), tuple(warnings), version_of(data))
            if path.exists():
                os.chmod(temporary, path.stat().st_mode & 0o777)
            os.replace(temporary, path)
            return SaveResult(True, (), tuple(warnings), version_of(data))
        finally:
            temporary.unlink(missing_ok=True)
