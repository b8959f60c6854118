"""What one authenticated websocket client may say to the bridge and hear from it.

The protocol half of the web door (the transport half is fay_ros.web.gate): pure functions
over rosbridge v2 JSON operations, no sockets, no ROS. Each client session knows who it is
(bound on the server from its token) and its role, and every frame passes through here:

- from the client: only the operations its role needs, on its role's names, as JSON text.
  Everything else is refused with a rosbridge `status` error and never reaches the bridge.
  The `user_id` of a typed message is overwritten with the bound identity, whatever the
  client wrote.
- to the client: a `reply` sentence of another user's conversation is dropped (a guest's,
  which the robot says aloud to the room anyway, passes), and for the face role the text
  and keywords of action cues are blanked (the face needs the code, not the sentence).

Roles (least privilege): `face` may subscribe action_cue, visemes, reply, robot_speaking
and publish text_input and interrupt (plus what the operator opened with --allow-*), and
call no service. `admin` (the admin page, refused unless the operator turns it on with
`fay-ros web --admin`) may subscribe the timeline, health and latency topics of
ADMIN_SUBSCRIBE, call the memory services of ADMIN_SERVICES (plus what --allow-service
opened) and publish nothing: it watches and curates memory, it does not speak.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from typing import Any

from ..common import topics
from ..common.errors import FayError
from .access import Client
from .allowlist import AllowList, AllowListError, resolve

# Message types the companion's own topics carry (a client may not advertise another type
# on them: the bridge would create a second, incompatible publisher).
_FIXED_TYPES = {
    topics.TEXT_INPUT: "fay_msgs/msg/Transcript",
    topics.INTERRUPT: "std_msgs/msg/Empty",
}
# Fields of each operation that are forwarded; anything else a client adds is dropped
# (fragment_size, compression=cbor/png and the like change what the bridge sends back into
# forms this door does not inspect).
_FIELDS = {
    "subscribe": ("op", "id", "topic", "type", "throttle_rate", "queue_length", "qos"),
    "unsubscribe": ("op", "id", "topic"),
    "advertise": ("op", "id", "topic", "type", "latch", "queue_size"),
    "unadvertise": ("op", "id", "topic"),
    "publish": ("op", "id", "topic", "msg", "latch"),
    "call_service": ("op", "id", "service", "type", "args", "timeout"),
}
MAX_CLIENT_FRAME = 64 * 1024  # a typed line, not a file upload

# The dialogue node's proactive planner reports each decision here (fay_ros.ros_side.proactive_talk,
# DiagnosticStatus on the node's private ~/proactive).
PROACTIVE_EVENTS = "dialogue/proactive"
# What the admin page reads: the timeline (heard, typed, replies, cues, speaking), node
# health, per-stage turn latency and the proactive planner's decisions. Relative names
# resolve under the namespace; /diagnostics is absolute.
ADMIN_SUBSCRIBE = (
    topics.SPEECH_FINAL,
    topics.TEXT_INPUT,
    topics.CHAT_HEARD,
    topics.REPLY,
    topics.ACTION_CUE,
    topics.ROBOT_SPEAKING,
    topics.DIAGNOSTICS,
    topics.TURN_LATENCY,
    PROACTIVE_EVENTS,
)
# The memory browser: search (recall with include_candidates), confirm a candidate by id
# (memory/confirm: the operator's decision, not a write of new content), forget. The speaker
# card panel (issue 39) edits a card field with memory/remember: the keyed fact the admin
# API's card/fact route makes (the same one self_facts writes from the person's words), so
# the node supersedes the old value, records it and keeps owners apart as for any write;
# the door refuses any other content (_check_card_write). Not memory/profile or memory/active_rules (views of the
# same rows).
ADMIN_SERVICES = (topics.SRV_RECALL, topics.SRV_CONFIRM, topics.SRV_FORGET, topics.SRV_REMINDERS, topics.SRV_REMEMBER)


def _check_card_write(args: Any) -> None:
    """The admin role's memory/remember is the speaker card panel's edit (issue 39): only a
    card field's keyed fact, as the admin API's card/fact route makes it, passes; any other
    content would be an operator putting words into a person's memory."""
    from ..dialogue.card_reader import is_card_fact

    if not isinstance(args, dict):
        raise Refused("memory/remember needs its args")
    key, content, tags = args.get("key", ""), args.get("content", ""), args.get("tags", [])
    if not (isinstance(key, str) and isinstance(content, str) and isinstance(tags, list)):
        raise Refused("memory/remember: key, content and tags of the wrong type")
    if not is_card_fact(key, content, tags):
        raise Refused("memory/remember is open to the admin page for speaker card fields only")


class Refused(FayError):
    """A client frame this session may not send; str() is the reason sent back to it."""

    def __init__(self, reason: str, message_id: Any = None) -> None:
        super().__init__(reason)
        self.message_id = message_id


@dataclass(frozen=True)
class RolePermissions:
    subscribe: tuple[str, ...]
    publish: tuple[str, ...]
    services: tuple[str, ...]

    @classmethod
    def for_role(cls, role: str, allow: AllowList, namespace: str = topics.DEFAULT_NAMESPACE) -> RolePermissions:
        """`allow`: the face's list (defaults plus the operator's --allow-*). The bridge behind
        the door exposes the union of both roles (admin_bridge_allow); this is what one client
        of `role` may use of it."""
        if role == "admin":
            admin = AllowList.build(namespace, subscribe=ADMIN_SUBSCRIBE, publish=(), services=ADMIN_SERVICES)
            return cls(admin.subscribe, (), tuple(dict.fromkeys(admin.services + allow.services)))
        # The face role never calls services, whatever the endpoint opens.
        return cls(allow.subscribe, allow.publish, ())


