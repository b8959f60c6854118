"""tts: speaks `reply` sentences as they stream in, with a viseme track per sentence.

Subscribes `reply` (fay_msgs/Utterance) and `interrupt` (std_msgs/Empty); publishes
`visemes` (fay_msgs/VisemeTrack, one per sentence, stamped with the moment its first sample
plays and published before that) and `robot_speaking` (fay_msgs/SpeechState, latched: true
from the first sample, false after the last one has left the speaker). All the work is in
fay_ros.voice (SpeechPipeline); this shell only maps messages and clocks.
"""
from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, Field, field_validator
from rclpy.node import Node
from std_msgs.msg import Empty

from fay_msgs.msg import SpeechState, Utterance, Viseme, VisemeTrack

from ..common import qos, topics
from ..common.node_main import run_node
from ..common.params import ConfigError, declare_config
from ..common.rostime import to_time_msg
from ..voice.engines import create_engine
from ..voice.pipeline import SentenceRequest, SpeechPipeline
from ..voice.playback import open_sink
from ..voice.types import EngineName, VoiceError, VoiceSettings, check_voice_name
from ..voice.visemes import VisemeTrackData


# One reply message is one sentence; 1,000 characters are over a minute of speech. Without a
# bound, one 100 kB message (any client can publish `broadcast`) held the synthesis worker for
# minutes and hundreds of MB.
MAX_SENTENCE_CHARS = 1000
_BREAKS = (".!?。！？", ",;:，；：、", " \t\n")


