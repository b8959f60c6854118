"""The model catalogue, config/models.yaml: a small curated list of chat (GGUF) and speech
(CTranslate2 Whisper) models, read strictly (an unknown or duplicate key is an error naming
its line; see fay_ros/common/yaml_loader.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..common.errors import ConfigError, TableError
from ..common.paths import config_file
from ..common.yaml_loader import load_model

CHAT, ASR = "chat", "asr"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
WHISPER_REQUIRED = ("model.bin", "config.json", "tokenizer.json")


class CatalogueError(TableError):
    """config/models.yaml (or the file given with --catalogue) is unusable."""


class UnknownModel(ConfigError, KeyError):
    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class ModelFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="File name inside the repository.")
    sha256: str | None = Field(None, description="Published sha256 (null: the hub's X-Linked-Etag).")
    size: int | None = Field(None, ge=0, description="Size in bytes (null: asked from the hub).")


class ModelEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["chat", "asr"]
    description: str = ""
    shipped_by: str | None = Field(None, description="Package that installs it (make setup).")
    repo: str | None = Field(None, description="Hugging Face repository id.")
    revision: str = Field("main", min_length=1)
    files: list[ModelFile] = Field(min_length=1)
    approx_mb: int = Field(ge=0)
    ram_mb: int = Field(ge=0)
    licence: str = Field(min_length=1)
    licence_url: str = ""
    languages: list[str] = Field(min_length=1)
    tokens_per_s: float | None = None
    note: str = ""

    @property
    def shipped(self) -> bool:
        return self.shipped_by is not None

    @property
    def model_file(self) -> str:
        """A chat model's GGUF file name."""
        return self.files[0].name

    def known_size(self) -> int | None:
        """Sum of the catalogue's file sizes, None when any is not given."""
        sizes = [f.size for f in self.files]
        return None if any(s is None for s in sizes) else sum(s or 0 for s in sizes)


class Catalogue(BaseModel):
    model_config = ConfigDict(extra="forbid")

    models: dict[str, ModelEntry]

    def cross_check(self) -> list[tuple[str, str]]:
        problems = []
        for name, entry in self.models.items():
            at = f"models.{name}"
            if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", name):
                problems.append((at, "a model name is lower case letters, digits, '.', '-' or '_'"))
            if entry.repo is None and not entry.shipped:
                problems.append((f"{at}.repo", "a model that no package ships needs a repo to pull it from"))
            names = [f.name for f in entry.files]
            if len(set(names)) != len(names):
                problems.append((f"{at}.files", "a file is listed twice"))
            if entry.kind == CHAT and (len(names) != 1 or not names[0].endswith(".gguf")):
                problems.append((f"{at}.files", "a chat model is exactly one .gguf file"))
            if entry.kind == ASR:
                missing = [f for f in WHISPER_REQUIRED if f not in names]
                if missing:
                    problems.append((f"{at}.files", f"a whisper model needs {', '.join(missing)}"))
            for i, f in enumerate(entry.files):
                if f.sha256 is not None and not _SHA256.fullmatch(f.sha256):
                    problems.append((f"{at}.files[{i}].sha256", "not a sha256 (64 lower-case hex digits)"))
        return problems

    def get(self, name: str) -> ModelEntry:
        try:
            return self.models[name]
        except KeyError:
            raise UnknownModel(
                f"no model {name!r} in the catalogue; known: {', '.join(self.models)} (`fay-ros models list`)"
            ) from None

    def default(self, kind: str) -> str:
        """The package-shipped model of this kind (the embedded default)."""
        return next(name for name, e in self.models.items() if e.kind == kind and e.shipped)


def default_catalogue_path() -> Path:
    return config_file("models.yaml")


def load_catalogue(path: Path | str | None = None) -> Catalogue:
    return load_model(Path(path) if path else default_catalogue_path(), Catalogue, error=CatalogueError)
