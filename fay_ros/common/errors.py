"""The project's exceptions: one root, so a caller can tell fay_ros's own refusals from bugs.

    FayError                      every error fay_ros raises on purpose, with a message for people
    ├── ConfigError               configuration that cannot be used (a node parameter, a file, a
    │   │                         model path): a node stops at start-up with exit code 2
    │   └── TableError            a table or configuration file is unusable: its path and every
    │                             Issue found in it (file and line or key path of each)
    └── the errors of each part   LlmError (one subclass per kind), ToolError, Refused, ...

Code that means "the configuration is bad" catches ConfigError (or the specific subclass),
never a bare ValueError: a ValueError from a bug must surface as a traceback, not as a
misleading "invalid configuration" line. Several subclasses also keep the builtin base they
had before this hierarchy (ValueError, RuntimeError, FileNotFoundError), so callers written
against that base still catch them; new code names the project class.

No ROS import here: cores and shells both use these.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


class FayError(Exception):
    """Root of every exception fay_ros raises on purpose; str() is meant for people."""


class ConfigError(FayError):
    """Configuration that cannot be used; the message says which setting or file and why.

    A node that meets one while starting stops with exit code 2 (`fay_ros.common.node_main`),
    and the bring-ups do not restart it: a restart would only repeat the error."""


@dataclass(frozen=True)
class Issue:
    """One problem in a file: where (line and/or key path) and what.

    `line` and `column` are 1-based (0: not known / the file as a whole); `key` is the key
    path in a structured file (`behaviors.nod.keyframes[1].at`), empty for line-oriented
    files such as CSV tables."""

    line: int
    problem: str
    key: str = ""
    column: int = 0

    def format(self, path: Path | str) -> str:
        # A key path reads best first (it is what the person searches for in the file); the
        # line helps an editor jump there. CSV tables have rows, not keys: compiler style.
        if self.key:
            at = f" (line {self.line})" if self.line else ""
            return f"{path}: {self.key}: {self.problem}{at}"
        if self.line and self.column:
            return f"{path}: line {self.line} column {self.column}: {self.problem}"
        if self.line:
            return f"{path}:{self.line}: {self.problem}"
        return f"{path}: {self.problem}"


def display_path(path: Path | str) -> str:
    """A path as errors show it: relative to the working directory when it lies below it
    (`config/servo_map.yaml`), else as given."""
    text = str(path)
    try:
        resolved = Path(path).resolve()
        return str(resolved.relative_to(Path.cwd())) if resolved.is_relative_to(Path.cwd()) else text
    except (OSError, RuntimeError):  # cwd removed, symlink loop: show it as given
        return text


class TableError(ConfigError, ValueError):
    """A table or configuration file cannot be used; str() lists every issue, one per line,
    each starting with the file: `file:line: problem` (CSV rows), `file: key.path: problem
    (line N)` (YAML keys) or `file: line L column C: problem` (YAML syntax).

    A ValueError too, as the table errors it replaces were."""

    def __init__(self, path: Path | str, issues: Iterable[Issue]) -> None:
        self.path = Path(path)
        self.issues = list(issues)
        shown = display_path(path)
        super().__init__("\n".join(issue.format(shown) for issue in self.issues))


def read_table_text(
    path: Path | str, *, error: type[TableError] = TableError, utf8_hint: str = "save the file as UTF-8"
) -> str:
    """A table or configuration file as text (UTF-8, a leading BOM dropped). A missing or
    unreadable file is an `error`; a byte that is not UTF-8 is reported with its line."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise error(path, [Issue(0, "file not found")]) from None
    except OSError as exc:
        raise error(path, [Issue(0, f"cannot read: {exc.strerror or exc}")]) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(path, [Issue(line, f"not UTF-8 (byte 0x{data[exc.start]:02x}); {utf8_hint}")]) from None
