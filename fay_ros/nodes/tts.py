"""tts: speaks `reply` sentences as they stream in, with a viseme track per sentence; and
speaks given texts verbatim: the `say` action and the `broadcast` topic.

Subscribes `reply` (fay_msgs/Utterance), `interrupt` (std_msgs/Empty: stop everything),
`reply/cancel` (std_msgs/String: stop the reply of that conversation id only) and `broadcast`
(fay_msgs/Transcript); serves the action `say` (fay_msgs/action/Say); publishes `visemes`
(fay_msgs/VisemeTrack, one per sentence, stamped with the moment its first sample plays and
published before that), `robot_speaking` (fay_msgs/SpeechState, latched: true from the first
sample, false after the last one has left the speaker) and, for what it is asked to say,
`reply` (fay_msgs/Utterance, source "say": action cues, the face's subtitles and memory come
from there). All the work is in fay_ros.voice (SpeechPipeline, say); this shell only maps
messages, goals and clocks.

A lifecycle node (fay_ros.common.lifecycle): configure creates the synthesis engine and opens
the audio output (no such engine, a voice the engine does not have, an output device that
does not open, a wav_dir that cannot be written: the node stays unconfigured and alive and
says why on /diagnostics and `~/ready`; its hardware id is the output's description), cleanup
releases them. Replies, say goals and broadcasts are spoken only while active: a say goal
while inactive ends at once with "rejected: the voice is not active (<why>)", a reply or a
broadcast is dropped. Deactivate stops the audio as an interrupt does (speaking=false).

Live parameters (`ros2 param set`, validated by TtsConfig and, for voices, by the engine,
else refused with the reason): voices, rate, volume and default_language apply from the next
sentence synthesized (the engine swaps its settings between sentences); lookahead and wav_dir
from the next sentence handed over; the text limits and broadcast_mode from the next message.
The engine and the output (engine, output_device, block_ms, device_latency) are read-only.

Say and broadcast are one path (`_start_say`): the text is planned into sentences
(`voice.say.plan_say`), each is published on `reply` (conversation id `say-<8 hex>`, seq
0.., `is_first`/`is_end`, `replace` on the first when it interrupts, the goal's cue on the
first) and submitted straight to the pipeline with the goal's language; the pipeline's
sentence events drive the feedback and the result. An unknown language or a text beyond
`max_say_chars` ends the goal at once with "rejected: <why>" (accepted, so the client gets
the reason), a text with nothing speakable with "nothing speakable".

Holding: while the mic says a person talks over the robot (`audio/talk_over` true, after
`barge_in_hold_ms` of talk-over) the voice holds: silence within one block plus the device
latency, nothing dropped, robot_speaking still true. `audio/talk_over` false (no barge-in
followed: a backchannel, a cough) plays on, after `release_grace_s` in which the asr may still
interrupt for a short stop request ("stop!", 等一下), from the first sample not yet heard, and re-publishes
the viseme tracks with their moved starts; an interrupt stops it as usual; after `hold_max_s`
with neither, it goes on (`hold_on_talk_over` false: never hold).

Barge-in support: with `publish_played` (default) every block the output plays with sound in it
goes out on `audio/played` (fay_msgs/AudioChunk at the engine's rate, header.stamp = when its
first sample plays, on the ROS clock the mic stamps its capture with), but only while someone
subscribes (the mic, for echo cancellation): copied on the audio thread, published from a
worker. With `resume_after_barge_in` (default) an interrupt that comes with the mic's
`audio/barge_in` keeps what it cut; if the person then says nothing that is a turn (no
`speech/final` with words other than a backchannel) and is quiet (`audio/voice_active` false)
for `resume_after_s`, the cut sentence and those queued behind it are spoken again
(fay_ros.turns.resume).

Waiting for the person: a reply about to start from silence waits (up to `wait_for_person_s`)
while the person has talked again since their last turn and that talk's final is due
(`audio/voice_active` rose after their last `speech/final`: they went on after a pause,
fay_ros.turns.talking_again); that final drops it unheard (the dialogue answers all they said).
"""

from __future__ import annotations

import array
import collections
import contextlib
import threading
import time
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field, field_validator
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.task import Future
from std_msgs.msg import Bool, Empty, String

from fay_msgs.action import Say
from fay_msgs.msg import AudioChunk, SpeechState, Transcript, Utterance, Viseme, VisemeTrack

