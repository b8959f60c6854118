"""mic: captures audio (sounddevice, or a WAV in real time), publishes audio/raw and voice
activity, and keeps the robot from hearing itself (half duplex, optional barge-in).

A lifecycle node (fay_ros.common.lifecycle): configure opens the input device or reads the
WAV (no device, or an unreadable WAV: the node stays unconfigured and says why on
/diagnostics and `~/ready`), activate starts capturing, deactivate pauses it, cleanup
releases the device. Audio is published only while active. The VAD, barge-in, echo-tail and
pre-roll parameters are live (`ros2 param set`, from the next chunk); the device, the source
and the stream format are read-only. The duplex gate and the echo tail run on the audio
clock (monotonic capture times), never on the node clock: they measure sound, not behaviour.

With `echo_cancel` (the default) the robot's own voice is taken out of the signal before the
VAD and the gate (hearing/echo.py, libspeexdsp), using what the tts node plays (audio/played);
without libspeexdsp the node says so on /diagnostics (`fay/mic: echo cancellation`, warning)
and goes on with the level gate alone. A backchannel does not barge in: the talk-over must last
`barge_in_min_ms` of voiced audio.

Topics: audio/raw (AudioChunk, out), audio/voice_active (Bool, latched, out),
interrupt (Empty, out, barge-in only), audio/barge_in (Empty, out, just before that interrupt),
audio/talk_over (Bool, out, barge-in only: true when the person starts talking over the robot, so
the voice holds at once; false when they stop without barging in, so it goes on),
audio/talk_over_clip (AudioChunk, out, just before that false: what they said, for the asr to
tell a short "stop!" from a backchannel),
audio/played (AudioChunk, in, with echo_cancel or simulated_echo_db),
robot_speaking (SpeechState, latched, in),
~/listening (Bool, latched, out: false from the moment the mic applies robot_speaking=true
and holds the person's audio back, until the robot stops or the person barges in; the
echo-tail mute after the robot stops is not shown).

A WAV source starts playing once the recogniser subscribes to audio/raw (`wait_for_listener`)
and the nodes in `wait_for_nodes` say ready (their latched `~/ready`; the bring-up lists its
other nodes), so the first words of the file are answered as a ready companion would answer
them; a microphone never waits.
"""

from __future__ import annotations

import array
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from pydantic import Field, field_validator, model_validator
from rclpy.subscription import Subscription
from rclpy.timer import Timer
from std_msgs.msg import Bool, Empty

from fay_msgs.msg import AudioChunk, SpeechState

from ..common import qos, topics
from ..common.diagnostics import health
from ..common.lifecycle import ManagedNode
from ..common.node_main import run_node
from ..common.params import ConfigError, declare_config
from ..common.readiness import READY_QOS, ready_topic
from ..common.rostime import to_time_msg
from ..common.wav import AudioFormatError
from ..common.worker import BoundedWorker
from ..hearing.audio_loss import AudioLoss
from ..hearing.echo import EchoCanceller, EchoCancellerUnavailable, RoomEcho
from ..hearing.mic_core import MicCore
from ..hearing.sources import NoInputDevice, SoundDeviceSource, WavFileSource
from ..hearing.vad import VadSettings
from ..hearing.vad_params import VAD_LIVE_PARAMETERS, VadParameters
from ..turns.duplex_gate import DuplexSettings

# A minute of 30 ms chunks: a worker further behind than that loses the oldest audio.
MIC_QUEUE_CHUNKS = 2000
# How long a chunk waits for the played audio that covers it, while the robot's voice is
# flowing (the played block leaves the tts about one output block before it plays; a busy
# machine or DDS can make it later than the chunk it belongs to).
PLAYED_WAIT_S = 0.05
# The played audio is "flowing" when it reached at least this close to the chunk.
PLAYED_FLOWING_S = 0.1


