"""Who may open the companion's websocket: the access file.

The access file (`web_access.yaml` in the user's config directory, mode 0600) lists the
clients of the web door. Each has a secret token, the user id that token speaks as, and a
role:

    clients:
      - token: 3q2…            # 32 random bytes, url-safe base64; the only credential
        user_id: user          # bound here, on the server: a browser cannot choose it
        role: face             # face (default) or admin
        label: kitchen tablet  # free text for the owner's benefit
      - token: Zt9…
        user_id: ""            # no identity: a guest, who gets no private memory
    origins: []                # extra page origins allowed to open the websocket

The file is created at the first start with one face client bound to the one-person
default user. It must not be readable by other users (like ~/.ssh): a looser mode is
refused with the command that fixes it. Tokens are compared in constant time.
"""

from __future__ import annotations

import hmac
import os
import re
import secrets
import stat
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..common.errors import Issue, TableError
from ..common.paths import user_config_dir
from ..common.yaml_loader import read_yaml, validate

ACCESS_FILE_NAME = "web_access.yaml"
TOKEN_BYTES = 32
MIN_TOKEN_CHARS = 24
Role = Literal["face", "admin"]

# A user id is a memory owner: short, printable, no spaces or path characters.
_USER_ID = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")
# An origin as browsers send it: scheme://host[:port], no path.
_ORIGIN = re.compile(r"^https?://(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$")


class AccessError(TableError):
    """The access file is unusable; the message names the file and the entry."""


class Client(BaseModel):
    # hide_input_in_errors: a rejected value may be a token, which no error message shows.
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)

    token: str = Field(min_length=MIN_TOKEN_CHARS, repr=False)
    user_id: str = ""
    role: Role = "face"
    label: str = ""

    @field_validator("token")
    @classmethod
    def _token_chars(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9_-]+", value):
            raise ValueError("a token holds only letters, digits, '-' and '_' (it travels in a URL)")
        return value

    @field_validator("user_id")
    @classmethod
    def _user_id(cls, value: str) -> str:
        value = value.strip()
        if value and not _USER_ID.match(value):
            raise ValueError("a user id is 1-64 characters of letters, digits, '_', '.', '@' or '-' ('' = guest)")
        return value

    @property
    def is_guest(self) -> bool:
        return not self.user_id

    def describe(self) -> str:
        who = f"user {self.user_id!r}" if self.user_id else "a guest"
        return f"{self.role} client for {who}" + (f" ({self.label})" if self.label else "")


class AccessFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)

    clients: tuple[Client, ...] = ()
    origins: tuple[str, ...] = ()

    @field_validator("origins")
    @classmethod
    def _origins(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        for origin in values:
            if not _ORIGIN.match(origin):
                raise ValueError(f"{origin!r} is not an origin (scheme://host[:port], no path)")
        return tuple(o.lower() for o in values)


class Access:
    """The loaded access file: token lookup and the extra origins."""

    def __init__(self, path: Path, data: AccessFile) -> None:
        self.path = path
        self.data = data
        tokens = [c.token for c in data.clients]
        if len(set(tokens)) != len(tokens):
            raise AccessError(path, [Issue(0, "the same token is listed twice; every client needs its own")])

    @property
    def clients(self) -> tuple[Client, ...]:
        return self.data.clients

    @property
    def origins(self) -> tuple[str, ...]:
        return self.data.origins

    def lookup(self, token: str | None) -> Client | None:
        """The client a presented token belongs to, or None. Every entry is compared (in
        constant time), so the answer's timing does not tell how close a guess was."""
        found = None
        presented = (token or "").encode()
        for client in self.data.clients:
            if hmac.compare_digest(client.token.encode(), presented):
                found = client
        return found if token else None

    def has_admin(self) -> bool:
        return any(c.role == "admin" for c in self.data.clients)


def default_path() -> Path:
    return user_config_dir() / ACCESS_FILE_NAME


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def load(path: Path) -> Access:
    """Read and check the access file; AccessError names the file and what is wrong."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise AccessError(path, [Issue(0, "does not exist")]) from None
    if not stat.S_ISREG(mode):
        raise AccessError(path, [Issue(0, "is not a regular file")])
    if mode & 0o077:
        raise AccessError(
            path,
            [
                Issue(
                    0,
                    f"is readable by other users (mode {stat.S_IMODE(mode):o}): its tokens "
                    f"are secrets; run `chmod 600 {path}`",
                )
            ],
        )
    # Entries are named `clients.0.token` (list positions dotted), as the web door has always
    # named them.
    data = validate(read_yaml(path, error=AccessError), AccessFile, error=AccessError, dotted_indices=True)
    return Access(path, data)


def _write_new(path: Path, data: AccessFile) -> None:
    """Create the file 0600 from the start (never world-readable, not even for a moment)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    body = (
        "# Who may open the fay_ros websocket (fay-ros web). Keep this file private (mode 0600).\n"
        "# Each client: token (secret), user_id (the memory owner it speaks as; '' = guest),\n"
        "# role (face or admin), label. origins: extra page origins allowed to connect.\n"
        + yaml.safe_dump(data.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(body)


def load_or_create(path: Path, user_id: str) -> tuple[Access, Client | None]:
    """The access file at `path`; created with one face client for `user_id` when missing.
    Returns the access and, only when it was just created, the new client (whose link the
    caller prints once)."""
    path = Path(path)
    if path.exists():
        return load(path), None
    client = Client(token=new_token(), user_id=user_id, role="face", label="created at first start")
    try:
        _write_new(path, AccessFile(clients=(client,)))
    except FileExistsError:  # another process created it first: use theirs
        return load(path), None
    except OSError as exc:
        raise AccessError(path, [Issue(0, f"cannot create ({exc.strerror or exc})")]) from None
    return load(path), client


def add_client(path: Path, user_id: str, role: Role = "face", label: str = "") -> Client:
    """Append a client with a fresh token (the file is rewritten in place, keeping mode 0600)."""
    access = load(path) if Path(path).exists() else None
    client = Client(token=new_token(), user_id=user_id, role=role, label=label)
    if access is None:
        _write_new(Path(path), AccessFile(clients=(client,)))
        return client
    data = AccessFile(clients=access.clients + (client,), origins=access.origins)
    temporary = Path(path).with_name(Path(path).name + ".new")
    temporary.unlink(missing_ok=True)
    _write_new(temporary, data)
    os.replace(temporary, path)
    return client