from ..common import qos, reply_sources, topics
from ..common.diagnostics import health
from ..common.ids import split_utterance_id
from ..common.lifecycle import ManagedNode
from ..common.node_main import run_node
from ..common.params import ConfigError, declare_config
from ..common.rostime import from_time_msg, to_time_msg
from ..common.worker import BoundedWorker
from ..turns.resume import ResumeKeeper, ResumeSettings
from ..turns.talking_again import TalkingAgain
from ..turns.voice_hold import HoldSettings, VoiceHold
from ..voice.engine_types import Engine, EngineName, VoiceSettings, check_voice_name
from ..voice.engines import create_engine
from ..voice.pipeline import SentenceEvent, SentenceRequest, SpeechPipeline, check_wav_dir, remember
from ..voice.playback import AudioSink, open_sink
from ..voice.say_verbatim import (
    CANCELLED,
    FAILED,
    MAX_SAY_CHARS,
    MAX_SENTENCE_CHARS,
    SPOKEN,
    SayJob,
    SayOutcome,
    SayProgress,
    bound_text,
    check_say,
    new_say_id,
    plan_say,
    say_language,
)
from ..voice.visemes import VisemeTrackData

# Say conversation ids remembered to recognise our own `reply` messages (see _on_reply).
OWN_SAY_IDS_KEPT = 1024


# The audio clock's offset to ROS time (see Tts._ros_time).
CLOCK_OFFSET_TOLERANCE_S = 1e-3
CLOCK_OFFSET_TRIES = 5


class TtsConfig(BaseModel):
    engine: EngineName = Field(
        "espeak-ng",
        description="Synthesis engine: 'espeak-ng' (libespeak-ng with phoneme events: exact visemes) "
        "or 'pyttsx3' (pyttsx3 2.99 espeak driver: loudness-driven visemes).",
    )
    english_voice: str = Field("en-us", description="espeak-ng voice for English (Latin-script) text.")
    chinese_voice: str = Field(
        "cmn-latn-pinyin",
        description="espeak-ng voice for Chinese (Han) text; never 'cmn', which is broken on Debian 12.",
    )
    default_language: Literal["en", "zh"] = Field("en", description="Language of text without letters (digits).")
    rate_wpm: int = Field(175, ge=80, le=450, description="Speaking rate in words per minute.")
    volume: float = Field(1.0, ge=0.0, le=2.0, description="Loudness; 1.0 is espeak-ng's normal volume.")
    output_device: str = Field(
        "auto",
        description="'auto' (default output device, headless if none), 'none' "
        "(always headless), or a sounddevice device index or name.",
    )
    wav_dir: str = Field("", description="If set, every spoken sentence is also written there as <utterance>.wav.")
    device_latency: float = Field(
        0.0,
        ge=0.0,
        le=0.5,
        description="Output latency asked of the sound device in "
        "seconds; 0 = the device's low-latency default. Larger values avoid glitches on a "
        "busy machine but delay interrupts by as much.",
    )
    block_ms: float = Field(
        20.0,
        ge=5.0,
        le=100.0,
        description="Audio block length in ms; an interrupt takes effect after at most one "
        "block plus the device latency.",
    )
    lookahead: float = Field(
        0.3,
        ge=0.05,
        le=5.0,
        description="Seconds of audio queued ahead of the speaker; the next sentence is handed over when less is left.",
    )
    max_sentence_chars: int = Field(
        MAX_SENTENCE_CHARS,
        ge=20,
        le=20000,
        description="Longest reply message spoken; a longer one is cut (at a sentence, "
        "clause or word boundary when there is one) and a warning logged. "
        "A say/broadcast sentence longer than this is spoken in pieces.",
    )
    max_say_chars: int = Field(
        MAX_SAY_CHARS,
        ge=1,
        le=1_000_000,
        description="Longest text the say action or the broadcast topic speaks; a longer one "
        "is refused (result 'rejected: ...'; a broadcast is logged and dropped).",
    )
    broadcast_mode: Literal["queue", "preempt"] = Field(
        "queue",
        description="What a `broadcast` message does to speech in progress: 'queue' (spoken after it) or "
        "'preempt' (stops it and speaks at once, like a say goal with interrupt=true).",
    )
    publish_played: bool = Field(
        True,
        description="Publish what the output plays on audio/played (the mic's echo "
        "cancellation reference) while it has a subscriber.",
    )
    # The turn-taking defaults live with their logic (turns.resume, turns.voice_hold).
    resume_after_barge_in: bool = Field(
        ResumeSettings.resume,
        description="After a barge-in whose words become no turn (nothing, "
        "or a backchannel), speak the cut sentence again.",
    )
    resume_after_s: float = Field(
        ResumeSettings.resume_after_s,
        ge=0.1,
        le=30.0,
        description="How long the person must be quiet after such a barge-in before the robot resumes.",
    )
    hold_on_talk_over: bool = Field(
        HoldSettings.hold_on_talk_over,
        description="While the mic says a person talks over the robot "
        "(audio/talk_over true), hold the voice, nothing dropped, until it says false "
        "(it goes on where it stopped) or a barge-in interrupts it.",
    )
    hold_max_s: float = Field(
        HoldSettings.hold_max_s,
        ge=0.1,
        le=30.0,
        description="Longest hold with neither a release nor an interrupt; then the voice goes on.",
    )
    wait_for_person_s: float = Field(
        3.0,
        ge=0.0,
        le=30.0,
        description="A reply about to start from silence waits "
        "up to this long while the person talks again after their last turn "
        "(audio/voice_active rose after their last speech/final: they went on after a "
        "pause); the answer to all they said replaces it. 0 = never wait.",
    )
    release_grace_s: float = Field(
        HoldSettings.release_grace_s,
        ge=0.0,
        le=2.0,
        description="After the release (audio/talk_over false), "
        "wait this long before going on: the asr may still find a stop request in "
        'what was said ("stop!", 等一下) and interrupt.',
    )
    sentence_min_chars: int = Field(
        4,
        ge=0,
        le=200,
        description="A say/broadcast sentence shorter than this joins the next one (as the dialogue's replies do).",
    )

    @field_validator("english_voice", "chinese_voice")
    @classmethod
    def _usable_voice(cls, value: str) -> str:
        return check_voice_name(value)

    def voice_settings(self) -> VoiceSettings:
        return VoiceSettings(self.english_voice, self.chinese_voice, self.rate_wpm, self.volume, self.default_language)