class MicConfig(VadParameters):
    device: str = Field(
        "",
        description="Input device: '' = the default input, a number = device index, "
        "other text = the first input device whose name contains it.",
    )
    source: str = Field(
        "",
        description="'' = capture from the input device; a recording's path (WAV, FLAC, MP3, Ogg, "
        "M4A, WebM) = stream that file in real time instead (headless machines, tests).",
    )
    loop: bool = Field(False, description="With a WAV source: replay it forever (false: silence after the end).")
    wait_for_listener: bool = Field(
        True,
        description="With a WAV source: start streaming only once audio/raw "
        "has a subscriber, so the recogniser hears the file from "
        "its start (a microphone never waits).",
    )
    wait_for_nodes: list[str] = Field(
        [],
        description="With a WAV source: also wait until these nodes (names in "
        "the mic's namespace) say ready on their ~/ready, so the "
        "file is heard by a companion that can answer it (the "
        "bring-up lists its other nodes).",
    )
    wait_for_nodes_s: float = Field(
        120.0,
        gt=0.0,
        description="With wait_for_nodes: after this long the file "
        "plays anyway, and a warning names the nodes "
        "that are not ready.",
    )
    rate: int = Field(16000, ge=8000, le=192000, description="Sample rate in Hz.")
    chunk_size: int = Field(480, ge=16, le=48000, description="Frames per AudioChunk (480 = 30 ms at 16 kHz).")
    channels: int = Field(1, ge=1, le=8, description="Input channels (the recogniser downmixes to mono).")
    vad_stop_ms: int = Field(500, gt=0, description="Silence that ends voice activity.")
    vad_snr_db: float = Field(9.0, ge=0.0, description="Voice must be this far above the tracked noise floor.")
    barge_in: bool = Field(
        False,
        description="While robot_speaking: false = mute; true = stay muted but publish "
        "`interrupt` and open when the person clearly talks over the robot.",
    )
    barge_in_margin_db: float = Field(
        10.0, gt=0.0, description="How much louder than the robot's echo the person must be to barge in."
    )
    barge_in_min_ms: int = Field(
        600,
        gt=0,
        description="Voiced talk-over needed (within this + 400 ms) before "
        "barging in; backchannels (yeah, okay, uh-huh, 嗯, 对, "
        "嗯嗯: 200-450 ms of voice) do not interrupt.",
    )
    barge_in_hold_ms: int = Field(
        60,
        ge=0,
        description="With barge_in: consecutive talk-over (within twice this "
        "after a first consonant) that asks the voice to hold (audio/talk_over true) "
        "until it is a barge-in or the person stops; 0 = never hold (the robot talks on "
        "until the barge-in).",
    )
    barge_in_release_ms: int = Field(
        400,
        gt=0,
        description="A held voice goes on (audio/talk_over false) after "
        "this long without talk-over, when it did not become a barge-in.",
    )
    barge_in_long_hold_ms: int = Field(
        1200,
        gt=0,
        description="A hold with no pause of barge_in_release_ms "
        "for this long is a barge-in (the person keeps talking, though too "
        "little of it stands out of the echo for barge_in_min_ms).",
    )
    barge_in_double_talk_db: float = Field(
        6.0,
        ge=0.0,
        le=30.0,
        description="With echo_cancel: a voiced frame "
        "from which the converged canceller took at most this much (dB) counts "
        "as the person talking, even under the robot's echo level.",
    )
    barge_in_high_band_db: float = Field(
        14.0,
        ge=0.0,
        le=40.0,
        description="With echo_cancel: a voiced frame "
        "whose level above 3.5 kHz is this much (dB) over the robot's cancelled "
        "echo there counts as talk-over for the hold (a person's first "
        "consonant); 0 = off.",
    )
    echo_cancel: bool = Field(
        True,
        description="Take the robot's own voice (audio/played from the tts node) out "
        "of the signal before the VAD and the barge-in gate (libspeexdsp; "
        "without it: a warning on /diagnostics and the level gate alone).",
    )
    echo_filter_ms: int = Field(
        200, ge=20, le=1000, description="Echo path the canceller covers (delay plus room reverberation), in ms."
    )
    simulated_echo_db: float = Field(
        0.0,
        le=0.0,
        description="WAV source only (headless runs, tests): mix the "
        "played audio into the file's audio at this gain in dB, as a loudspeaker "
        "in the room would be heard; 0 = off.",
    )
    simulated_echo_delay_ms: float = Field(50.0, ge=0.0, le=500.0, description="Delay of that simulated echo.")
    echo_tail_ms: int = Field(300, ge=0, description="Stay muted this long after the robot stops (room echo).")
    preroll_ms: int = Field(300, ge=0, description="Audio kept from before a barge-in and published with it.")

    @field_validator("source")
    @classmethod
    def _source_exists(cls, value: str) -> str:
        if value and not Path(value).expanduser().is_file():
            raise ValueError(f"recording not found: {value}")
        return value

    @field_validator("wait_for_nodes")
    @classmethod
    def _node_names(cls, value: list[str]) -> list[str]:
        bad = [name for name in value if not name or "/" in name or name != name.strip()]
        if bad:
            raise ValueError(f"node names in the mic's namespace expected (no '/'), got {bad}")
        return value

    @model_validator(mode="after")
    def _check(self) -> MicConfig:
        self.vad_settings().validate()
        if self.simulated_echo_db and not self.source:
            raise ValueError("simulated_echo_db needs a WAV source (a microphone hears the real echo)")
        if self.echo_cancel and self.channels != 1:
            raise ValueError("echo_cancel works on mono input (channels 1)")
        return self

    @property
    def uses_played_audio(self) -> bool:
        return self.echo_cancel or bool(self.simulated_echo_db)

    def vad_settings(self) -> VadSettings:
        return self.vad_settings_with(stop_ms=self.vad_stop_ms, snr_db=self.vad_snr_db)

    def duplex_settings(self) -> DuplexSettings:
        return DuplexSettings(
            barge_in=self.barge_in,
            margin_db=self.barge_in_margin_db,
            min_ms=self.barge_in_min_ms,
            window_ms=self.barge_in_min_ms + 400,
            hold_ms=self.barge_in_hold_ms,
            release_ms=self.barge_in_release_ms,
            long_hold_ms=self.barge_in_long_hold_ms,
            double_talk_db=self.barge_in_double_talk_db,
            high_band_margin_db=self.barge_in_high_band_db,
            echo_tail_ms=self.echo_tail_ms,
        )


