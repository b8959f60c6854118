"""action_semantics: every reply sentence (and, by parameter, every final transcript) becomes
one fay_msgs/ActionCue on `action_cue`.

Subscribes `reply` (Utterance) and, when `cue_transcripts` is true, `speech/final`
(Transcript). The core (fay_ros.action) picks the rule of config/action_rules.csv and scores
sentiment with config/sentiment_lexicon.csv; this shell only moves messages and watches the
table files.

- utterance_id: `conversation_id:seq` for an Utterance (fay_ros.common.ids.utterance_id);
  `transcript:<sec>.<nanosec>` (nanoseconds zero-padded to 9 digits) of the header stamp for
  a Transcript.
- header: copied from the message the cue belongs to, so consumers can line it up with the
  voice.
- An Utterance or Transcript whose text is empty or only whitespace (e.g. a closing is_end
  marker) gets no cue: there is nothing to act out.
- An Utterance that carries a cue (`cue`, at most one: e.g. a `say` goal's override for its
  first sentence) gets that cue instead of the derived one, with utterance_id and header
  filled from the utterance and its text when the given one is empty.
- Tables are re-read when their files change (polled every `reload_period` s). A table with
  a bad row is rejected with file, line and problem in the log and on /diagnostics (status
  `fay/action_semantics: tables`, which also reports each reload), and the node keeps the last
  good one. A bad table at start-up stops the node (exit code 2) with the same message.
"""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field
from rclpy.node import Node

from fay_msgs.msg import ActionCue, Transcript, Utterance

from ..action import LEXICON_FILE, RULES_FILE, TableError, default_table_path
from ..action.cue import Cue, transcript_cue_id
from ..action.watch import TableWatcher
from ..common import qos, topics
from ..common.diagnostics import StatusPublisher
from ..common.ids import utterance_id
from ..common.node_main import run_node
from ..common.params import ConfigError, declare_config


class ActionSemanticsConfig(BaseModel):
    rules_file: str = Field("", description=f"Action rules CSV ('' = the shipped config/{RULES_FILE}).")
    lexicon_file: str = Field("", description=f"Sentiment lexicon CSV ('' = the shipped config/{LEXICON_FILE}).")
    cue_transcripts: bool = Field(False, description="Also publish a cue for every speech/final Transcript "
                                                      "(what the person said), not only for reply sentences.")
    reload_period: float = Field(1.0, ge=0.0, description="Seconds between checks whether a table file changed "
                                                          "(0 = never reload).")


class ActionSemantics(Node):
    def __init__(self) -> None:
        super().__init__("action_semantics", namespace=topics.DEFAULT_NAMESPACE)
        self.config = declare_config(self, ActionSemanticsConfig)
        rules_path = Path(self.config.rules_file) if self.config.rules_file else default_table_path(RULES_FILE)
        lexicon_path = Path(self.config.lexicon_file) if self.config.lexicon_file else default_table_path(LEXICON_FILE)
        try:
            self.watcher = TableWatcher(rules_path, lexicon_path)
        except TableError as exc:
            raise ConfigError(f"invalid action table:\n{exc}") from None
        self.get_logger().info(f"tables loaded: {self.watcher.describe()}")
        self.publisher = self.create_publisher(ActionCue, topics.ACTION_CUE, qos.EVENTS)
        self.table_status = StatusPublisher(self, "tables")  # reloads and rejected edits, on /diagnostics
        self.create_subscription(Utterance, topics.REPLY, self._on_reply, qos.EVENTS)
        if self.config.cue_transcripts:
            self.create_subscription(Transcript, topics.SPEECH_FINAL, self._on_transcript, qos.EVENTS)
        if self.config.reload_period > 0:
            self.create_timer(self.config.reload_period, self._check_tables)

    def _on_reply(self, msg: Utterance) -> None:
        if not msg.text.strip():
            return
        uid = utterance_id(msg.conversation_id, msg.seq)
        if msg.cue:
            self.publisher.publish(given_cue(msg.cue[0], msg.header, msg.text, uid))
        else:
            self._publish(msg.header, msg.text, uid)

    def _on_transcript(self, msg: Transcript) -> None:
        if msg.text.strip():
            self._publish(msg.header, msg.text, transcript_cue_id(msg.header.stamp.sec, msg.header.stamp.nanosec))

    def _publish(self, header, text: str, uid: str) -> None:
        cue = self.watcher.engine.cue(text)
        self.publisher.publish(to_message(cue, header, uid))

    def _check_tables(self) -> None:
        for event in self.watcher.poll():
            if event.ok:
                self.get_logger().info(f"{event.path}: {event.message}")
            else:
                self.get_logger().error(f"{event.path}: {event.message}")
            self.table_status.publish("info" if event.ok else "error", f"{event.path}: {event.message}",
                                      file=str(event.path))


def to_message(cue: Cue, header, uid: str) -> ActionCue:
    return ActionCue(
        header=header,
        code=cue.code,
        behavior=cue.behavior,
        affect=cue.affect,
        intensity=float(cue.intensity),
        priority=int(cue.priority),
        sentiment=float(cue.sentiment),
        text=cue.text,
        utterance_id=uid,
        matched_keywords=list(cue.matched_keywords),
    )


def given_cue(cue: ActionCue, header, text: str, uid: str) -> ActionCue:
    """An explicit cue as published: it belongs to the utterance (id, header) it came with."""
    cue.header = header
    cue.utterance_id = uid
    if not cue.text:
        cue.text = text
    return cue


def main(args: list[str] | None = None) -> int:
    return run_node(ActionSemantics, args)


if __name__ == "__main__":
    raise SystemExit(main())
