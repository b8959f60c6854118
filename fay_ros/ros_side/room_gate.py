"""The dialogue node's first layer for spoken input on ROS: whether to answer each utterance
heard in the room (`dialogue.room.Room`), and the topics that say so.

Each final transcript is decided on the engine's loop: answered ones are published on
`dialogue/addressed` (for the memory node's `spoken_words: addressed`) before their turn
starts; every decision, with its reason, who is present and the answer's conversation id, goes
out on `dialogue/decision` (fay_msgs/SpeakDecision, reliable), so a robot program sees why the
companion stayed silent. The engine's replies (`said`, as they are published) are its side of
the conversation; REP-155 `/humans/persons/tracked` (when hri_msgs is importable) adds who is
present. Typed input and chat goals are addressed to the companion and never pass here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from rclpy.node import Node

from fay_msgs.msg import SpeakDecision, Transcript

from ..common import qos, topics
from ..common.rostime import node_seconds
from ..dialogue.people import People
from ..dialogue.reply import ReplyPiece
from ..dialogue.room import DIRECT, Room
from ..hearing.voices import PERSONS_TRACKED_TOPIC

# Replies still collecting their sentences (an end that never comes must not grow this forever).
PENDING_REPLIES = 32


class RoomGate:
    def __init__(
        self,
        node: Node,
        loop: asyncio.AbstractEventLoop,
        room: Room,
        people: Callable[[], People],
        start_turn: Callable[[Transcript], str],
    ) -> None:
        """`start_turn(msg)`: on the engine's loop, start the answer's turn and return its
        conversation id ("" when none started); `people()`: the people file in use."""
        self._node = node
        self._loop = loop
        self.room = room
        self._people = people
        self._start_turn = start_turn
        self._replies: dict[str, tuple[str, list[str]]] = {}  # conversation id -> (user, sentences)
        self.decisions = node.create_publisher(SpeakDecision, topics.DIALOGUE_DECISION, qos.EVENTS)
        self.addressed = node.create_publisher(Transcript, topics.DIALOGUE_ADDRESSED, qos.EVENTS)
        try:
            from hri_msgs.msg import IdsList
        except ImportError:
            pass  # presence from who spoke only
        else:
            node.create_subscription(IdsList, PERSONS_TRACKED_TOPIC, self._on_persons_tracked, qos.EVENTS)

    # -- called from ROS callbacks (executor threads) ---------------------------------------
    def heard(self, msg: Transcript) -> None:
        now = node_seconds(self._node)
        self._loop.call_soon_threadsafe(self._decide, msg, now)

    def speculate(self, msg: Transcript, speculate: Callable[[str, str, str], Any]) -> None:
        """The recogniser's early text: the model starts on it only when the words would be
        answered as addressed (name, reply, only person); a chime-in is never guessed at."""
        now = node_seconds(self._node)

        def maybe() -> None:
            if not msg.text.strip() or self.room.preview(msg.user_id, msg.text, now) == DIRECT:
                speculate(msg.user_id, msg.text, msg.language)

        self._loop.call_soon_threadsafe(maybe)

    def _on_persons_tracked(self, msg: Any) -> None:
        people = self._people()
        users = tuple(people.by_person(str(person)) for person in msg.ids)
        self._loop.call_soon_threadsafe(self.room.tracked, users)

    # -- on the engine's loop -----------------------------------------------------------------
    def _decide(self, msg: Transcript, now: float) -> None:
        decision = self.room.hear(msg.user_id, msg.text, now)
        conversation_id = ""
        if decision.answers:
            self.addressed.publish(msg)  # before the turn: memory has the words before the reply
            conversation_id = self._start_turn(msg)
        out = SpeakDecision(
            user_id=msg.user_id,
            conversation_id=conversation_id,
            decision=decision.decision,
            reason=decision.reason,
            present=list(decision.present),
        )
        out.header.stamp = self._node.get_clock().now().to_msg()
        out.header.frame_id = "dialogue"
        self.decisions.publish(out)

    def said(self, piece: ReplyPiece) -> None:
        """A piece of the engine's reply, as it is published (on the engine's loop, so the next
        utterance is decided knowing the whole reply before it)."""
        _user, sentences = self._replies.setdefault(piece.conversation_id, (piece.user_id, []))
        if piece.text.strip():
            sentences.append(piece.text.strip())
        if piece.is_end:
            self._replies.pop(piece.conversation_id)
            self.room.companion_said(piece.user_id, " ".join(sentences), node_seconds(self._node))
        while len(self._replies) > PENDING_REPLIES:
            self._replies.pop(next(iter(self._replies)))
