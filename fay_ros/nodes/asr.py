"""asr: turns audio/raw into speech/partial and speech/final (fay_msgs/Transcript).

Backends behind one interface: `whisper` (default; faster-whisper with the Whisper base
model shipped in a registry package, fully offline) and `vosk` (a vosk model directory).
The node cuts utterances with its own VAD on the audio it receives (sample-exact, no
dependence on the ordering of two topics), decodes on a worker thread, and applies the
wake-word mode before publishing a final.

Topics: audio/raw (AudioChunk, in), robot_speaking (SpeechState, latched, in: the end of the
robot's turn extends an open wake window), speech/partial and speech/final (Transcript, out).
"""
from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, Field, model_validator
from rclpy.node import Node

from fay_msgs.msg import AudioChunk, SpeechState, Transcript, WordTiming

from ..common import qos, topics
from ..common.node_main import run_node
from ..common.params import ConfigError, declare_config
from ..common.rostime import from_time_msg, to_time_msg
from ..common.wav import AudioFormatError
from ..common.worker import BoundedWorker
from ..hearing.asr_core import AsrCore, TranscriptEvent
from ..hearing.models import ModelError
from ..hearing.recognizer import create_recognizer
from ..hearing.vad import VadSettings
from ..hearing.wake import WakeWordGate

# A minute of the mic's 30 ms chunks: far more than a decode takes (speech waits while the
# recogniser works); a recogniser further behind than that loses the oldest audio.
ASR_QUEUE_CHUNKS = 2000


class AsrConfig(BaseModel):
    backend: Literal["whisper", "vosk"] = Field("whisper", description="Recogniser: 'whisper' (offline default) "
                                                                       "or 'vosk' (needs a vosk model).")
    model: str = Field("", description="Model directory, or a name under models/ (see models/README.md). "
                                       "'' = the packaged Whisper base model (whisper backend).")
    language: str = Field("auto", description="Language code of the speech ('en', 'zh', ...) or 'auto'.")
    auto_languages: list[str] = Field(["en", "zh"], description="With language 'auto' (whisper): the languages "
                                                                "to choose from.")
    user_id: str = Field("user", description="Speaker id written into every Transcript ('' = unidentified guest).")
    wake_mode: Literal["always", "prefix", "window"] = Field(
        "always", description="'always' = forward every utterance; 'prefix' = only utterances starting with a "
                              "wake word (removed); 'window' = a wake word opens an awake window.")
    wake_words: list[str] = Field(["fay", "faye", "hey fay", "菲菲"], description="Wake words (case and "
                                                                                 "punctuation ignored).")
    awake_window_s: float = Field(20.0, gt=0.0, description="Window mode: seconds awake after the wake word, "
                                                            "the last forwarded utterance or the robot's reply.")
    vad_aggressiveness: int = Field(2, ge=0, le=3, description="WebRTC VAD mode for utterance cutting.")
    vad_start_ms: int = Field(150, gt=0, description="Voiced time that starts an utterance.")
    early_endpoint_ms: int = Field(250, ge=0, description="Silence after which the recogniser decodes early and "
                                                          "ends the utterance if the text ends a sentence (0 = off).")
    early_decode_ms: int = Field(90, ge=0, description="Silence after which a speculative decode starts, so it "
                                                       "overlaps the wait for early_endpoint_ms.")
    endpoint_ms: int = Field(700, gt=0, description="Silence that always ends an utterance.")
    vad_min_level_dbfs: float = Field(-50.0, le=0.0, description="Frames quieter than this are never speech.")
    preroll_ms: int = Field(300, ge=0, description="Audio kept from before the detected start of speech.")
    max_utterance_s: float = Field(20.0, gt=0.5, le=30.0, description="Longest utterance before it is cut.")
    cpu_threads: int = Field(2, ge=1, le=16, description="Whisper: CPU threads for inference.")
    compute_type: str = Field("int8", description="Whisper: CTranslate2 compute type (int8, float32, ...).")
    beam_size: int = Field(1, ge=1, le=10, description="Whisper: beam size (1 = greedy, fastest).")
    word_timestamps: bool = Field(True, description="Whisper: word timings on finals.")
    initial_prompt: str = Field("", description="Whisper: text that primes vocabulary/style ('' = none).")
    chinese_script: Literal["simplified", "traditional", "as_is"] = Field(
        "simplified", description="Whisper: script of Chinese output.")
    partial_interval_s: float = Field(0.0, ge=0.0, description="Whisper: re-decode for a partial every N seconds "
                                                               "of speech (0 = finals only).")

    @model_validator(mode="after")
    def _check(self) -> "AsrConfig":
        if self.language != "auto" and not self.language.isalpha():
            raise ValueError(f"language must be a code like 'en' or 'zh', or 'auto' (got {self.language!r})")
        if self.early_endpoint_ms and self.early_endpoint_ms >= self.endpoint_ms:
            raise ValueError(f"early_endpoint_ms ({self.early_endpoint_ms}) must be below endpoint_ms "
                             f"({self.endpoint_ms}), or 0 to turn it off")
        if self.wake_mode != "always" and not any(w.strip() for w in self.wake_words):
            raise ValueError(f"wake_mode {self.wake_mode!r} needs at least one wake word")
        return self

    def vad_settings(self) -> VadSettings:
        return VadSettings(aggressiveness=self.vad_aggressiveness, start_ms=self.vad_start_ms,
                           start_window_ms=max(300, self.vad_start_ms), stop_ms=self.endpoint_ms,
                           min_level_dbfs=self.vad_min_level_dbfs)


