"""The asr node's REP-155 speaker identity (asr parameter `identity_source: rep155`): which voice
was speaking during an utterance, as an external speaker-identification node says on the
ROS4HRI topics, mapped to a user id through the people file (`dialogue.people.SpeakerTracker`).

Listened to: `/humans/voices/<id>/is_speaking` (std_msgs/Bool) of every voice the people file
names, of every voice a person is linked to (`/humans/persons/<id>/voice_id`, std_msgs/String,
for every person id the file names) and, when hri_msgs is importable, of every voice on
`/humans/voices/tracked` (hri_msgs/IdsList), so an unknown voice is heard as a guest rather
than taken for the last known speaker. Spans are stamped on the node clock when they arrive,
the clock the asr's capture times are on.

The people file is re-read when it changes (checked every second on the steady clock): new
voices and persons are listened to from then on; a bad edit is refused with its file and line
(the log, and `fay/asr: files` on /diagnostics) and the last good file stays in use.
"""

from __future__ import annotations

import threading
from typing import Any

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from std_msgs.msg import Bool, String

from ..common import qos
from ..common.diagnostics import StatusPublisher
from ..common.reloading import ReloadingTable
from ..common.rostime import node_seconds
from ..dialogue.people import People, SpeakerTracker
from ..hearing.voices import TRACKED_TOPIC, is_speaking_topic, person_voice_topic

RELOAD_SECONDS = 1.0  # steady-clock period of the people file check


class Rep155Speakers:
    def __init__(self, node: Node, people: ReloadingTable[People], own_voice: str = "") -> None:
        """`people`: the people file (a bad one at start-up has already raised)."""
        self._node = node
        # the asr's own REP-155 voice (it says when anyone speaks, not who): never a speaker
        self._own_voice = own_voice
        self._lock = threading.Lock()  # callbacks (executor) and the asr worker (speaker_between)
        self._people = people
        self.tracker = SpeakerTracker(people.table)
        self._voices: dict[str, Any] = {}  # voice id -> its is_speaking subscription
        self._persons: dict[str, Any] = {}  # person id -> its voice_id subscription
        self._listen_to(people.table)
        self._files_status = StatusPublisher(node, "files")
        node.create_timer(RELOAD_SECONDS, self._reload, clock=Clock(clock_type=ClockType.STEADY_TIME))
        try:
            from hri_msgs.msg import IdsList
        except ImportError:
            node.get_logger().info("hri_msgs is not importable: unknown voices are not listened to (only named ones)")
        else:
            node.create_subscription(IdsList, TRACKED_TOPIC, self._on_tracked, qos.EVENTS)

    def speaker_between(self, start: float, end: float) -> str:
        """The user id of who spoke between `start` and `end` (node clock); "" = a guest."""
        with self._lock:
            return self.tracker.speaker_between(start, end)

    def _listen_to(self, people: People) -> None:
        for person in people.persons:
            for voice in person.voices:
                self._listen(voice)
            for person_id in person.persons:
                if person_id not in self._persons:
                    self._persons[person_id] = self._node.create_subscription(
                        String, person_voice_topic(person_id), self._person_voice(person_id), qos.LATCHED
                    )

    def _reload(self) -> None:
        result = self._people.poll()
        if result.error:
            self._node.get_logger().error(result.message)
            self._files_status.publish("error", result.message, file=str(result.path))
        elif result.changed:
            with self._lock:
                self.tracker.people = result.table
            self._listen_to(result.table)
            message = f"{result.path}: reloaded, used from the next utterance"
            self._node.get_logger().info(message)
            self._files_status.publish("info", message, file=str(result.path))

    def _listen(self, voice: str) -> None:
        if voice in self._voices or not voice or voice == self._own_voice:
            return

        def speaking(msg: Bool) -> None:
            with self._lock:
                self.tracker.voice_speaking(voice, bool(msg.data), node_seconds(self._node))

        self._voices[voice] = self._node.create_subscription(Bool, is_speaking_topic(voice), speaking, qos.EVENTS)

    def _person_voice(self, person_id: str) -> Any:
        def linked(msg: String) -> None:
            with self._lock:
                self.tracker.person_voice(person_id, msg.data)
            self._listen(msg.data)

        return linked

    def _on_tracked(self, msg: Any) -> None:
        for voice in msg.ids:
            self._listen(str(voice))
