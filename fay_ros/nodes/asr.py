"""asr: turns audio/raw into speech/partial and speech/final (fay_msgs/Transcript).

Backends behind one interface: `whisper` (default; faster-whisper with the Whisper base
model shipped in a registry package, fully offline) and `vosk` (a vosk model directory).
The node cuts utterances with its own VAD on the audio it receives (sample-exact, no
dependence on the ordering of two topics), decodes on a worker thread, and applies the
wake-word mode before publishing a final.

Topics: audio/raw (AudioChunk, in), robot_speaking (SpeechState, latched, in: an utterance that
begins with the robot's voice is dropped; the end of the robot's turn extends an open wake
window), reply (Utterance, in: the robot's last words, which the text turn model reads the
person's as an answer to), speech/partial and speech/final (Transcript, out),
speech/speculative (Transcript, out: the early text of a turn judged complete, before its
final, for the dialogue's speculative reply; "" withdraws it when the person goes on),
audio/talk_over_clip (AudioChunk, in: what a person said over the robot without barging in) and
interrupt (Empty, out: that was a stop request, "stop!", "wait", 停, 等一下), audio/barge_in
(Empty, in: the open utterance and those starting within 2 s were said over the robot; one
that is only a backchannel, "yeah", 嗯, makes no final, and the voice resumes), and
speech/decisions (DiagnosticStatus, out: each of these decisions as it is taken: "barge-in"
when one is heard, "backchannel: no turn", "stop request", "talk-over: goes on", "robot's own
voice: dropped", "no speech heard: dropped").

A lifecycle node (fay_ros.common.lifecycle): configure loads the recogniser model (a missing
or corrupt model: the node stays unconfigured and says why on /diagnostics and `~/ready`),
cleanup releases it; audio is taken in and transcripts published only while active (an
utterance open at deactivation is dropped). Wake mode and words, the awake window, the VAD,
endpointing and turn-detection thresholds and user_id are live parameters (`ros2 param set`), applied by the
worker before the next audio chunk (VAD and endpointing between utterances); the backend,
the model and the decoding options are read-only.

Time: every time the wake window compares is on the node clock (chunk stamps, which the mic
writes from its node clock, and the moment the robot stops speaking), so with
use_sim_time:=true the window follows /clock.

REP-155 (ROS4HRI), when `hri_msgs` is importable (nothing changes without it): the heard voice
is published as /humans/voices/<voice id>/speech (hri_msgs/LiveSpeech: partials as
`incremental`, finals as `final`), /humans/voices/<voice id>/is_speaking (std_msgs/Bool, latched,
from the recogniser's VAD) and /humans/voices/tracked (hri_msgs/IdsList, latched and repeated
every second); the voice id is derived from user_id (fay_ros.hearing.voices).

Speaker identity (`identity_source`): `fixed` writes `user_id` into every Transcript (one
speaker); `rep155` takes it from an external speaker-identification node: the voice that was
speaking during the utterance (`/humans/voices/<id>/is_speaking`), mapped to a user id by the
people file (`people_file`, dialogue.people, re-read when it changes; a voice nobody is known
by is the guest "").
What is said never changes who said it (fay_ros.ros_side.speaker_identity).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Literal

from diagnostic_msgs.msg import DiagnosticStatus
from pydantic import Field, model_validator
from rclpy.clock import Clock, ClockType
from std_msgs.msg import Bool, Empty

from fay_msgs.msg import AudioChunk, SpeechState, Transcript, Utterance, WordTiming
from fay_msgs.srv import GetProfile

from ..common import qos, topics
from ..common.diagnostics import event_status, health
from ..common.lifecycle import ManagedNode
from ..common.node_main import run_node
from ..common.params import ConfigError, declare_config
from ..common.paths import config_file
from ..common.reloading import ReloadingTable
from ..common.rostime import from_time_msg, to_time_msg
from ..common.wav import AudioFormatError
from ..common.worker import BoundedWorker
from ..dialogue.people import People, PeopleFileError
from ..hearing.asr_core import EARLY_DECODE_MS, SETTLE_AFTER_S, SPECULATE_MS, AsrCore, TranscriptEvent, TurnHold
from ..hearing.audio import MAX_GAIN_DB
from ..hearing.hotword_names import HotwordNames
from ..hearing.recognizer import create_recognizer
from ..hearing.vad import DEFAULT_SILERO_VETO_MS, VadSettings
from ..hearing.vad_params import VAD_LIVE_PARAMETERS, VadParameters
from ..hearing.voices import TRACKED_TOPIC, is_speaking_topic, speech_topic, voice_id
from ..hearing.wake import WakeWordGate
from ..llm.embedded import LocalLlmError, default_model_path
from ..ros_side.speaker_identity import Rep155Speakers
from ..turns.asr_order import BargeInsFirst, behind
from ..turns.end_of_turn import TurnSettings
from ..turns.semantic_turn import SemanticSettings, SemanticTurn
from ..turns.stop_request import is_stop_request
from ..turns.text_turn import RobotWords, TextTurn, TextTurnSettings

# A minute of the mic's 30 ms chunks: far more than a decode takes (speech waits while the
# recogniser works); a recogniser further behind than that loses the oldest audio.
ASR_QUEUE_CHUNKS = 2000


class AsrConfig(VadParameters):
    backend: Literal["whisper", "vosk"] = Field(
        "whisper", description="Recogniser: 'whisper' (offline default) or 'vosk' (needs a vosk model)."
    )
    model: str = Field(
        "",
        description="Model directory, or a name under models/ (see models/README.md). "
        "'' = the packaged Whisper base model (whisper backend).",
    )
    language: str = Field("auto", description="Language code of the speech ('en', 'zh', ...) or 'auto'.")
    auto_languages: list[str] = Field(
        ["en", "zh"], description="With language 'auto' (whisper): the languages to choose from."
    )
    user_id: str = Field("user", description="Speaker id written into every Transcript ('' = unidentified guest).")
    identity_source: Literal["fixed", "rep155"] = Field(
        "fixed",
        description="who spoke: 'fixed' = user_id; 'rep155' = the voice a speaker-identification node says "
        "was speaking (/humans/voices/<id>/is_speaking), mapped by people_file (unknown voice = guest '')",
    )
    people_file: str = Field("", description="the people file of identity_source rep155 ('' = config/people.yaml)")
    stop_on_request: bool = Field(
        True,
        description="Decode what a person said over the robot without barging "
        "in (audio/talk_over_clip from the mic) and publish `interrupt` "
        'when it is a stop request ("stop", "wait", 停, 等一下; '
        "fay_ros.turns.stop_request).",
    )
    wake_mode: Literal["always", "prefix", "window"] = Field(
        "always",
        description="'always' = forward every utterance; 'prefix' = only utterances starting with a "
        "wake word (removed); 'window' = a wake word opens an awake window.",
    )
    wake_words: list[str] = Field(
        ["fay", "faye", "hey fay", "菲菲"], description="Wake words (case and punctuation ignored)."
    )
    awake_window_s: float = Field(
        20.0,
        gt=0.0,
        description="Window mode: seconds awake after the wake word, "
        "the last forwarded utterance or the robot's reply.",
    )
    early_endpoint_ms: int = Field(
        250,
        ge=0,
        description="Silence after which the recogniser decodes early and "
        "ends the utterance if the text ends a sentence (0 = off).",
    )
    early_decode_ms: int = Field(
        EARLY_DECODE_MS,
        ge=0,
        description="Silence after which the early (speculative) "
        "decode starts, so it overlaps the wait for the endpoint (30 = one VAD frame).",
    )
    speculate_ms: int = Field(
        SPECULATE_MS,
        ge=0,
        description="Silence after which an early decode judged complete "
        "goes out on speech/speculative (the dialogue starts the model on it).",
    )
    input_gain_db: float = Field(
        0.0,
        ge=0.0,
        le=MAX_GAIN_DB,
        description="dB the microphone's audio is raised by before the VAD and the recogniser hear it "
        "(a microphone at low gain: the 'room' status on /diagnostics says when a voice is too quiet, and by "
        "how much to raise it).",
    )
    settle_after_s: float = Field(
        SETTLE_AFTER_S,
        ge=0.0,
        le=60.0,
        description="Whisper: when the person speaks on after a pause of a long utterance, its words "
        "decoded up to that pause are settled once they span this many seconds, and later decodes hear only "
        "the audio after them (0: never; each decode hears the whole utterance; read at start).",
    )
    endpoint_ms: int = Field(
        700,
        gt=0,
        description="Silence that ends an utterance (with turn detection: when "
        "neither the text nor the prosody tells).",
    )
    turn_detection: bool = Field(
        True,
        description="End turns from the speculative transcript and prosody, not "
        "silence alone (fay_ros.turns.end_of_turn); false = the two-step "
        "early endpoint.",
    )
    turn_complete_ms: int = Field(
        150, gt=0, description="Turn detection: silence that ends a turn whose text ends a sentence or question."
    )
    turn_prosody_ms: int = Field(
        400,
        gt=0,
        description="Turn detection: silence that ends a turn whose voice falls or fades at its end (no text cue).",
    )
    turn_patience_ms: int = Field(
        1500,
        gt=0,
        description="Turn detection: silence that ends a turn whose text "
        "stops on a conjunction, filler or comma ('and', 'um', "
        "'的', '然后').",
    )
    turn_pitch_fall_st: float = Field(
        2.0, gt=0.0, description="Turn detection: final pitch fall (semitones) that counts as a final intonation."
    )
    turn_pitch_rise_st: float = Field(
        3.5, gt=0.0, description="Turn detection: final pitch rise (semitones) that counts as going on."
    )
    turn_energy_decay_db: float = Field(
        10.0, gt=0.0, description="Turn detection: energy decay over the last ~300 ms of voice that counts as final."
    )
    # Off by default: on the real-speech turn set it cuts fewer turns off than the rules alone
    # (30% vs 39%) but ends them later (late 67% vs 50%, extra wait p95 1734 vs 950 ms):
    # docs/turn_taking.md.
    semantic_turn: bool = Field(
        False,
        description="Turn detection: also ask the smart-turn v3.2 end-of-turn model (the last 8 s "
        "of voice; fay_ros.turns.semantic_turn) after semantic_after_ms of silence; false, or the "
        "model missing, = the word and prosody rules alone.",
    )
    semantic_model: str = Field(
        "", description="Smart-turn ONNX file ('' = the one scripts/post_setup.d/turns.sh installs)."
    )
    semantic_after_ms: int = Field(
        200, gt=0, description="Semantic turn: silence after which the model is asked (the rules wait for it)."
    )
    semantic_finished: float = Field(
        0.7, ge=0.0, le=1.0, description="Semantic turn: probability at or above which the turn ends at once."
    )
    semantic_unfinished: float = Field(
        0.3,
        ge=0.0,
        le=1.0,
        description="Semantic turn: probability below which the turn is held open up to semantic_hold_ms "
        "(not for a Mandarin transcript whose words end a sentence).",
    )
    semantic_hold_ms: int = Field(
        1500, gt=0, description="Semantic turn: the longest silence an 'unfinished' holds the turn open."
    )
    semantic_languages: list[str] = Field(
        ["en"],
        description="Semantic turn: the transcript languages the model is asked for (others: the rules "
        "alone; on espeak-ng Mandarin it took most pauses inside a sentence for ends).",
    )
    # On by default: on the real-speech turn set it cuts 12% of turns off against 39% for the
    # rules alone (synthetic English 12% vs 38%), for 20-45 ms more wait p50 (docs/turn_taking.md).
    text_turn: bool = Field(
        True,
        description="Turn detection: also ask a language model whether the early decode's words end "
        "the sentence (fay_ros.turns.text_turn; the embedded SmolLM2-135M, in this process); false, or "
        "the model missing, = the word and prosody rules alone.",
    )
    text_turn_model: str = Field(
        "", description="Text turn: a GGUF chat model in the ChatML template ('' = the embedded SmolLM2-135M)."
    )
    text_turn_finished: float = Field(
        0.1,
        ge=0.0,
        le=1.0,
        description="Text turn: P(finished) at or above which the turn ends after turn_complete_ms.",
    )
    text_turn_unfinished: float = Field(
        0.02,
        ge=0.0,
        le=1.0,
        description="Text turn: P(finished) below which the turn is held open up to turn_patience_ms.",
    )
    text_turn_languages: list[str] = Field(
        ["en"],
        description="Text turn: the transcript languages the model is asked for (the embedded model reads "
        "English only; others: the rules alone).",
    )
    text_turn_reply: bool = Field(
        True,
        description="Text turn: words the model is unsure of alone are read again as the answer to the "
        "robot's last reply (topic reply), and that verdict counts (a short answer to a question ends the "
        "turn sooner); false = the words alone.",
    )
    vad_model: Literal["webrtc", "silero", "webrtc+silero"] = Field(
        "webrtc",
        description="The speech model of utterance cutting: webrtc, silero (Silero VAD v6 from faster-whisper: "
        "ends sooner after the last word and ignores non-speech noise, but splits more turns at natural pauses), "
        "or webrtc+silero (the WebRTC VAD's speech confirmed by Silero: the room's noise ends a turn, a pause "
        "inside a sentence does not); docs/turn_taking.md.",
    )
    vad_silero_threshold: float = Field(
        0.5, gt=0.0, lt=1.0, description="silero: P(speech) from which a 32 ms window is speech."
    )
    vad_silero_confirm: float = Field(
        0.2,
        gt=0.0,
        lt=1.0,
        description="webrtc+silero: the Silero P(speech) a frame the WebRTC VAD calls speech needs; "
        "vad_silero_veto_ms: the P(speech) from which Silero heard speech.",
    )
    vad_silero_veto_ms: int = Field(
        DEFAULT_SILERO_VETO_MS,
        ge=0,
        le=5000,
        description="webrtc: once the WebRTC VAD has called this much speech since Silero last heard any, its "
        "'speech' is the room's noise, so a noisy room cannot hold a turn open (0: off; read at start).",
    )
    preroll_ms: int = Field(300, ge=0, description="Audio kept from before the detected start of speech.")
    max_utterance_s: float = Field(
        20.0,
        gt=0.5,
        le=30.0,
        description="Longest utterance before it is cut; in its last quarter a 150 ms pause already closes it.",
    )
    cpu_threads: int = Field(
        1,
        ge=1,
        le=16,
        description="Whisper: CPU threads for inference (1 decodes a short "
        "utterance as fast as 2 on a 2-core machine and leaves a "
        "core to the rest of the turn).",
    )
    compute_type: str = Field("int8", description="Whisper: CTranslate2 compute type (int8, float32, ...).")
    beam_size: int = Field(1, ge=1, le=10, description="Whisper: beam size (1 = greedy, fastest).")
    word_timestamps: bool = Field(True, description="Whisper: word timings on finals.")
    initial_prompt: str = Field("", description="Whisper: text that primes vocabulary/style ('' = none).")
    chinese_script: Literal["simplified", "traditional", "as_is"] = Field(
        "simplified",
        description="Whisper: script of Chinese output (simplified; traditional for Traditional "
        "readers; as_is = as Whisper writes it).",
    )
    hotwords: list[str] = Field(
        [],
        description="Whisper: names the recogniser should spell as given (the companion's "
        "name, e.g. Fay / 菲菲, the owners' names). Off by default: with the embedded base "
        "model any prompt cost the last words of a 7 s English recording "
        "(docs/BENCHMARKS.md, real speech).",
    )
    hotwords_from_memory: bool = Field(
        False,
        description="Whisper: add the names the memory knows for user_id (their own, their family's; "
        "memory/profile, asked at activation, on a new user_id and then at most once a minute after a "
        "final) to the hot words. Off by default for the hotwords' reason: with the embedded base model "
        "any prompt costs accuracy; with a larger model names are spelled as the user spells them.",
    )
    partial_interval_s: float = Field(
        0.0, ge=0.0, description="Whisper: re-decode for a partial every N seconds of speech (0 = finals only)."
    )

    @model_validator(mode="after")
    def _check(self) -> AsrConfig:
        if self.language != "auto" and not self.language.isalpha():
            raise ValueError(f"language must be a code like 'en' or 'zh', or 'auto' (got {self.language!r})")
        if self.early_endpoint_ms and self.early_endpoint_ms >= self.endpoint_ms:
            raise ValueError(
                f"early_endpoint_ms ({self.early_endpoint_ms}) must be below endpoint_ms "
                f"({self.endpoint_ms}), or 0 to turn it off"
            )
        if self.turn_detection:
            self.turn_settings().validate()
        if self.semantic_turn:
            self.semantic_settings().validate()
        if self.text_turn:
            self.text_turn_settings().validate()
        if self.wake_mode != "always" and not any(w.strip() for w in self.wake_words):
            raise ValueError(f"wake_mode {self.wake_mode!r} needs at least one wake word")
        return self

    def turn_settings(self) -> TurnSettings:
        return TurnSettings(
            enabled=self.turn_detection,
            complete_ms=self.turn_complete_ms,
            prosody_ms=self.turn_prosody_ms,
            endpoint_ms=self.endpoint_ms,
            patience_ms=self.turn_patience_ms,
            fall_semitones=self.turn_pitch_fall_st,
            rise_semitones=self.turn_pitch_rise_st,
            decay_db=self.turn_energy_decay_db,
        )

    def semantic_settings(self) -> SemanticSettings:
        return SemanticSettings(
            enabled=self.semantic_turn,
            after_ms=self.semantic_after_ms,
            finished=self.semantic_finished,
            unfinished=self.semantic_unfinished,
            hold_ms=self.semantic_hold_ms,
            languages=tuple(code.strip().lower() for code in self.semantic_languages),
        )

    def text_turn_settings(self) -> TextTurnSettings:
        return TextTurnSettings(
            enabled=self.text_turn,
            finished=self.text_turn_finished,
            unfinished=self.text_turn_unfinished,
            languages=tuple(code.strip().lower() for code in self.text_turn_languages),
            reads_reply=self.text_turn_reply,
        )

    def vad_settings(self) -> VadSettings:
        return self.vad_settings_with(
            stop_ms=self.endpoint_ms,
            model=self.vad_model,
            silero_threshold=self.vad_silero_threshold,
            silero_confirm=self.vad_silero_confirm,
            silero_veto_ms=self.vad_silero_veto_ms,
        )


# What can change while running (applied before the next chunk, without reloading the model).
LIVE_PARAMETERS = (
    frozenset(
        {
            "user_id",
            "stop_on_request",
            "input_gain_db",
            "wake_mode",
            "wake_words",
            "awake_window_s",
            "early_endpoint_ms",
            "early_decode_ms",
            "speculate_ms",
            "endpoint_ms",
            "vad_silero_threshold",
            "vad_silero_confirm",
            "preroll_ms",
            "max_utterance_s",
            "turn_detection",
            "turn_complete_ms",
            "turn_prosody_ms",
            "turn_patience_ms",
            "turn_pitch_fall_st",
            "turn_pitch_rise_st",
            "turn_energy_decay_db",
            "semantic_turn",
            "semantic_after_ms",
            "semantic_finished",
            "semantic_unfinished",
            "semantic_hold_ms",
            "semantic_languages",
            "text_turn_finished",
            "text_turn_unfinished",
            "text_turn_languages",
            "text_turn_reply",
        }
    )
    | VAD_LIVE_PARAMETERS
)
SEMANTIC_STATUS = "semantic turn"
TEXT_TURN_STATUS = "text turn"
VAD_STATUS = "vad"
ROOM_STATUS = "room"
HOTWORDS_STATUS = "hot words"
NAMES_RETRY_S = 2.0  # asking memory/profile for the user's names until it answers
TRACKED_PERIOD_S = 1.0


def model_label(cfg: AsrConfig) -> str:
    """The recogniser as the health status names it (its hardware id) before the model is found."""
    return f"{cfg.backend}:{cfg.model or 'packaged whisper base'}"


class HriVoices:
    """REP-155 publishers of the voice the asr node hears (see the module docstring). Created
    only when hri_msgs is importable: `HriVoices.create(node)` is None otherwise."""

    @classmethod
    def create(cls, node: ManagedNode) -> HriVoices | None:
        try:
            from hri_msgs.msg import IdsList, LiveSpeech
        except ImportError:
            node.get_logger().debug("hri_msgs is not importable: no REP-155 /humans/voices topics")
            return None
        return cls(node, LiveSpeech, IdsList)

    def __init__(self, node: ManagedNode, live_speech: type, ids_list: type) -> None:
        self._node = node
        self._live_speech = live_speech
        self._ids_list = ids_list
        self._lock = threading.Lock()  # the worker switches voices, the timer publishes the list
        self.voice = ""
        self.tracking = False
        self.speaking = False
        self._speech_pub: Any = None
        self._speaking_pub: Any = None
        self._tracked_pub = node.create_publisher(ids_list, TRACKED_TOPIC, qos.LATCHED)
        # Volatile subscribers (ROS4HRI listeners) get the list within a second, as from a tracker.
        self._timer = node.create_timer(
            TRACKED_PERIOD_S, self.publish_tracked, clock=Clock(clock_type=ClockType.STEADY_TIME)
        )

    def use_voice(self, voice: str) -> None:
        """The voice now heard (user_id changed): its own topics, and the tracked list."""
        with self._lock:
            if voice == self.voice:
                return
            if self._speaking_pub is not None:
                if self.speaking:
                    self._speaking_pub.publish(Bool(data=False))
                self._node.destroy_publisher(self._speech_pub)
                self._node.destroy_publisher(self._speaking_pub)
            self.voice = voice
            self.speaking = False
            self._speech_pub = self._node.create_publisher(self._live_speech, speech_topic(voice), qos.EVENTS)
            self._speaking_pub = self._node.create_publisher(Bool, is_speaking_topic(voice), qos.LATCHED)
            self._speaking_pub.publish(Bool(data=False))
        self.publish_tracked()

    def set_tracking(self, tracking: bool) -> None:
        """Tracked while the node listens (active)."""
        with self._lock:
            self.tracking = tracking
        if not tracking:
            self.set_speaking(False)
        self.publish_tracked()

    def publish_tracked(self) -> None:
        with self._lock:
            ids = [self.voice] if self.tracking and self.voice else []
        msg = self._ids_list(ids=ids)
        msg.header.stamp = self._node.get_clock().now().to_msg()
        self._tracked_pub.publish(msg)

    def set_speaking(self, speaking: bool) -> None:
        with self._lock:
            if speaking == self.speaking or self._speaking_pub is None:
                return
            self.speaking = speaking
            self._speaking_pub.publish(Bool(data=speaking))

    def speech(self, ev: TranscriptEvent, confidence: float) -> None:
        msg = self._live_speech(confidence=confidence if ev.is_final else 0.0)
        if ev.is_final:
            msg.final = ev.text
        else:
            msg.incremental = ev.text
        if hasattr(msg, "language"):  # an IETF tag; older hri_msgs have no such field
            msg.language = ev.language
        msg.header.stamp = to_time_msg(ev.end_time)
        msg.header.frame_id = "asr"
        with self._lock:
            publisher = self._speech_pub
        if publisher is not None:
            publisher.publish(msg)

    def close(self) -> None:
        self._timer.cancel()


class Asr(ManagedNode):
    def __init__(self) -> None:
        super().__init__("asr", namespace=topics.DEFAULT_NAMESPACE)
        self.config = cfg = declare_config(self, AsrConfig, live=LIVE_PARAMETERS, apply=self._apply_live)
        self._in_use = cfg  # the configuration the worker works with (user_id of the transcripts)
        self.core: AsrCore | None = None
        self._worker: BoundedWorker[tuple] | None = None
        self._dropped = 0  # chunks that could not be decoded (logged, throttled)
        # The last barge-in (node clock) not yet given to the core: not queued behind the audio
        # (fay_ros.turns.asr_order).
        self._barge_ins = BargeInsFirst()
        health(self).hardware_id = model_label(cfg)
        health(self).add(ROOM_STATUS, self._room_health)
        self.partial_pub = self.create_publisher(Transcript, topics.SPEECH_PARTIAL, qos.EVENTS)
        self.final_pub = self.create_publisher(Transcript, topics.SPEECH_FINAL, qos.EVENTS)
        self.speculative_pub = self.create_publisher(Transcript, topics.SPEECH_SPECULATIVE, qos.EVENTS)
        self.create_subscription(AudioChunk, topics.AUDIO_RAW, self._on_audio, qos.AUDIO)
        self.create_subscription(AudioChunk, topics.TALK_OVER_CLIP, self._on_talk_over_clip, qos.EVENTS)
        self.create_subscription(Empty, topics.BARGE_IN, self._on_barge_in, qos.EVENTS)
        self.interrupt_pub = self.create_publisher(Empty, topics.INTERRUPT, qos.EVENTS)
        self.decisions_pub = self.create_publisher(DiagnosticStatus, topics.SPEECH_DECISIONS, qos.EVENTS)
        self.create_subscription(SpeechState, topics.ROBOT_SPEAKING, self._on_robot_speaking, qos.LATCHED)
        self._robot_words = RobotWords()
        # The text turn model reads the robot's new words once, here, off the audio path; only
        # the newest words matter (a queue of one, drop-oldest).
        self._primer: BoundedWorker[str] | None = None
        self.create_subscription(Utterance, topics.REPLY, self._on_reply, qos.EVENTS)
        self.voices = HriVoices.create(self)
        if self.voices is not None:
            self.voices.use_voice(voice_id(cfg.user_id))
        # The names memory knows for the user, as hot words (hotwords_from_memory; Whisper only).
        self._names: HotwordNames | None = None
        self._names_lock = threading.Lock()  # (asked from the worker, answered on the executor)
        self._profile_client = None
        if cfg.hotwords_from_memory and cfg.backend == "whisper":
            self._names = HotwordNames(tuple(w.strip() for w in cfg.hotwords if w.strip()))
            self._profile_client = self.create_client(GetProfile, topics.SRV_PROFILE)
            health(self).add(HOTWORDS_STATUS, self._names_health)
            self.create_timer(NAMES_RETRY_S, self._ask_names)  # (until memory has answered)
        self.speakers: Rep155Speakers | None = None
        if cfg.identity_source == "rep155":
            path = Path(cfg.people_file).expanduser() if cfg.people_file else config_file("people.yaml")
            try:
                people = ReloadingTable(path, People.load)
            except PeopleFileError as exc:
                raise ConfigError(f"parameter 'people_file': {exc}") from None
            self.speakers = Rep155Speakers(self, people, own_voice=voice_id(cfg.user_id))

    # -- lifecycle ---------------------------------------------------------------------------
    def configure_node(self) -> None:
        cfg = self.config
        health(self).hardware_id = model_label(cfg)
        options = {}
        if cfg.backend == "whisper":
            options = dict(
                auto_languages=tuple(cfg.auto_languages),
                compute_type=cfg.compute_type,
                cpu_threads=cfg.cpu_threads,
                beam_size=cfg.beam_size,
                word_timestamps=cfg.word_timestamps,
                initial_prompt=cfg.initial_prompt,
                chinese_script=cfg.chinese_script,
                hotwords=tuple(cfg.hotwords),
                partial_interval_s=cfg.partial_interval_s,
            )
        try:
            recognizer = create_recognizer(cfg.backend, cfg.model, cfg.language, **options)
            semantic = self._load_semantic(cfg)
            text_turn = self._load_text_turn(cfg)
            wake = WakeWordGate(cfg.wake_mode, cfg.wake_words, cfg.awake_window_s)
            core = AsrCore(
                recognizer,
                cfg.vad_settings(),
                wake,
                cfg.preroll_ms,
                cfg.max_utterance_s,
                early_endpoint_ms=cfg.early_endpoint_ms,
                early_decode_ms=cfg.early_decode_ms,
                turn=cfg.turn_settings(),
                on_speculative=lambda ev: self._publish(ev, 0.0),
                speculate_ms=cfg.speculate_ms,
                on_no_turn=self._on_no_turn,
                semantic=semantic,
                semantic_settings=cfg.semantic_settings(),
                text_turn=text_turn,
                text_turn_settings=cfg.text_turn_settings(),
                settle_after_s=cfg.settle_after_s,
            )
        except (ValueError, FileNotFoundError) as exc:  # (a ModelError is a ConfigError: reported as is)
            raise ConfigError(str(exc)) from None
        core.input_gain_db = cfg.input_gain_db
        if self._names is not None and self._names.owner is not None:  # (configured again: the names stay)
            _give_hotwords(recognizer, self._names.words)
        core.on_hold = self._on_hold
        core.on_robot_voice = self._on_robot_voice
        core.on_room = self._on_room
        missing = core.segmenter.vad.classifier.silero_missing
        if missing:
            self.get_logger().warning(f"the Silero veto on the WebRTC VAD is off: {missing}")
        health(self).set(
            VAD_STATUS,
            "warning" if missing else "ok",
            f"{cfg.vad_model}, Silero veto off: {missing}" if missing else self._vad_summary(cfg),
        )
        model_dir = getattr(recognizer, "model_dir", cfg.model)
        health(self).hardware_id = f"{cfg.backend}:{model_dir}"
        self.core, self._in_use = core, cfg
        self._worker = BoundedWorker(
            self._work, ASR_QUEUE_CHUNKS, "asr-worker", on_drop=self._on_queue_full, on_error=self._on_error
        )
        self._worker.start()
        if text_turn is not None:

            def prime(said: str, model: TextTurn = text_turn) -> None:
                model.prime(said)

            self._primer = BoundedWorker(prime, 1, "asr-text-turn-primer")
            self._primer.start()
        if self.config is not cfg:  # a live change arrived while the model loaded
            self._worker.put(("config", self._live_change(self.config)), droppable=False)
        self.get_logger().info(
            f"asr configured: backend={cfg.backend}, model={model_dir}, "
            f"language={cfg.language}, wake_mode={cfg.wake_mode}"
        )

    def _room_health(self) -> tuple[str, str, dict[str, str]]:
        """What the recogniser's VAD hears of the room (as the mic's `room` status): a voice too
        quiet for vad_min_level_dbfs is a warning that names the parameter."""
        core = self.core
        vad = core.segmenter.vad if core is not None else None
        if vad is None or not vad.samples_seen:
            return "ok", "no audio yet", {}
        return vad.room().status()

    def _load_semantic(self, cfg: AsrConfig) -> SemanticTurn | None:
        """The end-of-turn model (loaded even while semantic_turn is off, so a live change can
        turn it on); missing or unusable: the rules alone, said on /diagnostics."""
        model, problem = SemanticTurn.load(cfg.semantic_model or None)
        if model is None:
            if not cfg.semantic_turn:  # not asked for: nothing to warn about
                health(self).set(SEMANTIC_STATUS, "ok", f"off, and unavailable: {problem}")
                return None
            self.get_logger().warning(f"{problem}: end of turn by the word and prosody rules alone")
            health(self).set(SEMANTIC_STATUS, "warning", f"unavailable, rules alone: {problem}")
            return None
        self._semantic_status(cfg, model)
        return model

    def _load_text_turn(self, cfg: AsrConfig) -> TextTurn | None:
        """The text turn model, loaded only when asked for (it is a language model in this
        process); missing or unusable: the rules alone, said on /diagnostics."""
        if not cfg.text_turn:
            health(self).set(TEXT_TURN_STATUS, "ok", "off (text_turn false)")
            return None
        try:
            path = cfg.text_turn_model or default_model_path()
        except LocalLlmError as exc:
            model, problem = None, str(exc)
        else:
            model, problem = TextTurn.load(path)
        if model is None:
            self.get_logger().warning(f"{problem}: end of turn by the word and prosody rules alone")
            health(self).set(TEXT_TURN_STATUS, "warning", f"unavailable, rules alone: {problem}")
            return None
        state = "on" if cfg.turn_detection else "loaded, off (turn_detection false)"
        health(self).set(TEXT_TURN_STATUS, "ok", f"{state} ({model.path.name})")
        return model

    def _semantic_status(self, cfg: AsrConfig, model: SemanticTurn) -> None:
        on = cfg.semantic_turn and cfg.turn_detection
        state = "on" if on else "loaded, off (semantic_turn or turn_detection false)"
        health(self).set(SEMANTIC_STATUS, "ok", f"{state} ({model.path.name})")

    def activate_node(self) -> None:
        if self.voices is not None:
            self.voices.set_tracking(True)
        self._ask_names()

    # -- hot words from memory -------------------------------------------------------------------
    def _names_health(self) -> tuple[str, str, dict[str, str]]:
        names = self._names
        if names is None:
            return "ok", "off", {}
        with self._names_lock:
            return names.status()

    def _ask_names(self, final: bool = False) -> None:
        """Ask memory/profile for the user's names when they are due (HotwordNames.due); never
        waits: the answer comes back on the executor (`_names_answered`)."""
        names, client = self._names, self._profile_client
        if names is None or client is None or self._worker is None:  # (not configured: nothing to give them to)
            return
        owner = self._in_use.user_id
        now = time.monotonic()
        with self._names_lock:
            if not names.due(owner, now, final):
                return
            if not client.service_is_ready():
                names.unavailable()
                return
            names.asked(owner, now)
        future = client.call_async(GetProfile.Request(owner=owner))
        future.add_done_callback(lambda done, owner=owner: self._names_answered(owner, done))

    def _names_answered(self, owner: str, done) -> None:
        names = self._names
        if names is None:
            return
        try:
            res = done.result()
        except Exception as exc:  # noqa: BLE001 - the call failed: no names this time
            found, problem = None, f"memory/profile failed: {type(exc).__name__}"
        else:
            # imported here, not at the top: the fact readers' 600 patterns take half a second
            # to compile, which an asr that never asks memory for names should not pay at start
            from ..memory.self_facts import names_in_profile

            ok = res is not None and res.success
            found = names_in_profile(res.facts) if ok else None
            problem = "" if ok else f"memory/profile: {res.message if res is not None else 'no answer'}"
        with self._names_lock:
            words = names.answered(owner, found, time.monotonic(), problem)
        worker = self._worker
        if words is not None and worker is not None:
            worker.put(("hotwords", words), droppable=False)

    def deactivate_node(self) -> None:
        if self._worker is not None:
            self._worker.put(("abandon", None), droppable=False)
        if self.voices is not None:
            self.voices.set_tracking(False)

    def cleanup_node(self) -> None:
        if self._worker is not None:
            self._worker.stop(5)
            self._worker = None
        if self._primer is not None:
            self._primer.stop(5)
            self._primer = None
        self.core = None  # the recogniser and its model go with it

    def close(self) -> None:
        super().close()
        if self.voices is not None:
            self.voices.close()

    # -- live parameters -----------------------------------------------------------------------
    @staticmethod
    def _live_change(cfg: AsrConfig) -> tuple[AsrConfig, WakeWordGate]:
        """What the worker applies; raises ValueError for rules the core refuses (e.g. wake
        words that are only punctuation), so the parameter change is refused with it."""
        wake = WakeWordGate(cfg.wake_mode, cfg.wake_words, cfg.awake_window_s)
        cfg.vad_settings().validate()
        return cfg, wake

    def _apply_live(self, cfg: AsrConfig, changed: frozenset[str]) -> None:
        change = self._live_change(cfg)
        self.config = cfg
        core = self.core
        if core is not None and core.semantic is not None and {"semantic_turn", "turn_detection"} & changed:
            self._semantic_status(cfg, core.semantic)
        worker = self._worker
        if worker is not None:
            worker.put(("config", change), droppable=False)
        if changed:
            self.get_logger().info(f"live parameters changed: {', '.join(sorted(changed))} (from the next audio chunk)")

    # -- audio ---------------------------------------------------------------------------------
    def _on_audio(self, msg: AudioChunk) -> None:
        worker = self._worker
        if self.active and worker is not None:
            worker.put(("audio", msg))

    def _on_talk_over_clip(self, msg: AudioChunk) -> None:
        worker = self._worker
        if self.active and worker is not None and self.config.stop_on_request:
            worker.put(("clip", msg), droppable=False)

    def _on_barge_in(self, _msg: Empty) -> None:
        if self.active and self._worker is not None:
            self._barge_ins.barge_in(self.get_clock().now().nanoseconds * 1e-9)  # (the worker's next item takes it)
            self._decided("barge-in")

    def _on_robot_speaking(self, msg: SpeechState) -> None:
        worker = self._worker
        if worker is None:
            return
        now = self.get_clock().now().nanoseconds * 1e-9
        if msg.speaking:
            # Never dropped: audio from its stamp on is the robot's own voice until the mic mutes
            # (a publisher without a stamp: now).
            started = from_time_msg(msg.header.stamp)
            worker.put(("robot_start", started if started > 0 else now), droppable=False)
        else:
            # Never dropped: it extends an open wake window (node clock: sim time under use_sim_time).
            worker.put(("robot_done", now), droppable=False)

    def _on_reply(self, msg: Utterance) -> None:
        """A sentence of the robot's reply: the words the person's next turn answers."""
        said = self._robot_words.heard(msg.conversation_id, msg.text, msg.is_first or msg.seq == 0)
        worker, core, primer = self._worker, self.core, self._primer
        if worker is None or core is None or not said:
            return
        worker.put(("robot_words", (said, self.get_clock().now().nanoseconds * 1e-9)), droppable=False)
        settings = core.text_turn_settings  # (the worker's; a stale read costs one reading at most)
        if primer is not None and settings is not None and settings.reads_reply:
            primer.put(said)

    def _on_queue_full(self, total: int) -> None:
        self.get_logger().warning(
            f"asr worker is behind: dropped the oldest audio chunk ({total} dropped so far)", throttle_duration_sec=5.0
        )

    def _work(self, item: tuple) -> None:
        # Nothing that arrives on audio/raw may end the worker thread (the node would stay up
        # and never transcribe again): BoundedWorker hands any exception to _on_error.
        kind, payload = item
        core = self.core
        if core is None:
            return
        for at in self._barge_ins.before_next():
            core.barged_in(at)
        if kind == "config":
            cfg, wake = payload
            core.set_wake(wake)
            core.reconfigure(
                cfg.vad_settings(),
                cfg.preroll_ms,
                cfg.max_utterance_s,
                cfg.early_endpoint_ms,
                cfg.early_decode_ms,
                cfg.turn_settings(),
                cfg.speculate_ms,
                cfg.semantic_settings(),
            )
            core.set_text_turn(cfg.text_turn_settings())
            core.input_gain_db = cfg.input_gain_db
            self._in_use = cfg
            if self.voices is not None:
                self.voices.use_voice(voice_id(cfg.user_id))
            if self._names is not None:  # (a new user_id: only their names)
                with self._names_lock:
                    words = self._names.for_user(cfg.user_id)
                if words is not None:
                    _give_hotwords(core.recognizer, words)
                self._ask_names()
            return
        if kind == "abandon":
            core.abandon()
            self._speaking_changed(core)
            return
        if kind == "robot_start":
            for ev in core.robot_started_speaking(payload):
                self._publish(ev, 0.0)
            self._speaking_changed(core)
            return
        if kind == "robot_done":
            core.robot_finished_speaking(payload)
            self._speaking_changed(core)
            return
        if kind == "robot_words":
            core.robot_said(*payload)
            return
        if kind == "hotwords":
            _give_hotwords(core.recognizer, payload)
            return
        if kind == "clip":
            self._judge_clip(core, payload)
            return
        msg: AudioChunk = payload
        t0 = time.perf_counter()
        captured = from_time_msg(msg.header.stamp)
        try:
            events = core.feed(msg.data, msg.sample_rate, captured, msg.channels, behind=self._behind(msg, captured))
        except AudioFormatError as exc:
            self._dropped += 1
            self.get_logger().warning(
                f"dropped a malformed audio chunk from {msg.header.frame_id or '?'}: "
                f"{exc} ({self._dropped} dropped so far)",
                throttle_duration_sec=5.0,
            )
            return
        for ev in events:
            self._publish(ev, time.perf_counter() - t0)
        self._speaking_changed(core)

    def _behind(self, msg: AudioChunk, captured: float) -> bool:
        """More audio waits after this chunk, or it is old (fay_ros.turns.asr_order; node clock,
        as the mic stamps)."""
        queued = self._worker.pending() if self._worker is not None else 0
        if msg.sample_rate <= 0 or msg.channels <= 0:
            return queued > 0  # malformed: feed rejects it
        return behind(
            queued,
            captured,
            len(msg.data) / (msg.sample_rate * msg.channels),
            self.get_clock().now().nanoseconds * 1e-9,
        )

    def _on_hold(self, hold: TurnHold) -> None:
        """Turn detection holds the turn open past the silence endpoint (no words: the cue only)."""
        model = "not asked" if hold.semantic_p is None else f"{hold.semantic_p:.2f}"
        words = "not asked" if hold.text_p is None else f"{hold.text_p:.3f}"
        self._decided(
            "turn held open",
            text_cue=hold.text_cue,
            wait_ms=hold.wait_ms,
            semantic_p=model,
            text_p=words,
            voice_end=f"{hold.voice_end:.3f}",
        )

    @staticmethod
    def _vad_summary(cfg: AsrConfig) -> str:
        if cfg.vad_model == "webrtc" and cfg.vad_silero_veto_ms:
            return f"webrtc, Silero veto after {cfg.vad_silero_veto_ms} ms of speech Silero does not hear"
        return cfg.vad_model

    def _on_room(self) -> None:
        count = self.core.room_dropped if self.core is not None else 0
        self.get_logger().info(f"dropped an utterance in which Silero heard no speech: the room ({count} so far)")
        self._decided("no speech heard: dropped")

    def _on_robot_voice(self) -> None:
        count = self.core.robot_voice_dropped if self.core is not None else 0
        self.get_logger().info(
            f"dropped an utterance that began with the robot's own voice, before the mic muted ({count} so far)"
        )
        self._decided("robot's own voice: dropped")

    def _on_no_turn(self, text: str) -> None:
        count = self.core.backchannels_over_robot if self.core is not None else 0
        self.get_logger().info(
            "the words over the robot were only a backchannel: no final, the voice resumes "
            f"({len(text)} chars; {count} so far)"
        )
        self._decided("backchannel: no turn", chars=len(text))

    def _decided(self, decision: str, **values: object) -> None:
        """Publish a turn-taking decision on speech/decisions (no words: their length only)."""
        self.decisions_pub.publish(event_status(self, "decisions", "ok", decision, **values))

    def _judge_clip(self, core: AsrCore, msg: AudioChunk) -> None:
        """What the person said over the robot without barging in: a stop request stops it."""
        t0 = time.perf_counter()
        try:
            heard = core.transcribe_clip(msg.data, msg.sample_rate, msg.channels)
        except AudioFormatError as exc:
            self.get_logger().warning(f"dropped a malformed talk-over clip: {exc}")
            return
        if heard is None:
            return
        decoded = (time.perf_counter() - t0) * 1000
        if is_stop_request(heard.text):
            self.interrupt_pub.publish(Empty())
            self._decided("stop request", chars=len(heard.text))
            self.get_logger().info(
                f"a stop request over the robot ({len(heard.text)} chars, decoded in "
                f"{decoded:.0f} ms): interrupt published"
            )
        else:
            self._decided("talk-over: goes on", chars=len(heard.text))
            self.get_logger().info(
                f"talk-over without a stop request ({len(heard.text)} chars, decoded in "
                f"{decoded:.0f} ms): the robot goes on"
            )

    def _speaking_changed(self, core: AsrCore) -> None:
        if self.voices is not None:
            self.voices.set_speaking(core.speaking and self.active)

    def _on_error(self, item: tuple, exc: Exception) -> None:
        """A recogniser failure costs one chunk, not the node."""
        kind, payload = item
        what = {
            "audio": lambda: f"a chunk from {payload.header.frame_id or '?'}",
            "robot_done": lambda: "the end of the robot's turn",
        }.get(kind, lambda: f"a {kind} item")()
        self._dropped += 1
        self.get_logger().error(
            f"recognition failed on {what}: {type(exc).__name__}: {exc}; dropped ({self._dropped} so far)",
            throttle_duration_sec=5.0,
        )

    def _publish(self, ev: TranscriptEvent, decode_s: float) -> None:
        confidence = float(min(max(ev.confidence, 0.0), 1.0))
        speaker = self._in_use.user_id
        if self.speakers is not None:  # identity_source rep155: who was speaking meanwhile
            speaker = self.speakers.speaker_between(ev.start_time, ev.end_time)
        msg = Transcript(
            user_id=speaker,
            text=ev.text,
            is_final=ev.is_final,
            confidence=confidence,
            language=ev.language,
        )
        msg.header.stamp = to_time_msg(ev.end_time)
        msg.header.frame_id = "asr"
        msg.words = [
            WordTiming(
                word=w.word, start=float(w.start), end=float(w.end), confidence=float(min(max(w.confidence, 0.0), 1.0))
            )
            for w in ev.words
        ]
        if ev.speculative:  # for the dialogue's speculative reply only; not speech anyone heard yet
            self.speculative_pub.publish(msg)
            return
        (self.final_pub if ev.is_final else self.partial_pub).publish(msg)
        if self.voices is not None:
            self.voices.speech(ev, confidence)
        if ev.is_final:
            self.get_logger().info(
                f"final ({ev.language or '?'}, {len(ev.text)} chars, {len(ev.words)} words, "
                f"decoded in {decode_s * 1000:.0f} ms)"
            )
            self.get_logger().debug(f"final text: {ev.text}")
            self._ask_names(final=True)


def _give_hotwords(recognizer, words: str) -> None:
    """The recogniser's hot words from its next decode on (a backend without them: nothing)."""
    if hasattr(recognizer, "hotwords"):
        recognizer.hotwords = words


def main(args: list[str] | None = None) -> int:
    return run_node(Asr, args, threads=1)


if __name__ == "__main__":
    raise SystemExit(main())
