"""A small client for any OpenAI-compatible chat endpoint (reflection, portrait).

The API key is read from an environment variable whose *name* is configured; the key itself
never appears in logs, errors or topics. Every failure becomes `LlmUnavailable` with a reason
that names the endpoint and the error class only, so callers can degrade (no reflection)
with a clear log line.
"""
from __future__ import annotations

import json
import os
import re
import urllib.parse
from dataclasses import dataclass


class LlmUnavailable(RuntimeError):
    """No usable answer from the LLM (not configured, unreachable, error status, bad JSON)."""


@dataclass(frozen=True)
class LlmSettings:
    base_url: str = ""
    model: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 30.0

    @property
    def configured(self) -> bool:
        return bool(self.base_url.strip())


def safe_url(url: str) -> str:
    """The endpoint without user:password@ or query string, fit for logs and error messages."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


class LlmClient:
    def __init__(self, settings: LlmSettings) -> None:
        self.settings = settings
        self._client = None
        self.where = safe_url(settings.base_url)

    @property
    def configured(self) -> bool:
        return self.settings.configured

    def _get_client(self):
        if self._client is None:
            import openai

            # Local OpenAI-compatible servers accept any key; the client insists on one.
            key = os.environ.get(self.settings.api_key_env, "") or "not-needed"
            self._client = openai.OpenAI(base_url=self.settings.base_url, api_key=key,
                                         timeout=self.settings.timeout, max_retries=0)
        return self._client

    def complete(self, system: str, user: str, max_tokens: int = 800) -> str:
        if not self.configured:
            raise LlmUnavailable("no LLM endpoint configured (parameter llm_base_url is empty)")
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - openai is a pinned dependency
            raise LlmUnavailable(f"the openai package is not installed ({exc})") from None
        try:
            response = self._get_client().chat.completions.create(
                model=self.settings.model or "default",
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                temperature=0.2, max_tokens=max_tokens, stream=False)
        except openai.APIStatusError as exc:
            raise LlmUnavailable(f"LLM at {self.where} answered HTTP {exc.status_code}") from None
        except openai.OpenAIError as exc:
            raise LlmUnavailable(f"LLM at {self.where} unreachable ({type(exc).__name__})") from None
        try:
            text = response.choices[0].message.content or ""
        except (AttributeError, IndexError, TypeError):
            raise LlmUnavailable(f"LLM at {self.where} sent no message") from None
        if not text.strip():
            raise LlmUnavailable(f"LLM at {self.where} sent an empty message")
        return text

    def complete_json(self, system: str, user: str, max_tokens: int = 800) -> dict:
        return parse_json_object(self.complete(system, user, max_tokens), self.where)


_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


def parse_json_object(text: str, where: str = "LLM") -> dict:
    """The first JSON object in a model answer (tolerates code fences and prose around it)."""
    cleaned = _FENCE.sub("", text.strip())
    start = cleaned.find("{")
    while start != -1:
        try:
            value, _end = json.JSONDecoder().raw_decode(cleaned[start:])
        except json.JSONDecodeError:
            start = cleaned.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = cleaned.find("{", start + 1)
    raise LlmUnavailable(f"answer from {where} holds no JSON object")
