"""latency_monitor: per-stage latency of each voice turn, published on /diagnostics.

Watches the graph (speech/final, reply, robot_speaking, and the dialogue node's own LLM
diagnostics) and, once a turn's first audio sample plays, publishes one DiagnosticArray with
the stage durations in milliseconds: end of speech → final transcript → first reply sentence
→ first audio sample, plus the LLM's time to first token and the pipeline's own share.
/diagnostics is global: it carries the reply's conversation_id and timings only, never
what was said (nor do the printed lines).

Each event the tracker takes in is also published on `~/events` (std_msgs/String: `final`,
`llm_first_token`, `first_reply`), in the order taken, so a driver of the graph (a test) can
feed the next one after it.
"""
from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from pydantic import BaseModel, Field
from rclpy.node import Node
from rclpy.qos import QoSProfile
from std_msgs.msg import String

from fay_msgs.msg import SpeechState, Transcript, Utterance

from ..bringup.latency import LLM_STATUS_NAME, LLM_TTFT_KEY, PIPELINE_STATUS_NAME, LatencyTracker, TurnLatency
from ..common import qos, topics
from ..common.node_main import run_node
from ..common.params import declare_config
from ..common.rostime import from_time_msg


class LatencyMonitorConfig(BaseModel):
    print_turns: bool = Field(True, description="Also print one line per turn to stdout.")
    print_events: bool = Field(False, description="Print every observed event (for debugging a pipeline).")


class LatencyMonitor(Node):
    def __init__(self) -> None:
        super().__init__("latency_monitor", namespace=topics.DEFAULT_NAMESPACE)
        self.config = declare_config(self, LatencyMonitorConfig)
        self.tracker = LatencyTracker()
        self.publisher = self.create_publisher(DiagnosticArray, topics.DIAGNOSTICS, QoSProfile(depth=10))
        self.events = self.create_publisher(String, topics.LATENCY_EVENTS, qos.EVENTS)
        self.create_subscription(Transcript, topics.SPEECH_FINAL, self._on_final, qos.EVENTS)
        self.create_subscription(Utterance, topics.REPLY, self._on_reply, qos.EVENTS)
        self.create_subscription(SpeechState, topics.ROBOT_SPEAKING, self._on_speaking, qos.LATCHED)
        self.create_subscription(DiagnosticArray, topics.DIAGNOSTICS, self._on_diagnostics, QoSProfile(depth=10))

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _on_final(self, msg: Transcript) -> None:
        now = self._now()
        end = from_time_msg(msg.header.stamp) if msg.header.stamp.sec else now
        self.tracker.on_final_transcript(end, now)
        self._event("final")

    def _on_reply(self, msg: Utterance) -> None:
        if msg.is_first:
            self.tracker.on_first_reply(self._now(), msg.conversation_id)
            self._event("first_reply", f"conversation {msg.conversation_id}")

    def _on_speaking(self, msg: SpeechState) -> None:
        stamp = from_time_msg(msg.header.stamp) if msg.header.stamp.sec else self._now()
        turn = self.tracker.on_speaking(msg.speaking, stamp)
        if turn is not None:
            self._publish(turn)

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.name != LLM_STATUS_NAME:
                continue
            for kv in status.values:
                if kv.key == LLM_TTFT_KEY:
                    try:
                        self.tracker.on_llm_first_token(float(kv.value) / 1000.0)
                        self._event("llm_first_token", kv.value)
                    except ValueError:
                        self.get_logger().warning(f"unreadable {LLM_TTFT_KEY}: {kv.value!r}")

    def _event(self, kind: str, detail: str = "") -> None:
        self.events.publish(String(data=kind))
        if self.config.print_events:
            print(f"[latency] event {kind}" + (f": {detail}" if detail else ""), flush=True)

    def _publish(self, turn: TurnLatency) -> None:
        status = DiagnosticStatus(
            level=DiagnosticStatus.OK,
            name=PIPELINE_STATUS_NAME,
            message=f"voice to first audio {turn.stages.get('voice_to_first_audio', 0) * 1000:.0f} ms",
            hardware_id="fay_ros",
            values=[KeyValue(key=f"{k}_ms", value=f"{v * 1000:.1f}") for k, v in turn.stages.items()]
            + [KeyValue(key="conversation_id", value=turn.conversation_id)],
        )
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self.publisher.publish(array)
        if self.config.print_turns:
            parts = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in turn.stages.items())
            print(f"[latency] {parts}", flush=True)


def main(args: list[str] | None = None) -> int:
    return run_node(LatencyMonitor, args)


if __name__ == "__main__":
    raise SystemExit(main())