def bound_text(text: str, limit: int) -> str:
    """`text` if it has at most `limit` characters, else its longest head within the limit
    that ends at a sentence end, else a clause mark, else a space -- when such a head keeps
    at least half the limit -- else exactly `limit` characters."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    for marks in _BREAKS:
        cut = max(head.rfind(m) for m in marks)
        if cut + 1 >= limit // 2:
            return head[:cut + 1].rstrip()
    return head


class TtsConfig(BaseModel):
    engine: EngineName = Field(
        "espeak-ng", description="Synthesis engine: 'espeak-ng' (libespeak-ng with phoneme events: exact visemes) "
                                 "or 'pyttsx3' (pyttsx3 2.99 espeak driver: loudness-driven visemes).")
    english_voice: str = Field("en-us", description="espeak-ng voice for English (Latin-script) text.")
    chinese_voice: str = Field("cmn-latn-pinyin", description="espeak-ng voice for Chinese (Han) text; "
                                                             "never 'cmn', which is broken on Debian 12.")
    default_language: Literal["en", "zh"] = Field("en", description="Language of text without letters (digits).")
    rate_wpm: int = Field(175, ge=80, le=450, description="Speaking rate in words per minute.")
    volume: float = Field(1.0, ge=0.0, le=2.0, description="Loudness; 1.0 is espeak-ng's normal volume.")
    output_device: str = Field("auto", description="'auto' (default output device, headless if none), 'none' "
                                                   "(always headless), or a sounddevice device index or name.")
    wav_dir: str = Field("", description="If set, every spoken sentence is also written there as <utterance>.wav.")
    device_latency: float = Field(0.0, ge=0.0, le=0.5, description="Output latency asked of the sound device in "
                                  "seconds; 0 = the device's low-latency default. Larger values avoid glitches on a "
                                  "busy machine but delay interrupts by as much.")
    block_ms: float = Field(20.0, ge=5.0, le=100.0,
                            description="Audio block length in ms; an interrupt takes effect after at most one "
                                        "block plus the device latency.")
    lookahead: float = Field(0.3, ge=0.05, le=5.0, description="Seconds of audio queued ahead of the speaker; "
                                                               "the next sentence is handed over when less is left.")
    max_sentence_chars: int = Field(MAX_SENTENCE_CHARS, ge=20, le=20000,
                                    description="Longest reply message spoken; a longer one is cut (at a sentence, "
                                                "clause or word boundary when there is one) and a warning logged.")

    @field_validator("english_voice", "chinese_voice")
    @classmethod
    def _usable_voice(cls, value: str) -> str:
        return check_voice_name(value)


class Tts(Node):
    def __init__(self) -> None:
        super().__init__("tts", namespace=topics.DEFAULT_NAMESPACE)
        self.config = cfg = declare_config(self, TtsConfig)
        self._clock_offset: float | None = None
        settings = VoiceSettings(cfg.english_voice, cfg.chinese_voice, cfg.rate_wpm, cfg.volume, cfg.default_language)
        try:
            engine = create_engine(cfg.engine, settings)
            sink = open_sink(cfg.output_device, engine.sample_rate, cfg.block_ms / 1000.0,
                             log=lambda msg: self.get_logger().warn(msg),
                             latency=cfg.device_latency or "low")
        except (VoiceError, RuntimeError) as exc:
            raise ConfigError(str(exc)) from None
        self.visemes_pub = self.create_publisher(VisemeTrack, topics.VISEMES, qos.EVENTS)
        self.speaking_pub = self.create_publisher(SpeechState, topics.ROBOT_SPEAKING, qos.LATCHED)
        self._publish_speaking(False, "", time.monotonic())
        self.pipeline = SpeechPipeline(engine, sink, on_track=self._publish_track, on_speaking=self._publish_speaking,
                                       log=self._log, wav_dir=cfg.wav_dir or None, lookahead=cfg.lookahead)
        self.create_subscription(Utterance, topics.REPLY, self._on_reply, qos.EVENTS)
        self.create_subscription(Empty, topics.INTERRUPT, self._on_interrupt, qos.EVENTS)
        kept = f"every sentence also written to {cfg.wav_dir}" if cfg.wav_dir else "not kept (set wav_dir to keep WAVs)"
        self.get_logger().info(
            f"tts ready: engine {engine.name} (voices {cfg.english_voice}, {cfg.chinese_voice}); "
            f"audio goes to {sink.description}; audio files {kept}")

    # -- ROS -> pipeline ------------------------------------------------------------------
    def _on_reply(self, msg: Utterance) -> None:
        text = bound_text(msg.text, self.config.max_sentence_chars)
        if len(text) < len(msg.text):
            self.get_logger().warning(f"{msg.conversation_id}:{msg.seq}: reply of {len(msg.text)} characters cut to "
                                      f"{len(text)} (max_sentence_chars {self.config.max_sentence_chars})")
        self.pipeline.submit(SentenceRequest(msg.conversation_id, msg.seq, text, msg.is_first, msg.is_end,
                                             msg.replace))

    def _on_interrupt(self, _msg: Empty) -> None:
        self.pipeline.interrupt("interrupt received")

    # -- pipeline -> ROS (called from the pipeline's threads) -----------------------------
    def _ros_time(self, monotonic: float):
        # One offset between the audio (monotonic) clock and ROS time, so the same instant
        # always gets the same stamp (a track and its speaking=true are compared exactly);
        # it is re-measured only if ROS time jumps by more than a millisecond.
        offset = self.get_clock().now().nanoseconds * 1e-9 - time.monotonic()
        if self._clock_offset is None or abs(offset - self._clock_offset) > 1e-3:
            self._clock_offset = offset
        return to_time_msg(monotonic + self._clock_offset)

    def _publishable(self) -> bool:
        # Ctrl-C shuts the context down before close() runs; the final state is then moot.
        return self.context.ok()

    def _publish_track(self, track: VisemeTrackData, start: float) -> None:
        if not self._publishable():
            return
        msg = VisemeTrack(utterance_id=track.utterance_id, duration=float(track.duration))
        msg.header.stamp = self._ros_time(start)
        msg.header.frame_id = "tts"
        msg.frames = [Viseme(id=f.id, name=f.name, start=float(f.start), mouth_open=float(f.mouth_open))
                      for f in track.frames]
        self._publish(self.visemes_pub, msg)

    def _publish_speaking(self, speaking: bool, utterance_id: str, when: float) -> None:
        if not self._publishable():
            return
        msg = SpeechState(speaking=speaking, utterance_id=utterance_id)
        msg.header.stamp = self._ros_time(when)
        msg.header.frame_id = "tts"
        self._publish(self.speaking_pub, msg)

    def _publish(self, publisher, msg) -> None:
        try:
            publisher.publish(msg)
        except Exception:  # noqa: BLE001 - only a shutdown race is tolerated
            if self.context.ok():
                raise

    def _log(self, level: str, message: str) -> None:
        logger = self.get_logger()
        {"debug": logger.debug, "info": logger.info, "warn": logger.warn}.get(level, logger.error)(message)

    def close(self) -> None:
        self.pipeline.close()


def main(args: list[str] | None = None) -> int:
    return run_node(Tts, args)


if __name__ == "__main__":
    raise SystemExit(main())
