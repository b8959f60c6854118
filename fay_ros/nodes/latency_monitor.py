"""latency_monitor: per-stage latency of each voice turn, on its own typed topic.

Watches the graph (speech/speculative, speech/final, reply, robot_speaking, and the dialogue's
LLM timing on `dialogue/llm_latency`, fay_msgs/LlmLatency) and, once a turn's first audio sample plays,
publishes one fay_msgs/TurnLatency on `latency/turns`: end of speech → final transcript →
first reply sentence → first audio sample, plus the LLM's time to first token and the
pipeline's own share, in seconds (NaN for a stage not observed). It carries the reply's
conversation_id and timings only, never what was said (nor do the printed lines). The printed
line also tells the turn's moments after the end of speech (speculative text, final, first
token, first sentence, first audio: fay_ros.bringup.latency.MILESTONES).
/diagnostics carries the node's health only.

Each event the tracker takes in is also published on `~/events` (std_msgs/String: `speculative`,
`speculative_withdrawn`, `final`, `llm_first_token`, `first_reply`), in the order taken, so a
driver of the graph (a test) can feed the next one after it.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, Field
from rclpy.node import Node
from std_msgs.msg import String

from fay_msgs.msg import LlmLatency, SpeechState, Transcript, Utterance
from fay_msgs.msg import TurnLatency as TurnLatencyMsg

from ..bringup.latency import STAGE_FIELDS, LatencyTracker, TurnLatency
from ..common import qos, reply_sources, topics
from ..common.node_main import run_node
from ..common.params import declare_config
from ..common.rostime import from_time_msg, node_seconds


class LatencyMonitorConfig(BaseModel):
    print_turns: bool = Field(True, description="Also print one line per turn to stdout.")
    print_events: bool = Field(False, description="Print every observed event (for debugging a pipeline).")


class LatencyMonitor(Node):
    def __init__(self) -> None:
        super().__init__("latency_monitor", namespace=topics.DEFAULT_NAMESPACE)
        self.config = declare_config(self, LatencyMonitorConfig)
        self.tracker = LatencyTracker()
        self.publisher = self.create_publisher(TurnLatencyMsg, topics.TURN_LATENCY, qos.EVENTS)
        self.events = self.create_publisher(String, topics.LATENCY_EVENTS, qos.EVENTS)
        self.create_subscription(Transcript, topics.SPEECH_SPECULATIVE, self._on_speculative, qos.EVENTS)
        self.create_subscription(Transcript, topics.SPEECH_FINAL, self._on_final, qos.EVENTS)
        self.create_subscription(Utterance, topics.REPLY, self._on_reply, qos.EVENTS)
        self.create_subscription(SpeechState, topics.ROBOT_SPEAKING, self._on_speaking, qos.LATCHED)
        self.create_subscription(LlmLatency, topics.LLM_LATENCY, self._on_llm_latency, qos.EVENTS)

    def _now(self) -> float:
        return node_seconds(self)

    def _on_speculative(self, msg: Transcript) -> None:
        self.tracker.on_speculative(self._now(), withdrawn=not msg.text)
        self._event("speculative" if msg.text else "speculative_withdrawn")

    def _on_final(self, msg: Transcript) -> None:
        now = self._now()
        end = from_time_msg(msg.header.stamp) if msg.header.stamp.sec else now
        held = self.tracker.on_final_transcript(end, now)
        if held is not None:  # the model's timing for the turn before never came
            self._publish(held)
        self._event("final")

    def _on_reply(self, msg: Utterance) -> None:
        if msg.is_first and msg.source not in reply_sources.UNPROMPTED:  # a say or proactive line answers no turn
            self.tracker.on_first_reply(self._now(), msg.conversation_id, from_model=msg.source == reply_sources.LLM)
            self._event("first_reply", f"conversation {msg.conversation_id}")

    def _on_speaking(self, msg: SpeechState) -> None:
        stamp = from_time_msg(msg.header.stamp) if msg.header.stamp.sec else self._now()
        turn = self.tracker.on_speaking(msg.speaking, stamp)
        if turn is not None:
            self._publish(turn)

    def _on_llm_latency(self, msg: LlmLatency) -> None:
        if not math.isfinite(msg.time_to_first_token) or msg.time_to_first_token < 0:
            self.get_logger().warning(f"ignored an unusable time_to_first_token: {msg.time_to_first_token!r}")
            return
        at = from_time_msg(msg.header.stamp) if msg.header.stamp.sec else None
        turn = self.tracker.on_llm_first_token(msg.time_to_first_token, at, msg.conversation_id)
        self._event("llm_first_token", f"{msg.time_to_first_token * 1000:.1f} ms")
        if turn is not None:
            self._publish(turn)

    def _event(self, kind: str, detail: str = "") -> None:
        self.events.publish(String(data=kind))
        if self.config.print_events:
            print(f"[latency] event {kind}" + (f": {detail}" if detail else ""), flush=True)

    def _publish(self, turn: TurnLatency) -> None:
        msg = TurnLatencyMsg(
            conversation_id=turn.conversation_id, **{field: turn.stages.get(field, math.nan) for field in STAGE_FIELDS}
        )
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.header.frame_id = "latency_monitor"
        self.publisher.publish(msg)
        if self.config.print_turns:
            parts = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in turn.stages.items())
            parts += "; after the end of speech: " + ", ".join(
                f"{k} {v * 1000:.0f} ms" for k, v in turn.milestones.items()
            )
            print(f"[latency] {parts}", flush=True)


def main(args: list[str] | None = None) -> int:
    return run_node(LatencyMonitor, args)


if __name__ == "__main__":
    raise SystemExit(main())
