"""What the engine's parts share: the engine as they see it (`Wiring`, a Protocol the
`DialogueEngine` satisfies), so each part reads the current persona, model clients and
settings (the node changes them while running) without holding copies or importing the
engine. Pure Python, no ROS.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Protocol

from ..llm.client import ChatClient
from .history import Histories
from .persona import Persona
from .reply import ReplyPiece
from .settings import EngineSettings
from .style import StyleTable
from .tools import MemoryGateway, ToolRegistry
from .trace import TurnTrace


class Wiring(Protocol):
    persona: Persona
    small: ChatClient | None
    big: ChatClient | None
    emit: Callable[[ReplyPiece], None]
    tools: ToolRegistry
    memory: MemoryGateway
    settings: EngineSettings
    histories: Histories
    traces: deque[TurnTrace]
    style: StyleTable | None