# What can change while running (see the module docstring); the engine and the audio output
# are read-only (a new engine or a reopened device: restart the node with the new value).
VOICE_PARAMETERS = frozenset({"english_voice", "chinese_voice", "rate_wpm", "volume", "default_language"})
LIVE_PARAMETERS = VOICE_PARAMETERS | {
    "lookahead",
    "wav_dir",
    "max_sentence_chars",
    "max_say_chars",
    "broadcast_mode",
    "sentence_min_chars",
    "publish_played",
    "resume_after_barge_in",
    "resume_after_s",
    "hold_on_talk_over",
    "hold_max_s",
    "release_grace_s",
    "wait_for_person_s",
}
# Blocks of played audio waiting for the publisher thread (2 s of 20 ms blocks).
PLAYED_QUEUE_BLOCKS = 100
# /diagnostics: who hears the voice (the mic's echo canceller and barge-in gate)
LISTENERS_STATUS = "listeners"


def output_label(cfg: TtsConfig) -> str:
    """The audio output as the health status names it (its hardware id) until it is open."""
    return f"audio output {cfg.output_device!r}"


class Tts(ManagedNode):
    def __init__(self) -> None:
        super().__init__("tts", namespace=topics.DEFAULT_NAMESPACE)
        # The engine and the pipeline exist between configure and cleanup. `_voice_lock` keeps a
        # live change from meeting a half-made or released engine; `_serving_lock` keeps
        # "active? then submit" whole, so nothing is submitted after deactivate's interrupt.
        self._voice_lock = threading.Lock()
        self._serving_lock = threading.RLock()
        self.engine: Engine | None = None
        self.pipeline: SpeechPipeline | None = None
        self.config = cfg = declare_config(self, TtsConfig, live=LIVE_PARAMETERS, apply=self._apply_live)
        self._clock_offset: float | None = None
        health(self).hardware_id = output_label(cfg)
        self.visemes_pub = self.create_publisher(VisemeTrack, topics.VISEMES, qos.EVENTS)
        self.speaking_pub = self.create_publisher(SpeechState, topics.ROBOT_SPEAKING, qos.LATCHED)
        self.reply_pub = self.create_publisher(Utterance, topics.REPLY, qos.EVENTS)
        self.played_pub = self.create_publisher(AudioChunk, topics.AUDIO_PLAYED, qos.AUDIO)
        self._played_worker: BoundedWorker[tuple[np.ndarray, float, int]] = BoundedWorker(
            self._publish_played, PLAYED_QUEUE_BLOCKS, "tts-played"
        )
        self._played_worker.start()
        health(self).add(LISTENERS_STATUS, self._listeners_health)
        self._publish_speaking(False, "", time.monotonic())
        self._resume_lock = threading.Lock()
        self._resume: ResumeKeeper[SentenceRequest] = ResumeKeeper(self._resume_settings(cfg))
        self._talking_again = TalkingAgain()  # (under _resume_lock)
        self._told_waiting = False  # ... what the pipeline was last told
        # Say jobs by conversation id (for the pipeline's sentence events), say goals by goal
        # id (for cancel), cancels that came before their goal started, our own say ids.
        self._say_lock = threading.Lock()
        self._jobs: dict[str, SayJob] = {}
        self._goal_jobs: dict[bytes, SayJob] = {}
        self._early_cancels: set[bytes] = set()
        self._own_say_ids: collections.OrderedDict[str, None] = collections.OrderedDict()
        # When the dialogue produced each answer's first sentence (ROS time), by conversation id
        self._answered_at: collections.OrderedDict[str, float] = collections.OrderedDict()
        self.create_subscription(Utterance, topics.REPLY, self._on_reply, qos.EVENTS)
        self.create_subscription(Empty, topics.INTERRUPT, self._on_interrupt, qos.EVENTS)
        self.create_subscription(String, topics.REPLY_CANCEL, self._on_reply_cancel, qos.EVENTS)
        self.create_subscription(Transcript, topics.BROADCAST, self._on_broadcast, qos.EVENTS)
        self.create_subscription(Empty, topics.BARGE_IN, self._on_barge_in, qos.EVENTS)
        self.create_subscription(Bool, topics.VOICE_ACTIVE, self._on_voice_active, qos.LATCHED)
        self.create_subscription(Transcript, topics.SPEECH_FINAL, self._on_final, qos.EVENTS)
        self.create_subscription(Bool, topics.TALK_OVER, self._on_talk_over, qos.EVENTS)
        self._hold = VoiceHold(self._hold_settings(cfg))  # (fay_ros.turns.voice_hold; monotonic time)
        self.create_timer(0.05, self._resume_if_due)
        # Goals run concurrently (each waits for its own sentences, never blocking a thread).
        # Served in every state: a goal while inactive ends with the reason.
        self.say_server = ActionServer(
            self,
            Say,
            topics.ACTION_SAY,
            execute_callback=self._execute_say,
            goal_callback=lambda _goal: GoalResponse.ACCEPT,
            cancel_callback=self._cancel_say,
            callback_group=ReentrantCallbackGroup(),
        )

    # -- lifecycle ---------------------------------------------------------------------------
    def configure_node(self) -> None:
        with self._voice_lock:
            cfg = self.config  # (live changes wait for the lock: this is the latest)
            health(self).hardware_id = output_label(cfg)
            try:
                wav_dir = check_wav_dir(cfg.wav_dir)
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
            engine = create_engine(cfg.engine, cfg.voice_settings())  # VoiceError is a ConfigError
            sink: AudioSink | None = None
            try:
                sink = open_sink(
                    cfg.output_device,
                    engine.sample_rate,
                    cfg.block_ms / 1000.0,
                    log=lambda msg: self.get_logger().warn(msg),
                    latency=cfg.device_latency or "low",
                )
                pipeline = SpeechPipeline(
                    engine,
                    sink,
                    on_track=self._publish_track,
                    on_speaking=self._publish_speaking,
                    log=self._log,
                    wav_dir=wav_dir,
                    lookahead=cfg.lookahead,
                    on_sentence=self._on_sentence,
                    on_played=self._on_played,
                )
                pipeline.wait_for_person_s = cfg.wait_for_person_s
                with self._resume_lock:
                    self._told_waiting = self._talking_again.waiting(time.monotonic())
                    pipeline.set_person_talking(self._told_waiting)
            except Exception as exc:  # noqa: BLE001 - PortAudio raises several types for "cannot open"/"start"
                if sink is not None:
                    with contextlib.suppress(Exception):  # the first failure is the news
                        sink.close()
                engine.close()
                raise ConfigError(str(exc)) from None
            self.engine, self.pipeline = engine, pipeline
            health(self).hardware_id = sink.description
        kept = f"every sentence also written to {wav_dir}" if wav_dir else "not kept (set wav_dir to keep WAVs)"
        self.get_logger().info(
            f"tts configured: engine {engine.name} (voices {cfg.english_voice}, {cfg.chinese_voice}); "
            f"audio goes to {sink.description}; audio files {kept}"
        )

    def deactivate_node(self) -> None:
        # `active` is false already: nothing new is submitted once the lock is ours.
        with self._serving_lock:
            pipeline = self.pipeline
        if pipeline is not None:
            pipeline.interrupt("deactivated")  # speaking=false when the audio has stopped

    def cleanup_node(self) -> None:
        with self._voice_lock:
            engine, pipeline = self.engine, self.pipeline
            self.engine = self.pipeline = None
            health(self).hardware_id = output_label(self.config)
        if pipeline is not None:
            pipeline.close()  # stops the audio, closes the output; what was queued ends "dropped"
        if engine is not None:
            engine.close()

    # -- live parameters -----------------------------------------------------------------------
    def _apply_live(self, cfg: TtsConfig, changed: frozenset[str]) -> None:
        """Validated by TtsConfig already; here what only the engine and the disk can refuse
        (a voice it does not have, a wav_dir that cannot be written), then in use from the
        next sentence. Nothing is changed when any of it is refused."""
        with self._voice_lock:
            wav_dir = check_wav_dir(cfg.wav_dir) if "wav_dir" in changed else None
            engine, pipeline = self.engine, self.pipeline
            # Unconfigured: the voices are checked by the next configure.
            if engine is not None and changed & VOICE_PARAMETERS:
                engine.use_settings(cfg.voice_settings())  # raises VoiceError (refused) first
            if pipeline is not None:
                pipeline.lookahead = cfg.lookahead
                pipeline.wait_for_person_s = cfg.wait_for_person_s
                if "wav_dir" in changed:
                    pipeline.wav_dir = wav_dir
            self.config = cfg
        with self._resume_lock:
            self._resume.settings = self._resume_settings(cfg)
        self._hold.settings = self._hold_settings(cfg)
        if changed:
            when = "from the next sentence" if engine is not None else "when configured"
            self.get_logger().info(f"live parameters changed: {', '.join(sorted(changed))} ({when})")

    # -- ROS -> pipeline ------------------------------------------------------------------
    def _on_reply(self, msg: Utterance) -> None:
        # Our own say sentences come back here (a node receives its own publications). They
        # were already submitted to the pipeline directly -- with the goal's language, which an
        # Utterance cannot carry, and registered for the goal's feedback before any of them can
        # start -- so they are skipped by the conversation ids this node generated. Routing them
        # only through this subscription would lose the language and make the action depend on
        # DDS delivering a node's messages to itself.
        with self._say_lock:
            if msg.conversation_id in self._own_say_ids:
                return
        produced = from_time_msg(msg.header.stamp)
        # (answers to the person only; a stamp of 0: a sender that stamps nothing, not known)
        if msg.source not in reply_sources.UNPROMPTED and produced > 0.0:
            with self._say_lock:
                if msg.conversation_id not in self._answered_at:  # (its first sentence's)
                    remember(self._answered_at, msg.conversation_id, produced, OWN_SAY_IDS_KEPT)
        with self._resume_lock:
            if self._resume.pending and msg.conversation_id not in self._resume.kept_keys(_conversation):
                self._resume.forget()  # a new reply took the turn
        limit = self.config.max_sentence_chars
        text = bound_text(msg.text, limit)
        if len(text) < len(msg.text):
            self.get_logger().warning(
                f"{msg.conversation_id}:{msg.seq}: reply of {len(msg.text)} characters cut to "
                f"{len(text)} (max_sentence_chars {limit})"
            )
        with self._serving_lock:
            pipeline = self.pipeline
            if not self.active or pipeline is None:
                self.get_logger().info(
                    f"{msg.conversation_id}:{msg.seq}: not spoken: the voice is not active ({self.not_ready_reason})",
                    throttle_duration_sec=5.0,
                )
                return
            pipeline.submit(SentenceRequest(msg.conversation_id, msg.seq, text, msg.is_first, msg.is_end, msg.replace))

    def _on_interrupt(self, _msg: Empty) -> None:
        pipeline = self.pipeline
        self._hold.interrupted()  # the stop ends a hold too
        if pipeline is not None:
            pipeline.interrupt("interrupt received")
            with self._resume_lock:
                self._resume.interrupted(pipeline.interrupted, time.monotonic())

    def _on_reply_cancel(self, msg: String) -> None:
        """One reply stops (its `chat` goal was cancelled): its queued sentences and any still
        to come are dropped, its audio cut if it plays; other replies keep their place."""
        conversation = msg.data.strip()
        pipeline = self.pipeline
        if not conversation or pipeline is None:
            return
        pipeline.cancel(conversation, "reply cancelled:")

    # -- resuming after a false interruption (fay_ros.turns.resume) ----------------------------
    @staticmethod
    def _resume_settings(cfg: TtsConfig) -> ResumeSettings:
        return ResumeSettings(resume=cfg.resume_after_barge_in, resume_after_s=cfg.resume_after_s)

    def _on_barge_in(self, _msg: Empty) -> None:
        with self._resume_lock:
            self._resume.barge_in(time.monotonic())

    def _on_voice_active(self, msg: Bool) -> None:
        with self._resume_lock:
            self._resume.voice(bool(msg.data), time.monotonic())
            self._talking_again.voice(bool(msg.data), time.monotonic())
            self._person_talking()

    def _person_talking(self) -> None:
        """Tell the pipeline whether the person's talk since their last turn is still due (under
        _resume_lock)."""
        pipeline = self.pipeline
        waiting = self._talking_again.waiting(time.monotonic())
        if pipeline is not None and waiting != self._told_waiting:
            self._told_waiting = waiting
            pipeline.set_person_talking(waiting)

    def _on_final(self, msg: Transcript) -> None:
        pipeline = self.pipeline
        with self._resume_lock:
            went_on = self._talking_again.waiting(time.monotonic())
        stamp = from_time_msg(msg.header.stamp)
        if pipeline is not None:
            self._drop_answers_to_what_came_before(pipeline, went_on, stamp)
        # how far behind the speech the recogniser runs (its final's stamp is the speech's end;
        # an unstamped final tells nothing)
        behind = self.get_clock().now().nanoseconds * 1e-9 - stamp if stamp > 0 else None
        with self._resume_lock:
            self._talking_again.final(time.monotonic(), behind)
            self._person_talking()
            pending = self._resume.pending
            turn = self._resume.heard(msg.text)
        if pending:
            self.get_logger().info(
                "after the barge-in: "
                + ("a turn; the cut reply is not resumed" if turn else f"only {msg.text!r}; still resuming")
            )

    def _drop_answers_to_what_came_before(self, pipeline: SpeechPipeline, went_on: bool, speech_end: float) -> None:
        """The person's final came: an answer not heard yet that answers only what they said
        before they went on is dropped (the dialogue answers all of it now; a say is still said:
        nobody asked the dialogue for it). That is the answer waiting for them at the start, and
        when this final ends their talk after a turn, every answer (not an unprompted line) the
        dialogue produced before their speech ended that has no sentence in the player yet
        (still queued or being synthesised: a slow synthesis let it reach the start after the
        final had come). An answer produced after their speech ended may be the answer to this
        very final (DDS does not order it after the final), so only the waiting one of those is
        dropped."""
        waiting = pipeline.waiting_for_person
        unstarted = pipeline.unstarted_replies() if went_on else []
        with self._say_lock:
            earlier = [reply for reply in unstarted if self._answered_at.get(reply, speech_end) < speech_end]
            if waiting and waiting not in earlier:
                earlier.append(waiting)
            earlier = [reply for reply in earlier if reply not in self._own_say_ids]
        for reply in earlier:
            pipeline.cancel(
                reply, "the person went on after a pause: an answer to what they said before, not heard yet"
            )

    # -- holding the voice while a person talks over it (fay_ros.turns.voice_hold) ------------
    @staticmethod
    def _hold_settings(cfg: TtsConfig) -> HoldSettings:
        return HoldSettings(
            hold_on_talk_over=cfg.hold_on_talk_over, release_grace_s=cfg.release_grace_s, hold_max_s=cfg.hold_max_s
        )

    def _on_talk_over(self, msg: Bool) -> None:
        pipeline = self.pipeline
        if not self.active or pipeline is None:
            return
        now = time.monotonic()
        if self._hold.talk_over(bool(msg.data), now) and pipeline.hold() is not None:  # (None: held, or silent)
            self._hold.held(now)
            self.get_logger().info("talk-over: the voice holds")

    def _resume_if_due(self) -> None:
        with self._resume_lock:
            self._person_talking()  # (a talk whose final never came stops counting)
        pipeline = self.pipeline
        go_on = self._hold.due(time.monotonic()) if pipeline is not None else None
        if go_on is not None and pipeline is not None and pipeline.release() is not None:
            self.get_logger().info(f"{go_on.why}: the voice goes on after {go_on.held_s * 1000:.0f} ms")
        with self._resume_lock:
            due = self._resume.due(time.monotonic())
        if not due:
            return
        with self._serving_lock:
            pipeline = self.pipeline
            if not self.active or pipeline is None:
                return
            self.get_logger().info(
                f"false interruption (no turn followed): resuming {due[0].utterance_id} ({len(due)} sentence(s))"
            )
            pipeline.resume(due)

    def _on_broadcast(self, msg: Transcript) -> None:
        """Fire-and-forget say: queued or preempting as `broadcast_mode` says."""
        try:
            language = say_language(msg.language)
        except ValueError as exc:
            self.get_logger().warning(f"broadcast: {exc}; spoken with default_language")
            language = None
        try:
            self._start_say(
                msg.text,
                language or "",
                msg.user_id,
                self.config.broadcast_mode == "preempt",
                None,
                on_done=self._log_broadcast,
            )
        except Exception as exc:  # noqa: BLE001 - one bad message must not stop the voice
            self.get_logger().error(f"broadcast not spoken: {type(exc).__name__}: {exc}")

    def _log_broadcast(self, outcome: SayOutcome) -> None:
        self.get_logger().info(
            f"broadcast {outcome.conversation_id or '(not started)'}: {outcome.reason}, "
            f"{outcome.sentences_spoken} of {outcome.sentences} sentence(s) spoken"
        )

    # -- say: one path for the action and the broadcast topic --------------------------------
    def _start_say(
        self,
        text: str,
        language: str,
        user_id: str,
        interrupt: bool,
        cue,
        on_done,
        on_progress=lambda _p: None,
        goal: bytes | None = None,
    ) -> None:
        """Publish and speak `text`; `on_done(SayOutcome)` runs once when it has ended (at
        once when it is refused, cancelled before it started or has nothing speakable).
        `goal`: the say goal's id, registered for _cancel_say under the same lock that checks
        for a cancel that came first (so none is lost in between)."""
        with self._serving_lock:  # (see __init__: not half-submitted across a deactivate)
            pipeline = self.pipeline
            if not self.active or pipeline is None:
                self.get_logger().warning(f"say refused: the voice is not active ({self.not_ready_reason})")
                on_done(SayJob.finished("", f"rejected: the voice is not active ({self.not_ready_reason})"))
                return
            self._submit_say(pipeline, text, language, user_id, interrupt, cue, on_done, on_progress, goal)

    def _submit_say(
        self,
        pipeline: SpeechPipeline,
        text: str,
        language: str,
        user_id: str,
        interrupt: bool,
        cue,
        on_done,
        on_progress,
        goal: bytes | None,
    ) -> None:
        cfg = self.config  # one message, one configuration (live changes swap it whole)
        why = check_say(text, language, cfg.max_say_chars)
        if why is not None:
            self.get_logger().warning(f"say refused: {why}")
            on_done(SayJob.finished("", f"rejected: {why}"))
            return
        plan = plan_say(text, max_sentence_chars=cfg.max_sentence_chars, min_chars=cfg.sentence_min_chars)
        conversation_id = new_say_id()
        if plan.dropped:
            self.get_logger().info(f"{conversation_id}: not spoken: {plan.dropped.summary()}")
        with self._resume_lock:
            self._resume.forget()  # something new to say: the cut reply is not resumed
        job = SayJob(
            conversation_id,
            plan.sentences,
            on_progress=on_progress,
            on_done=lambda outcome: self._say_ended(job, outcome, on_done),
        )
        with self._say_lock:
            if goal is not None:
                if goal in self._early_cancels:
                    self._early_cancels.discard(goal)
                    on_done(SayJob.finished("", CANCELLED))
                    return
                self._goal_jobs[goal] = job
            self._jobs[conversation_id] = job
            remember(self._own_say_ids, conversation_id, limit=OWN_SAY_IDS_KEPT)
        job.start()
        language_of = say_language(language)
        last = len(plan.sentences) - 1
        for seq, sentence in enumerate(plan.sentences):
            first = seq == 0
            msg = Utterance(
                user_id=user_id,
                conversation_id=conversation_id,
                seq=seq,
                text=sentence,
                is_first=first,
                is_end=seq == last,
                replace=interrupt and first,
                source="say",
            )
            msg.header.stamp = self.get_clock().now().to_msg()
            msg.header.frame_id = "tts"
            if first and cue:
                msg.cue = [cue[0]]
            self._publish(self.reply_pub, msg)
            pipeline.submit(
                SentenceRequest(
                    conversation_id, seq, sentence, first, seq == last, interrupt and first, language=language_of
                )
            )
        self.get_logger().info(
            f"{conversation_id}: saying {len(plan.sentences)} sentence(s)" + (", interrupting" if interrupt else "")
        )

    def _say_ended(self, job: SayJob, outcome: SayOutcome, on_done) -> None:
        with self._say_lock:
            self._jobs.pop(job.conversation_id, None)
        on_done(outcome)

    def _on_sentence(self, event: SentenceEvent) -> None:
        conversation_id, seq = split_utterance_id(event.utterance_id)
        with self._say_lock:
            job = self._jobs.get(conversation_id)
        if job is not None and seq is not None:
            job.on_event(seq, event)

    # -- the say action -----------------------------------------------------------------------
    async def _execute_say(self, goal_handle) -> Say.Result:
        goal = goal_handle.request
        key = bytes(goal_handle.goal_id.uuid)
        finished: Future = Future()

        def done(outcome: SayOutcome) -> None:
            # Called from a pipeline thread: completing the future through the executor wakes
            # it, so this coroutine resumes (a future set from another thread alone does not).
            self._in_executor(finished.set_result, outcome)

        def progress(p: SayProgress) -> None:
            if goal_handle.is_active:
                goal_handle.publish_feedback(
                    Say.Feedback(
                        sentence_index=p.index, sentence_count=p.count, sentence=p.sentence, progress=p.progress
                    )
                )

        try:
            self._start_say(
                goal.text, goal.language, goal.user_id, goal.interrupt, list(goal.cue), done, progress, goal=key
            )
        except Exception as exc:  # noqa: BLE001 - the goal fails, the node goes on
            self.get_logger().error(f"say goal not spoken: {type(exc).__name__}: {exc}")
            finished.set_result(SayJob.finished("", FAILED))
        try:
            outcome: SayOutcome = await finished
        finally:
            with self._say_lock:
                self._goal_jobs.pop(key, None)
        if outcome.reason == SPOKEN:
            goal_handle.succeed()
        elif outcome.reason == CANCELLED and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:
            goal_handle.abort()
        self.get_logger().info(
            f"say goal {outcome.conversation_id or '(not started)'}: {outcome.reason}, "
            f"{outcome.sentences_spoken} of {outcome.sentences} sentence(s) spoken"
        )
        return Say.Result(
            spoken=outcome.spoken,
            reason=outcome.reason,
            conversation_id=outcome.conversation_id,
            sentences=outcome.sentences,
            sentences_spoken=outcome.sentences_spoken,
        )

    def _cancel_say(self, goal_handle) -> CancelResponse:
        key = bytes(goal_handle.goal_id.uuid)
        with self._say_lock:
            job = self._goal_jobs.get(key)
            if job is None:
                # Not started yet (_start_say sees it), or over already (then it is forgotten
                # with the oldest: a bounded set).
                if len(self._early_cancels) >= OWN_SAY_IDS_KEPT:
                    self._early_cancels.clear()
                self._early_cancels.add(key)
        pipeline = self.pipeline
        if job is not None and job.cancel() and pipeline is not None:
            pipeline.cancel(job.conversation_id, "say goal cancelled:")
        return CancelResponse.ACCEPT

    def _in_executor(self, function, *args) -> None:
        executor = self.executor
        if executor is not None:
            executor.create_task(function, *args)
        else:  # shutting down: nobody spins to resume the waiter
            function(*args)

    # -- pipeline -> ROS (called from the pipeline's threads) -----------------------------
    def _ros_time(self, monotonic: float):
        # One offset between the audio (monotonic) clock and ROS time, so the same instant
        # always gets the same stamp (a track and its speaking=true are compared exactly);
        # it is re-measured only if ROS time jumps by more than a millisecond. A measurement
        # the OS interrupted between the two clock reads is no jump: on a loaded machine one
        # was 0.32 s off, and a sentence's track and its speaking=true got different stamps.
        offset, uncertainty = self._clock_offset_now()
        if self._clock_offset is None or (
            uncertainty < CLOCK_OFFSET_TOLERANCE_S
            and abs(offset - self._clock_offset) > CLOCK_OFFSET_TOLERANCE_S + uncertainty
        ):
            self._clock_offset = offset
        return to_time_msg(monotonic + self._clock_offset)

    def _clock_offset_now(self) -> tuple[float, float]:
        """ROS time minus the monotonic clock, and how uncertain that is (the time the ROS
        clock read took): the tightest of a few tries."""
        best = (0.0, float("inf"))
        for _ in range(CLOCK_OFFSET_TRIES):
            before = time.monotonic()
            ros = self.get_clock().now().nanoseconds * 1e-9
            after = time.monotonic()
            if after - before < best[1]:
                best = (ros - (before + after) / 2, after - before)
            if best[1] < CLOCK_OFFSET_TOLERANCE_S / 10:
                break
        return best

    def _publishable(self) -> bool:
        # Ctrl-C shuts the context down before close() runs; the final state is then moot.
        return self.context.ok()

    def _publish_track(self, track: VisemeTrackData, start: float) -> None:
        if not self._publishable():
            return
        msg = VisemeTrack(utterance_id=track.utterance_id, duration=float(track.duration))
        msg.header.stamp = self._ros_time(start)
        msg.header.frame_id = "tts"
        msg.frames = [
            Viseme(id=f.id, name=f.name, start=float(f.start), mouth_open=float(f.mouth_open)) for f in track.frames
        ]
        self._publish(self.visemes_pub, msg)

    def _on_played(self, block: np.ndarray, play_time: float) -> None:
        """On the audio thread: only a copy and a queue put (see fay_ros.voice.playback)."""
        engine = self.engine
        if self.config.publish_played and engine is not None:
            self._played_worker.put((block.copy(), play_time, engine.sample_rate))

    def _listeners_health(self) -> tuple[str, str, dict[str, str]]:
        """Who hears the voice: a mic's echo canceller takes it out of what the mic captures by
        audio/played (published only while someone subscribes), its barge-in gate listens to
        robot_speaking."""
        played, speaking = self.played_pub.get_subscription_count(), self.speaking_pub.get_subscription_count()
        return (
            "ok",
            f"audio/played to {played} subscriber(s), robot_speaking to {speaking}",
            {"audio/played subscribers": str(played), "robot_speaking subscribers": str(speaking)},
        )

    def _publish_played(self, item: tuple[np.ndarray, float, int]) -> None:
        samples, play_time, rate = item
        if not self._publishable() or self.played_pub.get_subscription_count() == 0:
            return
        msg = AudioChunk(sample_rate=rate, channels=1)
        msg.header.stamp = self._ros_time(play_time)
        msg.header.frame_id = "tts"
        msg.data = array.array("h", samples.astype("<i2").tobytes())
        self._publish(self.played_pub, msg)

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


def _conversation(request: SentenceRequest) -> str:
    return request.conversation_id


def main(args: list[str] | None = None) -> int:
    return run_node(Tts, args)


if __name__ == "__main__":
    raise SystemExit(main())
