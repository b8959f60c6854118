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
  good one. A bad table at start-up stops the node (exit code 2) with the same message. The
  check runs on the steady clock, so edits are taken while simulated time stands still.

- match_policy: `priority` (rank by priority first) or `fay` (Fay's ranking: keywords found,
  longest keyword, priority; our word boundaries and negation kept). no_match: `idle` (a
  default idle cue when no rule matches) or `none` (no cue, as Fay sends no Action).
- sentiment_hint on the cue: the winning rule's sentimentHint (Fay's -2..2 scale).

Live parameters (`ros2 param set`): all six. rules_file and lexicon_file (both tables are read
from the files they name at once; a table that does not load is refused with file:line and the
old tables stay), match_policy and no_match (the tables are rebuilt with them),
cue_transcripts (the speech/final subscription is made or dropped), and reload_period.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field
from rclpy.node import Node
from rclpy.subscription import Subscription

from fay_msgs.msg import ActionCue, Transcript, Utterance

from ..action import LEXICON_FILE, RULES_FILE, TableError, default_table_path
from ..action.text_to_cue import Cue, transcript_cue_id
from ..action.watch import TableWatcher
from ..common import qos, topics
from ..common.diagnostics import StatusPublisher
from ..common.ids import utterance_id
from ..common.node_main import run_node
from ..common.params import ConfigError, declare_config
from ..common.rostime import file_check_timer, set_timer_period


class ActionSemanticsConfig(BaseModel):
    rules_file: str = Field("", description=f"Action rules CSV ('' = the shipped config/{RULES_FILE}).")
    lexicon_file: str = Field("", description=f"Sentiment lexicon CSV ('' = the shipped config/{LEXICON_FILE}).")
    cue_transcripts: bool = Field(
        False,
        description="Also publish a cue for every speech/final Transcript "
        "(what the person said), not only for reply sentences.",
    )
    reload_period: float = Field(
        1.0, ge=0.0, description="Seconds between checks whether a table file changed (0 = never reload)."
    )
    match_policy: Literal["priority", "fay"] = Field(
        "priority",
        description="Rule ranking: 'priority' (priority, match strength, keyword count, sentimentHint, "
        "row) or 'fay' (Fay's: keywords found, longest keyword, priority, row).",
    )
    no_match: Literal["idle", "none"] = Field(
        "idle",
        description="No rule matched: 'idle' publishes the default idle cue; 'none' publishes no cue (Fay "
        "sends no Action).",
    )


LIVE = frozenset({"rules_file", "lexicon_file", "cue_transcripts", "reload_period", "match_policy", "no_match"})
TABLE_PARAMETERS = frozenset({"rules_file", "lexicon_file", "match_policy", "no_match"})


def load_tables(config: ActionSemanticsConfig) -> TableWatcher:
    """The tables the config names, loaded (ConfigError with file:line when one does not load)."""
    rules_path = Path(config.rules_file) if config.rules_file else default_table_path(RULES_FILE)
    lexicon_path = Path(config.lexicon_file) if config.lexicon_file else default_table_path(LEXICON_FILE)
    try:
        return TableWatcher(rules_path, lexicon_path, config.match_policy, config.no_match)
    except TableError as exc:
        raise ConfigError(f"invalid action table:\n{exc}") from None


class ActionSemantics(Node):
    def __init__(self) -> None:
        super().__init__("action_semantics", namespace=topics.DEFAULT_NAMESPACE)
        self.config = declare_config(self, ActionSemanticsConfig, live=LIVE, apply=self._apply_parameters)
        # A live table change replaces it whole (one assignment): a cue is derived from the old
        # tables or from the new ones, never from a mix.
        self.watcher = load_tables(self.config)
        self._log_loaded(self.watcher)
        self.publisher = self.create_publisher(ActionCue, topics.ACTION_CUE, qos.EVENTS)
        self.table_status = StatusPublisher(self, "tables")  # reloads and rejected edits, on /diagnostics
        self.create_subscription(Utterance, topics.REPLY, self._on_reply, qos.EVENTS)
        self._transcripts: Subscription | None = None
        self._set_cue_transcripts(self.config.cue_transcripts)
        self._reload_timer = file_check_timer(self, self.config.reload_period, self._check_tables)

    # -- live parameters -------------------------------------------------------------------
    def _apply_parameters(self, config: ActionSemanticsConfig, changed: frozenset[str]) -> None:
        """A validated change of live parameters (ConfigError refuses it: the old value stays)."""
        if changed & TABLE_PARAMETERS:
            watcher = load_tables(config)
            self.watcher = watcher
            self._log_loaded(watcher)
            self.table_status.publish("info", f"tables loaded: {watcher.describe()}", file=str(watcher.rules_path))
        self.config = config
        if "cue_transcripts" in changed:
            self._set_cue_transcripts(config.cue_transcripts)
        if "reload_period" in changed:
            set_timer_period(self._reload_timer, config.reload_period)

    def _log_loaded(self, watcher: TableWatcher) -> None:
        self.get_logger().info(
            f"tables loaded: {watcher.describe()} (match_policy {self.config.match_policy}, "
            f"no_match {self.config.no_match})"
        )
        for warning in watcher.warnings:
            self.get_logger().warning(warning)

    def _set_cue_transcripts(self, on: bool) -> None:
        if on and self._transcripts is None:
            self._transcripts = self.create_subscription(
                Transcript, topics.SPEECH_FINAL, self._on_transcript, qos.EVENTS
            )
        elif not on and self._transcripts is not None:
            self.destroy_subscription(self._transcripts)
            self._transcripts = None

    # -- inputs ----------------------------------------------------------------------------
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
        if cue is None:  # no rule matched and no_match is "none"
            return
        self.publisher.publish(to_message(cue, header, uid))

    def _check_tables(self) -> None:
        for event in self.watcher.poll():  # a watcher replaced meanwhile is polled once more: harmless
            if event.ok:
                self.get_logger().info(f"{event.path}: {event.message}")
            else:
                self.get_logger().error(f"{event.path}: {event.message}")
            self.table_status.publish(
                "info" if event.ok else "error", f"{event.path}: {event.message}", file=str(event.path)
            )


def to_message(cue: Cue, header, uid: str) -> ActionCue:
    return ActionCue(
        header=header,
        code=cue.code,
        behavior=cue.behavior,
        affect=cue.affect,
        intensity=float(cue.intensity),
        priority=int(cue.priority),
        sentiment=float(cue.sentiment),
        sentiment_hint=float(cue.sentiment_hint),
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
