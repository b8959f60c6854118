"""What the knowledge base offers its users: `Passage`s found for a question, and what was
indexed. The store (`fay_ros.knowledge.base.KnowledgeBase`) implements `KnowledgeSearch`; the
dialogue's tool and prestart, the MCP tool, the ROS service and the admin page depend on this
module only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

DEFAULT_KB = "default"


@dataclass(frozen=True)
class Passage:
    """A chunk found for a question, best first in a result list."""

    text: str  # the chunk's text, whole sentences
    source: str  # the file as it was given, or relative to the folder that was added
    locator: str  # where in the file: "page 3", "Opening hours > Weekends", "" for a flat text
    score: float  # fused relevance in [0, 1]; only passages at or above the threshold are returned
    kb: str = DEFAULT_KB  # the knowledge base it belongs to


@dataclass(frozen=True)
class DocumentInfo:
    """One indexed (or refused) file of a knowledge base."""

    kb: str
    source: str
    chunks: int
    indexed_at: float  # epoch seconds of the last (re)index; 0 when it never indexed
    error: str = ""  # why the file is not (or no longer) indexed; "" when it is


class KnowledgeSearch(Protocol):
    """Searching a knowledge base (read-only: a guest may use it)."""

    def search(self, question: str, k: int = 5, kb: str | None = None) -> list[Passage]:
        """The best `k` passages for `question` in `kb` (None: every knowledge base), best
        first; an empty list when nothing reaches the score threshold."""
        ...

    def documents(self, kb: str | None = None) -> list[DocumentInfo]:
        """Every file known to `kb` (None: all), with its chunk count and last error."""
        ...
