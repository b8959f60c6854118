"""The dialogue's memory calls over ROS: the engine's MemoryGateway on the memory node's
memory/* services (`service_call.call_service`: discovery grace, timeout). Used by the dialogue node
and, through `mcp_memory_gateway`, by `fay-ros mcp`."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from fay_msgs.srv import Forget, GetActiveRules, GetProfile, Recall, Remember, SearchEvidence

from ..common import topics
from ..dialogue.tools import Memory, MemoryResult, MemoryUnavailable
from .service_call import DiscoveryGrace, ServiceCallError, call_service


class RosMemoryGateway:
    """The engine's MemoryGateway over the memory/* services (call_async + timeout)."""

    def __init__(self, node: Node, loop: asyncio.AbstractEventLoop, timeout: float) -> None:
        group = ReentrantCallbackGroup()
        self._loop = loop
        self._timeout = timeout
        self._grace = DiscoveryGrace()
        self._logger = node.get_logger()
        self._recall = node.create_client(Recall, topics.SRV_RECALL, callback_group=group)
        self._remember = node.create_client(Remember, topics.SRV_REMEMBER, callback_group=group)
        self._forget = node.create_client(Forget, topics.SRV_FORGET, callback_group=group)
        self._rules = node.create_client(GetActiveRules, topics.SRV_ACTIVE_RULES, callback_group=group)
        self._profile = node.create_client(GetProfile, topics.SRV_PROFILE, callback_group=group)
        self._evidence = node.create_client(SearchEvidence, topics.SRV_SEARCH_EVIDENCE, callback_group=group)

    def _clients(self) -> tuple[Any, ...]:
        return (self._recall, self._remember, self._forget, self._rules, self._profile, self._evidence)

    def undiscovered(self) -> list[str]:
        """The memory services this process cannot call yet (not discovered, or their server
        gone): [] when memory is reachable."""
        return [c.srv_name for c in self._clients() if not c.service_is_ready()]

    def wait_until_discovered(self, timeout: float) -> bool:
        """Block (never in a callback) until every memory service is discovered, or `timeout`
        seconds pass; True when all are. For a process that serves others only once memory is
        reachable (fay-ros mcp), so its first calls do not race DDS discovery."""
        deadline = time.monotonic() + timeout
        while self.undiscovered():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    async def _call(self, client: Any, request: Any, timeout: float | None = None) -> Any:
        # A memory node started with this one may not be discovered yet: in the first
        # seconds, wait for it within the call's own budget instead of failing the first
        # turns. Later an absent memory fails at once (no delay on every turn).
        wait = timeout or self._timeout
        try:
            return await call_service(client, request, discover_until=self._grace.impatient(wait), timeout=wait)
        except ServiceCallError as exc:
            if not exc.absent:
                # a running memory that is slow (or failing) is worth seeing (the turn goes on
                # without it; an absent memory is expected and stays quiet)
                self._logger.warning(
                    f"{exc}: this turn goes on without it (parameter 'memory_timeout')", throttle_duration_sec=5.0
                )
            raise MemoryUnavailable(str(exc)) from None

    @staticmethod
    def _memories(nodes: list[Any]) -> list[Memory]:
        return [
            Memory(n.id, n.content, n.status or "confirmed", float(n.score), n.node_type, tuple(n.tags), n.key)
            for n in nodes
        ]

    async def recall(self, owner: str, query: str, n: int = 5, *, stateless: bool = False) -> list[Memory]:
        response = await self._call(
            self._recall, Recall.Request(owner=owner, query=query, n=n, include_candidates=False, stateless=stateless)
        )
        return self._memories(response.nodes) if response.success else []

    async def search_evidence(self, owner: str, query: str, n: int = 5) -> list[Memory]:
        """The evidence for `query` over the owner's whole history (memory/search_evidence:
        heard turns and memories by hybrid recall), each as one prompt line with its absolute
        date ("[2026-11-02] (said 2026-11-03) User: ..."); node_type "turn" or "memory";
        `text`, `date`, `said` and `speaker` as the item has them. A memory node whose recall is
        there but not this service (an older one) is reported unavailable at once, so the
        dialogue recalls instead without waiting for the discovery grace."""
        if not self._evidence.service_is_ready() and self._recall.service_is_ready():
            raise MemoryUnavailable(f"service {self._evidence.srv_name} is not offered by the memory node")
        response = await self._call(self._evidence, SearchEvidence.Request(owner=owner, query=query, n=n))
        if not response.success:
            return []
        return [Memory.of_evidence(e, e.rendered) for e in response.items]

    async def remember(
        self,
        owner: str,
        content: str,
        *,
        node_type: str = "",
        user_confirmed: bool = False,
        tags: tuple[str, ...] = (),
        key: str = "",
        source_session: str = "",
        source_turn: int = 0,
    ) -> MemoryResult:
        request = Remember.Request(
            owner=owner,
            content=content,
            node_type=node_type,
            tags=list(tags),
            key=key,
            user_confirmed=user_confirmed,
            source_session=source_session,
            source_turn=source_turn,
        )
        response = await self._call(self._remember, request, self._timeout * 4)
        return MemoryResult(response.success, response.message, tuple(self._memories([response.node])))

    async def forget(self, owner: str, query: str = "", memory_id: str = "") -> MemoryResult:
        response = await self._call(
            self._forget, Forget.Request(owner=owner, query=query, id=memory_id), self._timeout * 4
        )
        return MemoryResult(
            response.success, response.message, tuple(self._memories(response.nodes)), response.needs_confirmation
        )

    async def active_rules(self, owner: str) -> list[Memory]:
        response = await self._call(self._rules, GetActiveRules.Request(owner=owner))
        return self._memories(response.rules) if response.success else []

    async def profile(self, owner: str) -> list[str]:
        return (await self.profile_with_core(owner))[0]

    async def profile_with_core(self, owner: str) -> tuple[list[str], str]:
        """The profile facts and the core memory (memory/profile's portrait: the layered
        profile's text for prompts, issue 35) in one call."""
        response = await self._call(self._profile, GetProfile.Request(owner=owner))
        return (list(response.facts), response.portrait) if response.success else ([], "")
