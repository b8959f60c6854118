"""The ROS side of `fay-ros mcp`: a client node calling the memory node's services for the
MCP memory server (fay_ros.agent.mcp_memory, which holds the tools and the MCP server).

The gateway is the dialogue's `RosMemoryGateway` (remember, active rules: the same calls the
dialogue makes) plus the calls the MCP tools need beyond it: a Recall with tag filters
and creation times, the evidence search with its items' dates and sources, and the whole
profile (portrait too). The node spins on its own
executor thread; the MCP server runs on the asyncio loop of the main thread.
"""

from __future__ import annotations

import asyncio

from fay_msgs.srv import GetProfile, Recall, SearchEvidence

from ..agent.mcp_memory import EvidenceRecord, MemoryRecord, Profile
from ..common import topics
from ..common.rostime import from_time_msg
from ..dialogue.tools import ToolError
from .client_node import ClientNode
from .memory_gateway import RosMemoryGateway


class McpRosGateway(RosMemoryGateway):
    """McpMemoryGateway over the memory/* services."""

    async def search(
        self,
        owner: str,
        query: str,
        *,
        n: int,
        tags_all: tuple[str, ...] = (),
        tags_any: tuple[str, ...] = (),
        include_candidates: bool = False,
        time_ordered: bool = False,
    ) -> list[MemoryRecord]:
        request = Recall.Request(
            owner=owner,
            query=query,
            n=n,
            tags_all=list(tags_all),
            tags_any=list(tags_any),
            include_candidates=include_candidates,
            stateless=True,
            time_ordered=time_ordered,
        )
        response = await self._call(self._recall, request)
        if not response.success:
            raise ToolError(f"recall refused: {response.message}")
        return [
            MemoryRecord(
                m.id,
                m.content,
                m.node_type,
                m.status or "confirmed",
                tuple(m.tags),
                m.key,
                round(float(m.importance), 3),
                from_time_msg(m.created),
                round(float(m.score), 4),
            )
            for m in response.nodes
        ]

    async def evidence(self, owner: str, query: str, *, n: int) -> list[EvidenceRecord]:
        response = await self._call(self._evidence, SearchEvidence.Request(owner=owner, query=query, n=n))
        if not response.success:
            raise ToolError(f"evidence search refused: {response.message}")
        return [
            EvidenceRecord(
                e.kind,
                e.id,
                e.text,
                e.rendered,
                e.date,
                e.said,
                tuple(e.sources),
                e.speaker,
                e.status,
                round(float(e.score), 4),
            )
            for e in response.items
        ]

    async def user_profile(self, owner: str) -> Profile:
        response = await self._call(self._profile, GetProfile.Request(owner=owner))
        if not response.success:
            raise ToolError(f"profile refused: {response.message}")
        return Profile(
            response.portrait, tuple(response.facts), int(response.pending_evidence), from_time_msg(response.updated)
        )


class RosSide(ClientNode):
    """The MCP server's client node (`client_node.ClientNode`); `gateway(loop)` for the MCP loop."""

    def __init__(self, ros_args: list[str], namespace: str = topics.DEFAULT_NAMESPACE) -> None:
        super().__init__("mcp_memory", ros_args, namespace)

    def gateway(self, loop: asyncio.AbstractEventLoop, timeout: float) -> McpRosGateway:
        return McpRosGateway(self.node, loop, timeout)