# What can change while running: thresholds applied from the next chunk, without reopening the
# device. The device, the source and the stream format (rate, chunk size, channels) are read-only.
LIVE_PARAMETERS = (
    frozenset(
        {
            "vad_stop_ms",
            "vad_snr_db",
            "barge_in",
            "barge_in_margin_db",
            "barge_in_min_ms",
            "echo_tail_ms",
            "preroll_ms",
            "echo_cancel",
            "barge_in_hold_ms",
            "barge_in_release_ms",
            "barge_in_long_hold_ms",
            "barge_in_double_talk_db",
            "barge_in_high_band_db",
        }
    )
    | VAD_LIVE_PARAMETERS
)
ECHO_STATUS = "echo cancellation"
ROOM_STATUS = "room"
CAPTURE_STATUS = "capture"
ROBOT_VOICE_STATUS = "robot voice"


class Mic(ManagedNode):
    def __init__(self) -> None:
        super().__init__("mic", namespace=topics.DEFAULT_NAMESPACE)
        self.config = cfg = declare_config(self, MicConfig, live=LIVE_PARAMETERS, apply=self._apply_live)
        self.core = self._new_core(cfg)
        self.audio_pub = self.create_publisher(AudioChunk, topics.AUDIO_RAW, qos.AUDIO)
        self.voice_pub = self.create_publisher(Bool, topics.VOICE_ACTIVE, qos.LATCHED)
        self.interrupt_pub = self.create_publisher(Empty, topics.INTERRUPT, qos.EVENTS)
        self.barge_in_pub = self.create_publisher(Empty, topics.BARGE_IN, qos.EVENTS)
        self.talk_over_pub = self.create_publisher(Bool, topics.TALK_OVER, qos.EVENTS)
        self.talk_over_clip_pub = self.create_publisher(AudioChunk, topics.TALK_OVER_CLIP, qos.EVENTS)
        self.voice_pub.publish(Bool(data=False))
        self.listening_pub = self.create_publisher(Bool, topics.MIC_LISTENING, qos.LATCHED)
        self.listening_pub.publish(Bool(data=True))
        self._speaking_sub = self.create_subscription(
            SpeechState, topics.ROBOT_SPEAKING, self._on_robot_speaking, qos.LATCHED
        )
        # Subscribed only while used: the tts node publishes what it plays only while someone listens.
        self._played_sub: Subscription | None = None
        # The played audio goes straight into the core (not through the worker's queue), so a
        # chunk can wait for it; the lock keeps it from changing under a chunk being processed.
        self._played_lock = threading.Condition()
        self._follow_played(cfg)
        self.source: WavFileSource | SoundDeviceSource | None = None
        self._worker: BoundedWorker[tuple] | None = None
        self._listener_timer: Timer | None = None
        self._waiting_since = 0.0
        # With a WAV source: the nodes it waits for (wait_for_nodes) -> whether each said ready.
        self._nodes_ready: dict[str, bool] = {}
        if cfg.source:
            for name in cfg.wait_for_nodes:
                self._nodes_ready[name] = False
                self.create_subscription(
                    Bool, ready_topic(name, self.get_namespace()), self._node_ready_callback(name), READY_QOS
                )
        self._robot_speaking = False  # the latest robot_speaking, for a core made after it arrived
        self.frame_id = "mic"
        # Until configure opens it: the device (or file) asked for.
        health(self).hardware_id = f"wav:{Path(cfg.source).name}" if cfg.source else (cfg.device or "default input")
        # (before its check is added: `add` runs the check at once)
        self._lost = AudioLoss()
        health(self).add(ROOM_STATUS, self._room_health)
        health(self).add(CAPTURE_STATUS, self._capture_health)
        health(self).add(ROBOT_VOICE_STATUS, self._robot_voice_health)

    def _room_health(self) -> tuple[str, str, dict[str, str]]:
        """What the VAD hears of the room: its noise floor, a steady sound (mains hum, a fan) it
        does not take for voice, the microphone's DC offset, a voice too quiet to be heard."""
        core = self.core
        if core is None or not core.vad.samples_seen:
            return "ok", "no audio yet", {}
        return core.vad.room().status()

    def _capture_health(self) -> tuple[str, str, dict[str, str]]:
        """Audio lost before anyone heard it (hearing.audio_loss): input overflows and chunks the
        busy worker dropped."""
        overflows = getattr(self.source, "overflows", 0)
        dropped = self._worker.dropped if self._worker is not None else 0
        return self._lost.status(overflows, dropped, time.monotonic())

    def _robot_voice_health(self) -> tuple[str, str, dict[str, str]]:
        """Whether the mic hears from a tts: its speaking state (the half-duplex gate) and, for
        the canceller and the room echo, what it plays. A tts found late (DDS discovery on a busy
        machine) leaves its first played audio uncancelled, so the gate learns a louder echo."""
        speaking = self._speaking_sub.get_publisher_count()
        values = {"robot_speaking publishers": str(speaking)}
        message = f"robot_speaking from {speaking} publisher(s)"
        if self._played_sub is not None:
            played = self._played_sub.get_publisher_count()
            values["audio/played publishers"] = str(played)
            message += f", audio/played from {played}"
        return "ok", message, values

    def _new_core(self, cfg: MicConfig) -> MicCore:
        room = RoomEcho(cfg.simulated_echo_db, cfg.simulated_echo_delay_ms) if cfg.simulated_echo_db else None
        return MicCore(
            cfg.rate,
            cfg.vad_settings(),
            cfg.duplex_settings(),
            cfg.preroll_ms,
            chunk_ms=1000.0 * cfg.chunk_size / cfg.rate,
            echo=self._new_echo(cfg),
            room_echo=room,
        )

    def _new_echo(self, cfg: MicConfig) -> EchoCanceller | None:
        """The canceller echo_cancel asks for; None (and why, on /diagnostics) otherwise."""
        if not cfg.echo_cancel:
            health(self).set(ECHO_STATUS, "ok", "off (echo_cancel false)")
            return None
        try:
            echo = EchoCanceller(cfg.rate, frame_ms=1000.0 * cfg.chunk_size / cfg.rate, tail_ms=cfg.echo_filter_ms)
        except EchoCancellerUnavailable as exc:
            self.get_logger().warning(f"{exc}; barge-in uses the level gate alone")
            health(self).set(ECHO_STATUS, "warning", f"unavailable, level gate alone: {exc}")
            return None
        health(self).set(ECHO_STATUS, "ok", "on (reference: audio/played)")
        return echo

    # -- lifecycle ---------------------------------------------------------------------------
    def configure_node(self) -> None:
        cfg = self.config
        self.core = self._new_core(cfg)
        self.core.set_robot_speaking(self._robot_speaking, time.monotonic())
        try:
            if cfg.source:
                self.source = WavFileSource(
                    cfg.source, cfg.rate, cfg.chunk_size, cfg.channels, self._on_chunk, loop=cfg.loop
                )
            else:
                self.source = SoundDeviceSource(cfg.device, cfg.rate, cfg.chunk_size, cfg.channels, self._on_chunk)
        except (NoInputDevice, AudioFormatError) as exc:
            raise ConfigError(str(exc)) from None
        self.frame_id = self.source.name if cfg.source else "mic"
        health(self).hardware_id = self.source.name
        self._worker = BoundedWorker(
            self._work, MIC_QUEUE_CHUNKS, "mic-worker", on_drop=self._on_drop, on_error=self._on_error
        )
        self._worker.start()
        if self.config is not cfg:  # a live change arrived while configuring
            self._worker.put(("config", self.config, 0.0), droppable=False)
        self.get_logger().info(
            f"mic configured: {self.source.name}, {cfg.rate} Hz, {cfg.channels} ch, "
            f"{cfg.chunk_size} frames/chunk, barge_in={cfg.barge_in}"
        )

    def activate_node(self) -> None:
        assert self.source is not None
        waiting_for = self._waiting_for()
        if waiting_for:
            self.get_logger().info(f"waiting for {' and '.join(waiting_for)} before playing {self.source.name}")
            self._waiting_since = time.monotonic()
            self._listener_timer = self.create_timer(0.05, self._start_when_heard)
        else:
            self.source.start()

    def deactivate_node(self) -> None:
        self._cancel_listener_timer()
        if self.source is not None:
            self.source.pause()
        if self._worker is not None:
            self._worker.put(("paused", None, 0.0), droppable=False)

    def cleanup_node(self) -> None:
        self._cancel_listener_timer()
        if self.source is not None:
            self.source.stop()
            self.source = None
        if self._worker is not None:
            self._worker.stop(2)
            self._worker = None

    def _cancel_listener_timer(self) -> None:
        if self._listener_timer is not None:
            self._listener_timer.cancel()
            self.destroy_timer(self._listener_timer)
            self._listener_timer = None

    def _publish_audio(self, publisher, samples: np.ndarray, captured: float) -> None:
        msg = AudioChunk(sample_rate=self.config.rate, channels=self.config.channels)
        msg.header.stamp = to_time_msg(self._ros_time(captured))
        msg.header.frame_id = self.frame_id
        msg.data = array.array("h", samples.astype("<i2").tobytes())
        publisher.publish(msg)

    def _node_ready_callback(self, name: str) -> Callable[[Bool], None]:
        return lambda msg: self._on_node_ready(name, msg)

    def _on_node_ready(self, name: str, msg: Bool) -> None:
        self._nodes_ready[name] = bool(msg.data)

    def _unready_nodes(self) -> list[str]:
        return [name for name, ready in self._nodes_ready.items() if not ready]

    def _listened(self) -> bool:
        return not self.config.wait_for_listener or self.audio_pub.get_subscription_count() > 0

    def _waiting_for(self) -> list[str]:
        """What a WAV source still waits for before it plays (nothing for a microphone)."""
        if not self.config.source:
            return []
        waiting = []
        if not self._listened():
            waiting.append(f"a subscriber on {self.audio_pub.topic_name}")
        unready = self._unready_nodes()
        if unready:
            waiting.append(f"{', '.join(unready)} to be ready")
        return waiting

    def _start_when_heard(self) -> None:
        if self.source is None or not self._listened():
            return
        unready = self._unready_nodes()
        if unready:
            if time.monotonic() - self._waiting_since < self.config.wait_for_nodes_s:
                return
            self.get_logger().warning(
                f"{', '.join(unready)} not ready after {self.config.wait_for_nodes_s:g} s: "
                f"playing {self.source.name} anyway"
            )
        else:
            self.get_logger().info(
                f"a listener subscribed{' and the companion is ready' if self._nodes_ready else ''}"
                f": playing {self.source.name}"
            )
        self._cancel_listener_timer()
        self.source.start()

    # -- live parameters -----------------------------------------------------------------------
    def _apply_live(self, cfg: MicConfig, changed: frozenset[str]) -> None:
        """Validated by MicConfig already; the worker applies it before the next chunk."""
        self.config = cfg
        self._follow_played(cfg)
        if self._worker is not None:
            self._worker.put(("config", cfg, 0.0), droppable=False)
        if changed:
            self.get_logger().info(f"live parameters changed: {', '.join(sorted(changed))} (from the next chunk)")

    # -- audio ---------------------------------------------------------------------------------
    def _on_robot_speaking(self, msg: SpeechState) -> None:
        # A state change is never dropped: the gate would stay muted or open.
        self._robot_speaking = bool(msg.speaking)
        if self._worker is not None:
            self._worker.put(("speaking", bool(msg.speaking), time.monotonic()), droppable=False)

    def _follow_played(self, cfg: MicConfig) -> None:
        if cfg.uses_played_audio and self._played_sub is None:
            self._played_sub = self.create_subscription(AudioChunk, topics.AUDIO_PLAYED, self._on_played, qos.AUDIO)
        elif not cfg.uses_played_audio and self._played_sub is not None:
            self.destroy_subscription(self._played_sub)
            self._played_sub = None

    def _on_played(self, msg: AudioChunk) -> None:
        worker = self._worker
        if not (self.active and worker is not None and self.config.uses_played_audio):
            return
        if msg.channels != 1 or not 8000 <= msg.sample_rate <= 192000:
            self.get_logger().warning(
                f"audio/played: ignored a block of {msg.channels} channel(s) at "
                f"{msg.sample_rate} Hz (expected mono, 8-192 kHz)",
                throttle_duration_sec=5.0,
            )
            return
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        samples = np.frombuffer(array.array("h", msg.data).tobytes(), dtype=np.int16)
        with self._played_lock:
            late = self.core.add_played(samples, int(msg.sample_rate), self._monotonic(stamp))
            self._played_lock.notify_all()
        if late and self.core.gate.robot_speaking and self.config.barge_in:
            # (what to look for when the robot held on its own voice on a busy machine)
            self.get_logger().info(
                f"audio/played: a block came {late * 1000:.0f} ms after the microphone audio "
                f"of its time was processed ({self.core.late_blocks} so far); the barge-in "
                f"gate does not judge the audio its echo is in",
                throttle_duration_sec=2.0,
            )

    def _monotonic(self, ros_seconds: float) -> float:
        """The audio-clock time of a ROS stamp (the inverse of _ros_time)."""
        return ros_seconds - (self.get_clock().now().nanoseconds * 1e-9 - time.monotonic())

    def _on_chunk(self, samples, capture_monotonic: float) -> None:
        worker = self._worker
        if self.active and worker is not None:
            worker.put(("audio", samples, capture_monotonic))

    def _on_drop(self, total: int) -> None:
        self.get_logger().warning(
            f"mic worker is behind: dropped the oldest chunk ({total} dropped so far)", throttle_duration_sec=5.0
        )

    def _on_error(self, item: tuple, exc: Exception) -> None:
        failed = self._worker.failed if self._worker is not None else "?"
        self.get_logger().error(
            f"mic worker failed on a {item[0]} item: {type(exc).__name__}: {exc}; item dropped ({failed} so far)",
            throttle_duration_sec=5.0,
        )

    def _ros_time(self, monotonic: float) -> float:
        now = self.get_clock().now().nanoseconds * 1e-9
        return now - (time.monotonic() - monotonic)

    def _work(self, item: tuple) -> None:
        kind, payload, when = item
        if kind == "config":
            cfg: MicConfig = payload
            self.core.update(cfg.vad_settings(), cfg.duplex_settings(), cfg.preroll_ms)
            if cfg.echo_cancel != (self.core.echo is not None):
                self.core.echo = self._new_echo(cfg)
            return
        if kind == "paused":
            if self.core.voice_active:  # no voice is heard while paused
                self.core.voice_active = False
                self.voice_pub.publish(Bool(data=False))
            return
        if kind == "speaking":
            if payload != self.core.gate.robot_speaking:
                mode = "listening for barge-in" if self.config.barge_in else "muted"
                self.get_logger().info(f"robot_speaking={str(payload).lower()}: {mode if payload else 'listening'}")
            self.core.set_robot_speaking(payload, when)
            self.listening_pub.publish(Bool(data=self.core.gate.open))
            return
        with self._played_lock:
            if self.config.uses_played_audio:
                chunk_end = when + len(payload) / self.config.rate
                self._played_lock.wait_for(
                    lambda: not when - PLAYED_FLOWING_S < self.core.played.end < chunk_end, PLAYED_WAIT_S
                )
            out = self.core.process(payload, when, time.monotonic(), captured=when)
        if out.talk_over_clip is not None:  # before the release: the tts waits a moment for a stop
            self._publish_audio(
                self.talk_over_clip_pub,
                out.talk_over_clip,
                when - (len(out.talk_over_clip) - len(payload)) / self.config.rate,
            )
        if out.talk_over is not None:
            self.talk_over_pub.publish(Bool(data=out.talk_over))
        if out.interrupt:
            self.barge_in_pub.publish(Empty())
            self.interrupt_pub.publish(Empty())
            self.get_logger().info("barge-in: the person talked over the robot; interrupt published")
            self.listening_pub.publish(Bool(data=self.core.gate.open))
        for samples, captured in out.chunks:
            self._publish_audio(self.audio_pub, samples, captured)
        if out.voice_active is not None:
            self.voice_pub.publish(Bool(data=out.voice_active))


def main(args: list[str] | None = None) -> int:
    return run_node(Mic, args, threads=1)


if __name__ == "__main__":
    raise SystemExit(main())
