"""Where pulled models live, whether a model is there, and which models the user chose.

- A pulled model is the directory `<models dir>/<name>/` (a chat model: its one GGUF file
  inside; a speech model: the CTranslate2 Whisper files), complete once `fay-ros models pull`
  wrote `.fay-model.json` in it after every file's hash was checked. The models dir is
  `$FAY_MODELS_DIR` when set, else `<prefix>/share/fay_ros/models` (the venv): the places
  `fay_ros.hearing.models.find_model_dir` searches, so `asr model:=whisper-small` finds a
  pulled one by name too. Lookup searches all of those places (and `<repo>/models`).
- Package-shipped models (the embedded defaults) are installed by `make setup`, never pulled.
- The user's choice (`fay-ros models use`) is `$XDG_CONFIG_HOME/fay_ros/models.yaml`,
  `{chat: NAME, asr: NAME}`; `chosen_models()` turns it into the paths the bring-up passes to
  the llm server and the asr node. Nothing here downloads anything.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict

from ..common.errors import ConfigError, TableError
from ..common.paths import user_config_dir
from ..common.yaml_loader import load_model
from ..hearing.models import DEFAULT_WHISPER_NAME, search_dirs
from ..llm.embedded import LocalLlmError, default_model_path
from .catalogue import ASR, CHAT, Catalogue, ModelEntry, load_catalogue

MARKER = ".fay-model.json"
CHOICE_FILE = "models.yaml"


class ModelMissing(ConfigError, FileNotFoundError):
    """A model that is needed is not on this machine; the message names the pull command."""


def models_dir() -> Path:
    """Where `pull` puts models: $FAY_MODELS_DIR, else <prefix>/share/fay_ros/models."""
    env = os.environ.get("FAY_MODELS_DIR")
    return Path(env).expanduser() if env else Path(sys.prefix) / "share" / "fay_ros" / "models"


def pull_dir(name: str) -> Path:
    return models_dir() / name


def read_marker(directory: Path) -> dict | None:
    try:
        data = json.loads((directory / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_marker(directory: Path, data: dict) -> None:
    tmp = directory / (MARKER + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, directory / MARKER)


def pulled_dir(name: str, entry: ModelEntry) -> Path | None:
    """The complete pulled copy of a model (marker written, every file there), if any."""
    for base in [models_dir(), *search_dirs()]:
        d = base / name
        marker = read_marker(d)
        if marker and marker.get("name") == name and all((d / f.name).is_file() for f in entry.files):
            return d
    return None


def shipped_location(entry: ModelEntry) -> Path | None:
    """Where a package-shipped model is (None: its package is not installed)."""
    if entry.kind == CHAT:
        try:
            return default_model_path()
        except LocalLlmError:
            return None
    if importlib.util.find_spec((entry.shipped_by or "").replace("-", "_")) is None:
        return None
    return Path(sys.prefix) / "share" / "fay_ros" / "models" / DEFAULT_WHISPER_NAME


def location(name: str, entry: ModelEntry) -> Path | None:
    """Where the model is on this machine: a chat model's GGUF file, a speech model's directory."""
    if entry.shipped:
        return shipped_location(entry)
    d = pulled_dir(name, entry)
    if d is None:
        return None
    return d / entry.model_file if entry.kind == CHAT else d


def missing_message(name: str, entry: ModelEntry) -> str:
    if entry.shipped:
        return f"model {name!r} is shipped by the package {entry.shipped_by}, which is not installed: run `make setup`"
    return f"model {name!r} is not on this machine: run `fay-ros models pull {name}`"


# ---------------------------------------------------------------------------- the user's choice


class ModelChoice(BaseModel):
    """$XDG_CONFIG_HOME/fay_ros/models.yaml, written by `fay-ros models use`."""

    model_config = ConfigDict(extra="forbid")

    chat: str | None = None
    asr: str | None = None


def choice_path() -> Path:
    return user_config_dir() / CHOICE_FILE


def read_choice() -> ModelChoice:
    path = choice_path()
    if not path.exists():
        return ModelChoice()
    return load_model(path, ModelChoice, error=TableError)


def write_choice(choice: ModelChoice) -> Path:
    path = choice_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {k: v for k, v in choice.model_dump().items() if v is not None}
    tmp = path.with_suffix(".yaml.tmp")
    tmp.write_text(
        "# written by `fay-ros models use NAME`; read by `make run` / companion.launch.py\n"
        + yaml.safe_dump(data, sort_keys=True),
        encoding="utf-8",
    )
    os.replace(tmp, path)
    return path


@dataclass(frozen=True)
class Chosen:
    """The user's models as the bring-up needs them; None = the embedded default."""

    chat: str | None = None
    chat_file: Path | None = None
    asr: str | None = None
    asr_dir: Path | None = None


def chosen_models(catalogue: Catalogue | None = None) -> Chosen:
    """The models chosen with `fay-ros models use`, resolved to files on this machine.

    No choice file, or a choice of a shipped default: None (the defaults). A chosen model that
    is not on this machine is a ModelMissing naming `fay-ros models pull NAME`."""
    choice = read_choice()
    if choice.chat is None and choice.asr is None:
        return Chosen()
    catalogue = catalogue or load_catalogue()
    found: dict[str, tuple[str | None, Path | None]] = {}
    for kind, name in ((CHAT, choice.chat), (ASR, choice.asr)):
        if name is None:
            found[kind] = (None, None)
            continue
        entry = catalogue.models.get(name)
        if entry is None or entry.kind != kind:
            raise ModelMissing(
                f"{choice_path()}: {kind}: {name!r} is not a {kind} model of the catalogue; "
                f"choose one with `fay-ros models use NAME` (`fay-ros models list`)"
            )
        if entry.shipped:
            found[kind] = (None, None)
            continue
        where = location(name, entry)
        if where is None:
            raise ModelMissing(
                f"{choice_path()} chooses the {kind} model {name!r}, which is not on this machine: "
                f"run `fay-ros models pull {name}` (or `fay-ros models use {catalogue.default(kind)}`)"
            )
        found[kind] = (name, where)
    return Chosen(found[CHAT][0], found[CHAT][1], found[ASR][0], found[ASR][1])