def admin_bridge_allow(allow: AllowList, namespace: str = topics.DEFAULT_NAMESPACE) -> AllowList:
    """What the rosbridge server must expose when the admin role is on: the face's list plus
    the admin's topics and services (the door decides per client which of them it gets)."""
    return AllowList.build(
        namespace,
        subscribe=allow.subscribe + ADMIN_SUBSCRIBE,
        publish=allow.publish,
        services=allow.services + ADMIN_SERVICES,
    )


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


@dataclass
class ClientSession:
    """One connection's view of the protocol."""

    client: Client
    permissions: RolePermissions
    namespace: str = topics.DEFAULT_NAMESPACE
    # op counters, for the one log line at the end of a connection
    refused: int = 0
    dropped: int = 0
    _names: dict[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._names = {
            resolve(t, self.namespace): t
            for t in (topics.TEXT_INPUT, topics.INTERRUPT, topics.REPLY, topics.ACTION_CUE)
        }

    @property
    def user_id(self) -> str:
        return self.client.user_id

    def _short(self, absolute: str) -> str:
        return self._names.get(absolute, "")

    # ---- client -> bridge ---------------------------------------------------------------

    def from_client(self, frame: str | bytes) -> str:
        """The frame to forward to the bridge; raises Refused with the reason otherwise."""
        try:
            return self._from_client(frame)
        except Refused:
            self.refused += 1
            raise

    def _from_client(self, frame: str | bytes) -> str:
        if isinstance(frame, bytes):
            raise Refused("binary frames are not accepted; send rosbridge JSON as text")
        if len(frame) > MAX_CLIENT_FRAME:
            raise Refused(f"frame of {len(frame)} characters exceeds {MAX_CLIENT_FRAME}")
        try:
            message = json.loads(frame)
        except json.JSONDecodeError:
            raise Refused("not JSON") from None
        if not isinstance(message, dict) or not isinstance(message.get("op"), str):
            raise Refused("not a rosbridge operation (a JSON object with 'op')")
        try:
            return self._operation(message)
        except Refused as exc:
            exc.message_id = message.get("id")
            raise

    def _operation(self, message: dict[str, Any]) -> str:
        op = message["op"]
        if op not in _FIELDS:
            raise Refused(f"operation {op!r} is not allowed on this endpoint")
        message = {k: message[k] for k in _FIELDS[op] if k in message}
        if op == "call_service":
            service = message.get("service")
            if not isinstance(service, str):
                raise Refused("call_service needs a 'service' name")
            absolute = self._absolute(service)
            if not _matches(absolute, self.permissions.services):
                raise Refused(f"service {absolute} is not open to a {self.client.role} client")
            if absolute == self._absolute(topics.SRV_REMEMBER):
                _check_card_write(message.get("args"))
            message["service"] = absolute
            return json.dumps(message)
        topic = message.get("topic")
        if not isinstance(topic, str):
            raise Refused(f"{op} needs a 'topic' name")
        absolute = self._absolute(topic)
        message["topic"] = absolute
        if op in ("subscribe", "unsubscribe"):
            if not _matches(absolute, self.permissions.subscribe):
                raise Refused(f"topic {absolute} may not be subscribed by a {self.client.role} client")
            return json.dumps(message)
        if not _matches(absolute, self.permissions.publish):
            raise Refused(f"topic {absolute} may not be published by a {self.client.role} client")
        short = self._short(absolute)
        if op == "advertise":
            expected = _FIXED_TYPES.get(short)
            if expected and message.get("type") != expected:
                raise Refused(f"topic {absolute} carries {expected}, not {message.get('type')!r}")
        if op == "publish":
            msg = message.get("msg", {})
            if not isinstance(msg, dict):
                raise Refused("publish needs 'msg' as a JSON object")
            if short == topics.TEXT_INPUT:
                # The identity is the token's, whatever the page wrote (issue: a browser
                # must not speak as the owner).
                msg = dict(msg, user_id=self.user_id)
            message["msg"] = msg
        return json.dumps(message)

    def _absolute(self, name: str) -> str:
        try:
            return resolve(name, self.namespace)
        except AllowListError as exc:
            raise Refused(str(exc)) from None

    @staticmethod
    def refusal(reason: str, message_id: Any = None) -> str:
        """The rosbridge status message that tells the client why a frame went nowhere."""
        status: dict[str, Any] = {"op": "status", "level": "error", "msg": f"refused: {reason}"}
        if isinstance(message_id, str):
            status["id"] = message_id
        return json.dumps(status)

    # ---- bridge -> client ---------------------------------------------------------------

    def to_client(self, frame: str | bytes) -> str | None:
        """The frame to pass to the client, or None to drop it."""
        if isinstance(frame, bytes):
            self.dropped += 1
            return None  # never requested (compression is not forwarded)
        if self.client.role == "admin":
            return frame
        if '"publish"' not in frame:
            return frame  # status, service responses: nothing user-specific to inspect
        try:
            message = json.loads(frame)
        except json.JSONDecodeError:
            self.dropped += 1
            return None
        if not isinstance(message, dict) or message.get("op") != "publish":
            return frame
        short = self._short(str(message.get("topic", "")))
        msg = message.get("msg")
        if not isinstance(msg, dict):
            return frame
        if short == topics.REPLY:
            owner = msg.get("user_id") or ""
            if owner and owner != self.user_id:
                self.dropped += 1
                return None
            return frame
        if short == topics.ACTION_CUE:
            msg["text"] = ""
            msg["matched_keywords"] = []
            return json.dumps(message)
        return frame
