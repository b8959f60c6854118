"""An in-process MemoryGateway backed by a REAL MemoryService on a temporary SQLite file (the
memory node's own logic, no ROS): turns are fed with `hear`, and `search_evidence` answers
the way RosMemoryGateway maps memory/search_evidence (content = the rendered line, node_type
"turn" | "memory", text / date / said / speaker)."""

from __future__ import annotations

import time
from pathlib import Path

from fay_ros.dialogue.tools import Memory, MemoryResult, MemoryUnavailable
from fay_ros.memory.evidence import Evidence
from fay_ros.memory.policy import RememberRequest
from fay_ros.memory.service import build_service

DAY = 86400.0


def as_memory(e: Evidence) -> Memory:
    """An evidence item as the ROS gateway returns it (RosMemoryGateway.search_evidence)."""
    return Memory.of_evidence(e, e.render())


class ServiceMemory:
    """A MemoryGateway over a real MemoryService, recording every call."""

    def __init__(self, path: Path, clock=time.time) -> None:
        self.service = build_service(path / "memory.db", embedder="hashed", clock=clock)
        self.calls: list[tuple[str, str]] = []
        self._turn = 0

    def hear(self, owner: str, when: float, text: str, speaker: str = "user") -> None:
        """A turn heard at `when` (seconds since the epoch)."""
        self._turn += 1
        out = self.service.hear_turn(owner, f"t{self._turn}", when, speaker, text)
        assert out.success, out.message

    async def search_evidence(self, owner, query, n=5):
        self.calls.append(("search_evidence", owner))
        return [as_memory(e) for e in self.service.search_evidence(owner, query, n)]

    async def recall(self, owner, query, n=5, *, stateless=False):
        self.calls.append(("recall", owner))
        out = self.service.recall(owner, query, n=n, stateless=stateless)
        return (
            [Memory(m.id, m.content, m.status, 0.0, m.node_type, tuple(m.tags), m.key) for m in out.nodes]
            if out.success
            else []
        )

    async def remember(self, owner, content, *, node_type="", user_confirmed=False, tags=(), key="", **_kw):
        self.calls.append(("remember", owner))
        out = self.service.remember(
            RememberRequest(owner, content, node_type, tags=list(tags), key=key, user_confirmed=user_confirmed)
        )
        return MemoryResult(out.success, out.message)

    async def forget(self, owner, query="", memory_id=""):
        self.calls.append(("forget", owner))
        out = self.service.forget(owner, memory_id, query)
        return MemoryResult(out.success, out.message)

    async def active_rules(self, owner):
        self.calls.append(("rules", owner))
        return []

    async def profile(self, owner):
        self.calls.append(("profile", owner))
        _out, profile = self.service.profile(owner)
        return list(profile.facts) if profile is not None else []


class OldServiceMemory(ServiceMemory):
    """A memory node that does not answer memory/search_evidence (an older one)."""

    async def search_evidence(self, owner, query, n=5):
        self.calls.append(("search_evidence", owner))
        raise MemoryUnavailable("service /memory/search_evidence is not running")