class Asr(Node):
    def __init__(self) -> None:
        super().__init__("asr", namespace=topics.DEFAULT_NAMESPACE)
        self.config = cfg = declare_config(self, AsrConfig)
        options = {}
        if cfg.backend == "whisper":
            options = dict(auto_languages=tuple(cfg.auto_languages), compute_type=cfg.compute_type,
                           cpu_threads=cfg.cpu_threads, beam_size=cfg.beam_size, word_timestamps=cfg.word_timestamps,
                           initial_prompt=cfg.initial_prompt, chinese_script=cfg.chinese_script,
                           partial_interval_s=cfg.partial_interval_s)
        try:
            recognizer = create_recognizer(cfg.backend, cfg.model, cfg.language, **options)
            wake = WakeWordGate(cfg.wake_mode, cfg.wake_words, cfg.awake_window_s)
            self.core = AsrCore(recognizer, cfg.vad_settings(), wake, cfg.preroll_ms, cfg.max_utterance_s,
                                early_endpoint_ms=cfg.early_endpoint_ms, early_decode_ms=cfg.early_decode_ms)
        except (ModelError, ValueError) as exc:
            raise ConfigError(str(exc)) from None
        self.partial_pub = self.create_publisher(Transcript, topics.SPEECH_PARTIAL, qos.EVENTS)
        self.final_pub = self.create_publisher(Transcript, topics.SPEECH_FINAL, qos.EVENTS)
        self.create_subscription(AudioChunk, topics.AUDIO_RAW, self._on_audio, qos.AUDIO)
        self.create_subscription(SpeechState, topics.ROBOT_SPEAKING, self._on_robot_speaking, qos.LATCHED)
        self._dropped = 0     # chunks that could not be decoded (logged, throttled)
        self._worker: BoundedWorker[tuple] = BoundedWorker(
            self._work, ASR_QUEUE_CHUNKS, "asr-worker", on_drop=self._on_queue_full, on_error=self._on_error)
        self._worker.start()
        model_dir = getattr(recognizer, "model_dir", cfg.model)
        self.get_logger().info(f"asr ready: backend={cfg.backend}, model={model_dir}, language={cfg.language}, "
                               f"wake_mode={cfg.wake_mode}")

    def _on_audio(self, msg: AudioChunk) -> None:
        self._worker.put(("audio", msg))

    def _on_robot_speaking(self, msg: SpeechState) -> None:
        if not msg.speaking:
            # Never dropped: it extends an open wake window.
            self._worker.put(("robot_done", self.get_clock().now().nanoseconds * 1e-9), droppable=False)

    def _on_queue_full(self, total: int) -> None:
        self.get_logger().warning(f"asr worker is behind: dropped the oldest audio chunk ({total} dropped so far)",
                                  throttle_duration_sec=5.0)

    def _work(self, item: tuple) -> None:
        # Nothing that arrives on audio/raw may end the worker thread (the node would stay up
        # and never transcribe again): BoundedWorker hands any exception to _on_error.
        kind, payload = item
        if kind == "robot_done":
            self.core.robot_finished_speaking(payload)
            return
        msg: AudioChunk = payload
        t0 = time.perf_counter()
        try:
            events = self.core.feed(msg.data, msg.sample_rate, from_time_msg(msg.header.stamp), msg.channels)
        except AudioFormatError as exc:
            self._dropped += 1
            self.get_logger().warning(f"dropped a malformed audio chunk from {msg.header.frame_id or '?'}: "
                                      f"{exc} ({self._dropped} dropped so far)", throttle_duration_sec=5.0)
            return
        for ev in events:
            self._publish(ev, time.perf_counter() - t0)

    def _on_error(self, item: tuple, exc: Exception) -> None:
        """A recogniser failure costs one chunk, not the node."""
        kind, payload = item
        what = f"a chunk from {payload.header.frame_id or '?'}" if kind == "audio" else "the end of the robot's turn"
        self._dropped += 1
        self.get_logger().error(f"recognition failed on {what}: {type(exc).__name__}: {exc}; "
                                f"dropped ({self._dropped} so far)", throttle_duration_sec=5.0)

    def _publish(self, ev: TranscriptEvent, decode_s: float) -> None:
        msg = Transcript(user_id=self.config.user_id, text=ev.text, is_final=ev.is_final,
                         confidence=float(min(max(ev.confidence, 0.0), 1.0)), language=ev.language)
        msg.header.stamp = to_time_msg(ev.end_time)
        msg.header.frame_id = "asr"
        msg.words = [WordTiming(word=w.word, start=float(w.start), end=float(w.end),
                                confidence=float(min(max(w.confidence, 0.0), 1.0))) for w in ev.words]
        (self.final_pub if ev.is_final else self.partial_pub).publish(msg)
        if ev.is_final:
            self.get_logger().info(f"final ({ev.language or '?'}, {len(ev.text)} chars, {len(ev.words)} words, "
                                   f"decoded in {decode_s * 1000:.0f} ms)")
            self.get_logger().debug(f"final text: {ev.text}")

    def close(self) -> None:
        self._worker.stop(5)


def main(args: list[str] | None = None) -> int:
    return run_node(Asr, args)


if __name__ == "__main__":
    raise SystemExit(main())
