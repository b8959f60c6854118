"""demo_talker: publishes a short scripted reply on `reply`, sentence by sentence.

It exists to prove the plumbing on a machine with nothing else running (the foundation's
`make run`) and to feed consumers (tts, action_semantics, web face) by hand.
"""

from __future__ import annotations

import itertools

from pydantic import BaseModel, Field, field_validator
from rclpy.node import Node

from fay_msgs.msg import Utterance

from ..common import qos, topics
from ..common.node_main import run_node
from ..common.params import declare_config

DEFAULT_SCRIPT = [
    "Hello, I am Fay.",
    "Nice to meet you!",
    "你好，很高兴认识你。",
]


class DemoTalkerConfig(BaseModel):
    sentences: list[str] = Field(DEFAULT_SCRIPT, description="Sentences of one demo reply, in order.")
    period: float = Field(5.0, gt=0.0, description="Seconds between two demo replies.")
    sentence_gap: float = Field(0.2, ge=0.0, description="Seconds between sentences of one reply.")
    user_id: str = Field("demo", description="user_id written on the demo Utterances.")
    repeat: bool = Field(True, description="Keep replying every `period` seconds (false: once).")

    @field_validator("sentences")
    @classmethod
    def _not_empty(cls, value: list[str]) -> list[str]:
        if not value or not all(s.strip() for s in value):
            raise ValueError("needs at least one non-empty sentence")
        return value


class DemoTalker(Node):
    def __init__(self) -> None:
        super().__init__("demo_talker", namespace=topics.DEFAULT_NAMESPACE)
        self.config = declare_config(self, DemoTalkerConfig)
        self.publisher = self.create_publisher(Utterance, topics.REPLY, qos.EVENTS)
        self._replies = itertools.count()
        self._pending: list[Utterance] = []
        self._reply_timer = self.create_timer(self.config.period, self._start_reply)
        self._sentence_timer = self.create_timer(max(self.config.sentence_gap, 0.01), self._next_sentence)

    def _start_reply(self) -> None:
        n = next(self._replies)
        if n > 0 and not self.config.repeat:
            self._reply_timer.cancel()
            return
        conversation = f"demo-{n}"
        sentences = self.config.sentences
        self._pending = [
            Utterance(
                user_id=self.config.user_id,
                conversation_id=conversation,
                seq=i,
                text=text,
                is_first=i == 0,
                is_end=i == len(sentences) - 1,
                source="broadcast",
            )
            for i, text in enumerate(sentences)
        ]

    def _next_sentence(self) -> None:
        if not self._pending:
            return
        msg = self._pending.pop(0)
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.header.frame_id = "demo_talker"
        self.publisher.publish(msg)


def main(args: list[str] | None = None) -> int:
    return run_node(DemoTalker, args)


if __name__ == "__main__":
    raise SystemExit(main())
