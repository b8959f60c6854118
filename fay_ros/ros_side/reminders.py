"""Reminders over ROS (issue 36): the `memory/reminders` service's messages both ways, and the
`Reminders` port (fay_ros.memory.reminder_service) on that service for the dialogue, the agent
tools and `fay-ros mcp`.

The memory node serves the service with `ReminderDesk.handle` (`request_from_msg` in,
`fill_response` out); a caller uses `RosReminders.call` (`request_msg` out, `answer_from_msg`
in). One conversion each way, so the dialogue reads what the node wrote field by field.
"""

from __future__ import annotations

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from fay_msgs.msg import Commitment as CommitmentMsg
from fay_msgs.msg import Reminder as ReminderMsg
from fay_msgs.srv import Reminders as RemindersSrv

from ..common import topics
from ..common.rostime import from_time_msg, to_time_msg
from ..memory.reminder_book import Commitment, Reminder
from ..memory.reminder_service import ReminderAnswer, ReminderRequest
from .service_call import DiscoveryGrace, ServiceCallError, call_service

# Seconds a call waits for the memory's answer. Longer than the chat's memory_timeout (0.5 s): a
# reminder the user asked for is worth the wait, while a busy memory node (embedding a long turn)
# finishes what it is doing; the runner's look simply skips ticks meanwhile.
TIMEOUT = 10.0


# ----------------------------------------------------------------------------- messages
def reminder_msg(r: Reminder) -> ReminderMsg:
    return ReminderMsg(
        id=r.id,
        owner=r.owner,
        text=r.text,
        tz=r.tz,
        due_local=r.due_local,
        due=to_time_msg(r.next_due_utc),
        repeat=r.rrule,
        status=r.status,
        attempts=int(r.attempts),
        source_utterance=r.source_utterance,
    )


def reminder_from_msg(m: ReminderMsg) -> Reminder:
    """The fields a message carries; the rest (start, created, ...) are not sent."""
    return Reminder(
        id=m.id,
        owner=m.owner,
        tz=m.tz,
        start_local="",
        rrule=m.repeat,
        next_due_utc=from_time_msg(m.due),
        status=m.status,
        snoozed_until_utc=0.0,
        attempts=int(m.attempts),
        text=m.text,
        source_utterance=m.source_utterance,
        source_turn="",
        created=0.0,
        updated=0.0,
    )


def commitment_msg(c: Commitment) -> CommitmentMsg:
    return CommitmentMsg(
        id=c.id,
        owner=c.owner,
        text=c.text,
        due_hint=to_time_msg(c.due_hint_utc),
        status=c.status,
        followups=int(c.followups),
        last_followup=to_time_msg(c.last_followup_utc),
    )


def commitment_from_msg(m: CommitmentMsg) -> Commitment:
    return Commitment(
        id=m.id,
        owner=m.owner,
        text=m.text,
        due_hint_utc=from_time_msg(m.due_hint),
        status=m.status,
        followups=int(m.followups),
        last_followup_utc=from_time_msg(m.last_followup),
        source_turn="",
        created=0.0,
    )


_FIELDS = ("action", "owner", "id", "text", "tz", "start_local", "repeat", "source_utterance", "source_turn")


def request_msg(r: ReminderRequest) -> RemindersSrv.Request:
    msg = RemindersSrv.Request(**{name: getattr(r, name) for name in _FIELDS}, include_done=r.include_done)
    msg.at = to_time_msg(r.at)
    return msg


def request_from_msg(m: RemindersSrv.Request) -> ReminderRequest:
    return ReminderRequest(
        **{name: getattr(m, name) for name in _FIELDS}, at=from_time_msg(m.at), include_done=bool(m.include_done)
    )


def fill_response(answer: ReminderAnswer, res: RemindersSrv.Response) -> RemindersSrv.Response:
    res.success, res.message, res.summary = answer.success, answer.message, answer.summary
    res.reminders = [reminder_msg(r) for r in answer.reminders]
    res.commitments = [commitment_msg(c) for c in answer.commitments]
    res.times = [int(t) for t in answer.times]
    return res


def answer_from_msg(res: RemindersSrv.Response) -> ReminderAnswer:
    return ReminderAnswer(
        success=bool(res.success),
        message=res.message,
        reminders=tuple(reminder_from_msg(m) for m in res.reminders),
        commitments=tuple(commitment_from_msg(m) for m in res.commitments),
        summary=res.summary,
        times=tuple(int(t) for t in res.times),
    )


# ----------------------------------------------------------------------------- the port
class RosReminders:
    """The `Reminders` port on the memory node's `memory/reminders` (call_async + timeout).
    An absent or silent service is an unsuccessful answer, never an exception: the caller
    says so (a turn) or tries again (the scheduler's next look)."""

    def __init__(self, node: Node, timeout: float = TIMEOUT) -> None:
        self._client = node.create_client(RemindersSrv, topics.SRV_REMINDERS, callback_group=ReentrantCallbackGroup())
        self._timeout = timeout
        self._grace = DiscoveryGrace()

    def ready(self) -> bool:
        return bool(self._client.service_is_ready())

    async def call(self, request: ReminderRequest) -> ReminderAnswer:
        # a memory node started with this one may not be discovered yet: in the first seconds a
        # call waits for it (a reminder asked for then is kept, not refused)
        try:
            response = await call_service(
                self._client,
                request_msg(request),
                discover_until=self._grace.patient(self._timeout),
                timeout=self._timeout,
            )
        except ServiceCallError as exc:
            return ReminderAnswer(False, f"{exc} (the memory node)" if exc.absent else str(exc), unavailable=True)
        return answer_from_msg(response)
