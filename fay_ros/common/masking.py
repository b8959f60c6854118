"""Secrets shown masked: what an admin API or a health report may say of a configuration.

A configuration a person reads back (the admin page's config view, `GET /health`) names its
secrets but never shows them: an API key, a token or a password is `****` plus at most its
last four characters (enough to tell two keys apart, too little to use one), and a short
secret is `****` alone. Seed 003: "/api/config GET (密钥掩码)".

Which values are secrets:
- a value under a key that names one (`api_key`, `token`, `secret`, `password`,
  `authorization`, `cookie`, `credentials`, ...);
- the credentials inside a URL (`user:password@`, query values: common.urls.url_secrets);
- a value that announces itself ("Bearer ...", "sk-...").
A key that ends in `_env`, or any key inside an `env_from` / `headers_from_env` mapping, holds
the NAME of an environment variable, not a secret: it is shown, and `environment_report`
says whether that variable is set (masked).

Pure Python, no ROS.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from .urls import url_secrets

MASK = "****"
SHOWN_TAIL = 4
MIN_CHARS_FOR_TAIL = 12  # a shorter secret shows nothing of itself: 4 of 8 characters is half of it

_SECRET_NAME = re.compile(
    r"(?:^|[_\-.])(?:api[_\-]?key|apikey|key|token|secret|password|passwd|pwd|pass|auth|authorization|"
    r"credentials?|cookie|session[_\-]?key|private[_\-]?key|access[_\-]?key)(?:$|[_\-.])",
    re.I,
)
_SELF_ANNOUNCED = re.compile(
    r"^(?:bearer|basic|token)\s+\S+|^(?:sk|pk|rk|ghp|gho|xox[abp])[-_][A-Za-z0-9_\-]{8,}", re.I
)
_ENV_NAME_MAPPINGS = {"env_from", "headers_from_env"}


def mask_secret(value: str) -> str:
    """`****` and at most the last 4 characters (none for a short secret)."""
    value = str(value)
    return MASK + value[-SHOWN_TAIL:] if len(value) >= MIN_CHARS_FOR_TAIL else MASK


def is_secret_name(name: str) -> bool:
    """A configuration key whose value is a secret (not one that names an env variable)."""
    return bool(_SECRET_NAME.search(name)) and not is_env_name_key(name)


def is_env_name_key(name: str) -> bool:
    return name.lower().endswith("_env") or name.lower() in _ENV_NAME_MAPPINGS


def mask_text(text: str) -> str:
    """A free string with the secrets it carries masked (URL credentials, "Bearer ...")."""
    if _SELF_ANNOUNCED.match(text.strip()):
        return mask_secret(text.strip())
    if "://" in text:
        for secret in url_secrets(text):
            text = text.replace(secret, mask_secret(secret))
    return text


def mask_config(data: Any, key: str = "", *, names_env: bool = False) -> Any:
    """A copy of parsed configuration `data` (mappings, lists, scalars) with every secret
    masked; `key`: the key `data` is the value of."""
    if isinstance(data, Mapping):
        inner_names_env = names_env or key.lower() in _ENV_NAME_MAPPINGS
        return {k: mask_config(v, str(k), names_env=inner_names_env) for k, v in data.items()}
    if isinstance(data, list):
        return [mask_config(v, key, names_env=names_env) for v in data]
    if isinstance(data, str):
        if names_env or is_env_name_key(key):
            return data  # the NAME of a variable
        if data and is_secret_name(key):
            return mask_secret(data)
        return mask_text(data)
    return data


def env_names(data: Any, key: str = "", *, names_env: bool = False) -> list[str]:
    """The environment variable names `data` refers to (`*_env` values, `env_from` and
    `headers_from_env` values), in order, once each."""
    found: list[str] = []
    if isinstance(data, Mapping):
        inner = names_env or key.lower() in _ENV_NAME_MAPPINGS
        for k, v in data.items():
            found += env_names(v, str(k), names_env=inner)
    elif isinstance(data, list):
        for v in data:
            found += env_names(v, key, names_env=names_env)
    elif isinstance(data, str) and data and (names_env or is_env_name_key(key)):
        found.append(data)
    return list(dict.fromkeys(found))


def environment_report(names: list[str], environ: Mapping[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """name -> {"set": bool, "value": the masked value or None}."""
    env = os.environ if environ is None else environ
    return {name: {"set": name in env, "value": mask_secret(env[name]) if env.get(name) else None} for name in names}
