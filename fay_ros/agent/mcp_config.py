"""The MCP servers file: which MCP servers Fay connects to and which of their tools she may use.

A YAML file (read with the strict loader, validated here):

    servers:
      - name: files                       # [A-Za-z0-9_-]; tools are named mcp_<name>_<tool>
        command: npx                      # stdio: the server is this child process
        args: ["-y", "@modelcontextprotocol/server-filesystem", "/home/fay/shared"]
        env: {LOG_LEVEL: warn}            # plain (non-secret) variables for the child
        env_from: {GITHUB_TOKEN: FAY_GITHUB_TOKEN}   # child variable <- NAME of one of ours
        cwd: /home/fay
        tools: [read_text_file, list_directory]      # the allow-list: only these become tools
        start_timeout: 20                 # seconds to start, initialise and list the tools
        call_timeout: 10                  # seconds one tool call may take
      - name: weather
        url: https://mcp.example.com/mcp  # streamable HTTP (transport: sse for the old SSE one)
        headers_from_env: {Authorization: FAY_WEATHER_AUTH}  # header <- NAME of a variable
        tools: [forecast]
        prefix: ""                        # tool names exactly as the server has them

Secrets never sit in this file: `env_from` and `headers_from_env` name environment variables
whose values are read when the server is connected. A stdio child gets only the SDK's safe
default environment (HOME, PATH, ...) plus `env` and `env_from`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..common.errors import TableError
from ..common.yaml_loader import load_model

NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what OpenAI-compatible servers accept
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class McpConfigError(TableError):
    """The MCP servers file cannot be used."""


class McpServerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="the server's name in logs and in its tools' names")
    command: str = Field("", description="stdio: the executable that is the server")
    args: list[str] = Field(default_factory=list, description="stdio: its arguments")
    env: dict[str, str] = Field(default_factory=dict, description="stdio: plain environment variables (no secrets)")
    env_from: dict[str, str] = Field(
        default_factory=dict, description="stdio: child variable -> NAME of the variable holding its value"
    )
    cwd: str = Field("", description="stdio: working directory ('' = the node's)")
    url: str = Field("", description="HTTP: the server's endpoint URL")
    transport: Literal["stdio", "streamable_http", "sse"] | None = Field(
        None, description="default: stdio with a command, streamable_http with a url"
    )
    headers_from_env: dict[str, str] = Field(
        default_factory=dict, description="HTTP: header -> NAME of the variable holding its value"
    )
    tools: list[str] = Field(min_length=1, description="allow-list: the server's tools that become agent tools")
    prefix: str | None = Field(None, description="tool name prefix (default mcp_<name>_)")
    start_timeout: float = Field(15.0, gt=0.0, description="seconds to start, initialise and list the tools")
    call_timeout: float = Field(10.0, gt=0.0, description="seconds one tool call may take")
    restart_backoff: float = Field(
        1.0, ge=0.0, description="seconds before the first restart after a failure (doubling on each further failure)"
    )
    max_backoff: float = Field(30.0, ge=0.0, description="longest wait between restarts")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME.match(value):
            raise ValueError("must be 1-40 characters of A-Z a-z 0-9 _ -")
        return value

    @field_validator("tools")
    @classmethod
    def _tools(cls, value: list[str]) -> list[str]:
        bad = [t for t in value if not TOOL_NAME.match(t)]
        if bad:
            raise ValueError(f"tool names must be 1-64 characters of A-Z a-z 0-9 _ -: {bad}")
        if len(set(value)) != len(value):
            raise ValueError("lists a tool twice")
        return value

    @field_validator("env_from", "headers_from_env")
    @classmethod
    def _names(cls, value: dict[str, str]) -> dict[str, str]:
        bad = [k for k, v in value.items() if not ENV_NAME.match(v)]
        if bad:  # the value may be a pasted secret: name the key only
            raise ValueError(
                f"values are environment variable NAMES (the secret stays in the environment); not a name for {bad}"
            )
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if bool(self.command) == bool(self.url):
            raise ValueError("needs exactly one of `command` (stdio) or `url` (HTTP)")
        kind = self.kind
        if kind == "stdio" and not self.command:
            raise ValueError("transport stdio needs `command`")
        if kind != "stdio":
            if not self.url.startswith(("http://", "https://")):
                raise ValueError("`url` must be an http:// or https:// URL")
            if self.args or self.env or self.env_from or self.cwd:
                raise ValueError("args/env/env_from/cwd are for a stdio server (`command`)")
        elif self.headers_from_env:
            raise ValueError("headers_from_env is for an HTTP server (`url`)")
        if self.max_backoff < self.restart_backoff:
            raise ValueError("max_backoff is shorter than restart_backoff")
        too_long = [n for n in self.tool_names().values() if not TOOL_NAME.match(n)]
        if too_long:
            raise ValueError(
                f"tool names with the prefix are not valid tool names (at most 64 of A-Z a-z 0-9 _ -): {too_long}"
            )
        return self

    @property
    def kind(self) -> str:
        return self.transport or ("stdio" if self.command else "streamable_http")

    def agent_name(self, tool: str) -> str:
        prefix = f"mcp_{self.name}_" if self.prefix is None else self.prefix
        return prefix + tool

    def tool_names(self) -> dict[str, str]:
        """The allow-list: server tool name -> agent tool name."""
        return {t: self.agent_name(t) for t in self.tools}


class McpServersFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    servers: list[McpServerConfig] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique(self) -> McpServersFile:
        names = [s.name for s in self.servers]
        if len(set(names)) != len(names):
            raise ValueError(f"server names must be unique: {names}")
        tools = [n for s in self.servers for n in s.tool_names().values()]
        twice = sorted({n for n in tools if tools.count(n) > 1})
        if twice:
            raise ValueError(f"two servers give the same tool name: {twice}")
        return self

    @classmethod
    def load(cls, path: str | Path) -> McpServersFile:
        return load_model(path, cls, error=McpConfigError)
