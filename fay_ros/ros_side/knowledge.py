"""The knowledge base over ROS (issue 41): the `knowledge/search` service for robot programs,
served by the dialogue node with its `KnowledgeDesk`, and `RosKnowledge`, a client of it (the
`knowledge_search` tool of `fay-ros mcp`).

Which node serves it: the dialogue node. It already opens the store for the conversation (the
tool, the prestart passages, the extractive answers) with the bases, k and threshold of the
bring-up's config, so a robot program, an MCP client and the conversation search the same
documents the same way, with one store open. The memory node keeps each user's private
memories; the knowledge base is shared by everyone and has no owner, so it does not belong
there.

One conversion each way (`passage_msg`, `passage_from_msg`), so a client reads what the node
wrote field by field.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from fay_msgs.msg import KnowledgePassage
from fay_msgs.srv import KnowledgeSearch as KnowledgeSearchSrv

from ..common import topics
from ..common.errors import FayError
from ..common.params import ConfigError
from ..dialogue.knowledge_talk import KnowledgeDesk, KnowledgeTalkSettings
from ..knowledge.api import Passage
from ..memory.backend import is_postgres, sqlite_path
from .service_call import DiscoveryGrace, ServiceCallError, call_service

TIMEOUT = 10.0  # seconds a client waits for an answer (a cold embedder loads on the first search)


class KnowledgeUnavailable(FayError):
    """The knowledge/search service is not running, did not answer, or failed."""


def passage_msg(p: Passage) -> KnowledgePassage:
    return KnowledgePassage(text=p.text, source=p.source, locator=p.locator, score=float(p.score), kb=p.kb)


def passage_from_msg(m: KnowledgePassage) -> Passage:
    return Passage(text=m.text, source=m.source, locator=m.locator, score=float(m.score), kb=m.kb)


Search = Callable[[str, int, str], Awaitable[list[Passage]]]


def serve_knowledge(node: Node, run: Callable[[Any], Awaitable[Any]], search: Search | None, why_not: str) -> Any:
    """The knowledge/search service on `node`. `run(coroutine)` awaits a coroutine where the
    search lives (the dialogue's engine loop); `search` None: every call is answered
    unsuccessfully with `why_not` (no documents configured), so a robot program learns why."""

    async def handle(request: Any, response: Any) -> Any:
        if search is None:
            response.success, response.message = False, why_not
            return response
        question = request.question.strip()
        if not question:
            response.success, response.message = False, "question is empty"
            return response
        try:
            found = await run(search(question, int(request.k), request.kb.strip()))
        except Exception as exc:  # noqa: BLE001 - a failed search is an answer, never a dead node
            response.success, response.message = False, f"search failed: {type(exc).__name__}: {exc}"
            return response
        response.success, response.message = True, ""
        response.passages = [passage_msg(p) for p in found]
        return response

    return node.create_service(
        KnowledgeSearchSrv, topics.SRV_KNOWLEDGE_SEARCH, handle, callback_group=ReentrantCallbackGroup()
    )


def knowledge_desk(node: Node, config: Any) -> KnowledgeDesk | None:
    """The dialogue node's knowledge desk from its knowledge_* parameters; None when there are no
    documents ('none', or the default file that `fay-ros knowledge add` has not made). A named
    store that does not exist is a ConfigError naming the parameter. The store opens later, on
    the desk's own thread."""
    location = config.knowledge_db.strip()
    if location.lower() == "none":
        return None
    from ..knowledge.base import KnowledgeBase, KnowledgeSettings
    from ..knowledge.kb_store import default_location

    chosen = location or default_location()
    if not is_postgres(chosen):
        path = sqlite_path(chosen).expanduser()
        if not path.is_file():
            if location:
                raise ConfigError(
                    f"parameter 'knowledge_db': {path} does not exist (make it with `fay-ros knowledge add "
                    f"PATH --db {path}`, or set 'none')"
                )
            node.get_logger().info(f"knowledge: no documents ({path} does not exist; `fay-ros knowledge add PATH`)")
            return None
        chosen = str(path)
    settings = KnowledgeSettings(db=chosen, embedder=config.knowledge_embedder, threshold=config.knowledge_threshold)
    return KnowledgeDesk(
        lambda: KnowledgeBase(settings),
        KnowledgeTalkSettings(
            tuple(filter(None, config.knowledge_bases.split(","))), config.knowledge_k, config.knowledge_prestart
        ),
    )


class RosKnowledge:
    """A client of knowledge/search (`service_call.call_service`): `search` raises
    KnowledgeUnavailable when the service is absent, silent or refuses (the message says why)."""

    def __init__(self, node: Node, timeout: float = TIMEOUT) -> None:
        self._client = node.create_client(
            KnowledgeSearchSrv, topics.SRV_KNOWLEDGE_SEARCH, callback_group=ReentrantCallbackGroup()
        )
        self._timeout = timeout
        self._grace = DiscoveryGrace()

    def ready(self) -> bool:
        return bool(self._client.service_is_ready())

    async def search(self, question: str, k: int = 0, kb: str = "") -> list[Passage]:
        request = KnowledgeSearchSrv.Request(question=question, kb=kb, k=max(0, int(k)))
        try:
            # a dialogue node started with the caller may not be discovered yet: wait in the grace
            response = await call_service(
                self._client, request, discover_until=self._grace.patient(self._timeout), timeout=self._timeout
            )
        except ServiceCallError as exc:
            raise KnowledgeUnavailable(f"{exc} (the dialogue node)" if exc.absent else str(exc)) from None
        if not response.success:
            raise KnowledgeUnavailable(response.message or f"service {self._client.srv_name} refused the search")
        return [passage_from_msg(m) for m in response.passages]
