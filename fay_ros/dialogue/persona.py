"""The persona file (`config/persona.yaml`): who Fay is, and her stock lines.

Fields:
- `name`, `system_prompt`: the persona / system prompt put in front of every LLM call.
- `fillers`: per language, what she says while the tool loop runs ("let me check").
- `apologies`: per language, the spoken fallback when the LLM fails.
- `prestart`: tools run before the LLM on every question, results fed to the prompt; the
  arguments may contain `{{question}}`, replaced by the user's words. `include_history`
  keeps the result in the conversation history.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator


class PersonaError(ValueError):
    """A persona file that cannot be used; the message names the file and the field."""


class PrestartSpec(BaseModel):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    include_history: bool = False

    def render_args(self, question: str) -> dict[str, Any]:
        return _render(self.args, question)


class Persona(BaseModel):
    name: str = "Fay"
    system_prompt: str = "You are Fay, a warm and friendly companion robot."
    fillers: dict[str, list[str]] = Field(default_factory=lambda: {
        "en": ["Let me check that for you, one moment."], "zh": ["我来帮你查一下，稍等。"]})
    apologies: dict[str, list[str]] = Field(default_factory=lambda: {
        "en": ["Sorry, I can't answer right now. Please ask me again in a moment."],
        "zh": ["抱歉，我现在回答不了，请稍后再问我一次。"]})
    prestart: list[PrestartSpec] = Field(default_factory=list)

    @field_validator("fillers", "apologies")
    @classmethod
    def _lines_present(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        if not value or not all(lines and all(line.strip() for line in lines) for lines in value.values()):
            raise ValueError("needs at least one non-empty line per language")
        return value

    def line(self, kind: str, language: str, index: int = 0) -> str:
        table = self.fillers if kind == "filler" else self.apologies
        lines = table.get(language) or table.get(language.split("-")[0]) or table.get("en") or next(iter(table.values()))
        return lines[index % len(lines)]

    @classmethod
    def load(cls, path: str | Path) -> "Persona":
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except FileNotFoundError:
            raise PersonaError(f"{path}: persona file not found") from None
        except yaml.YAMLError as exc:
            raise PersonaError(f"{path}: invalid YAML: {exc}") from None
        if not isinstance(data, dict):
            raise PersonaError(f"{path}: expected a mapping at the top level")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
            raise PersonaError(f"{path}: {problems}") from None


def _render(value: Any, question: str) -> Any:
    if isinstance(value, str):
        return value.replace("{{question}}", question)
    if isinstance(value, dict):
        return {k: _render(v, question) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, question) for v in value]
    return value
