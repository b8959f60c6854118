"""timeline: prints one line per event of the companion graph, so a person can watch it work.

Subscribes to everything a user wants to see (transcripts, reply sentences, action cues,
viseme tracks, speaking state) and prints a compact, time-ordered line for each.
"""

from __future__ import annotations

import sys
import threading
import time

from pydantic import BaseModel, Field
from rclpy.node import Node

from fay_msgs.msg import ActionCue, SpeechState, Transcript, Utterance, VisemeTrack

from ..common import qos, topics
from ..common.node_main import run_node
from ..common.params import declare_config


class TimelineConfig(BaseModel):
    show_partials: bool = Field(False, description="Also print partial transcripts.")
    typed_input: bool = Field(
        False,
        description="Read lines typed on stdin and publish them on text_input (only "
        "where the process owns a terminal: `fay-ros up`; under a launch, `fay-ros type` "
        "does it from any terminal).",
    )
    user_id: str = Field("user", description="user_id of typed input.")


class Timeline(Node):
    def __init__(self) -> None:
        super().__init__("timeline", namespace=topics.DEFAULT_NAMESPACE)
        self.config = declare_config(self, TimelineConfig)
        self._t0 = time.monotonic()
        self.create_subscription(Transcript, topics.SPEECH_FINAL, self._on_final, qos.EVENTS)
        if self.config.show_partials:
            self.create_subscription(Transcript, topics.SPEECH_PARTIAL, self._on_partial, qos.EVENTS)
        self.create_subscription(Utterance, topics.REPLY, self._on_reply, qos.EVENTS)
        self.create_subscription(ActionCue, topics.ACTION_CUE, self._on_cue, qos.EVENTS)
        self.create_subscription(VisemeTrack, topics.VISEMES, self._on_visemes, qos.EVENTS)
        self.create_subscription(SpeechState, topics.ROBOT_SPEAKING, self._on_speaking, qos.LATCHED)
        if self.config.typed_input:
            self._typed = self.create_publisher(Transcript, topics.TEXT_INPUT, qos.EVENTS)
            threading.Thread(target=self._read_stdin, daemon=True).start()
            self._print("ready", "type a sentence and press Enter to talk to the companion")
        else:
            self._print("ready", "to type to the companion, run `fay-ros type` in another terminal")

    def _read_stdin(self) -> None:
        # A daemon thread: readline blocks, and the process exits without waiting for it.
        for line in sys.stdin:
            text = line.strip()
            if not text:
                continue
            msg = Transcript(text=text, is_final=True, user_id=self.config.user_id)
            msg.header.stamp = self.get_clock().now().to_msg()
            msg.header.frame_id = "keyboard"
            self._typed.publish(msg)
            self._print("typed", text)

    def _print(self, kind: str, text: str) -> None:
        print(f"[{time.monotonic() - self._t0:8.3f}s] {kind:<10} {text}", flush=True, file=sys.stdout)

    def _on_final(self, msg: Transcript) -> None:
        self._print("heard", f"({msg.language or '?'}, {msg.user_id or 'guest'}) {msg.text}")

    def _on_partial(self, msg: Transcript) -> None:
        self._print("partial", msg.text)

    def _on_reply(self, msg: Utterance) -> None:
        flags = ("first " if msg.is_first else "") + ("end" if msg.is_end else "")
        self._print("reply", f"{msg.conversation_id}#{msg.seq} {msg.text} {flags.strip()}")

    def _on_cue(self, msg: ActionCue) -> None:
        self._print(
            "action",
            f"{msg.code} behavior={msg.behavior} affect={msg.affect} "
            f"intensity={msg.intensity:.2f} priority={msg.priority} sentiment={msg.sentiment:+.2f}",
        )

    def _on_visemes(self, msg: VisemeTrack) -> None:
        names = " ".join(f.name for f in msg.frames[:12])
        more = " …" if len(msg.frames) > 12 else ""
        self._print("visemes", f"{msg.utterance_id} {len(msg.frames)} frames {msg.duration:.2f}s: {names}{more}")

    def _on_speaking(self, msg: SpeechState) -> None:
        self._print("speaking", f"{msg.speaking} {msg.utterance_id}")


def main(args: list[str] | None = None) -> int:
    return run_node(Timeline, args)


if __name__ == "__main__":
    raise SystemExit(main())
