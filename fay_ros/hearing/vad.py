"""Voice activity: a per-frame speech classifier plus start/stop hysteresis.

A frame (30 ms) counts as voiced when the speech model calls it speech AND its level is clearly
above the tracked noise floor (and above an absolute minimum) AND the sound is not steady, so
hum, clicks and a quiet room do not count. Real microphones add a DC offset and mains hum. A
DC blocker (a one-pole high-pass at about 13 Hz) takes the offset out before the speech model
hears the frame. The level counts as clear on the whole band (as always: a voice's last
syllables and their room) OR on the frame's energy from VOICE_BAND_HZ (250 Hz) up against a
floor of its own: mains hum (50/60 Hz and its strongest harmonics) lies below 250 Hz and the
formants that carry speech above, so a quiet voice over hum still clears its floor there (on
the whole band alone, -32 dBFS of hum became the floor and hid a LibriVox reader entirely;
the voice band alone cut the real recordings' last syllables and cut off four times as many
turns). A sound whose level stays within `steady_range_db` for `steady_ms` is steady noise
(hum, a fan, hiss), never voice, however speech-like the model finds it (the WebRTC VAD calls
50 Hz hum at -32 dBFS speech in every frame); the floors learn it quickly. Speech never holds
its level that long: syllables swing it by 10-20 dB several times a second.

The speech model is the WebRTC VAD (`model="webrtc"`, a GMM on
band energies), Silero VAD v6 (`model="silero"`, a small network over 32 ms windows, the
ONNX file faster-whisper ships, run with onnxruntime on one thread, about 0.1 ms a window),
or both (`model="webrtc+silero"`: the WebRTC VAD's speech, confirmed by Silero's P(speech) of
at least `silero_confirm`, 0.2). On human recordings Silero stops calling it speech sooner
after the last word (the reverberation and breath the WebRTC VAD still takes for voice, and a
room's own noise, which kept the WebRTC VAD open after 4 of 12 real recordings), but at its
own threshold it also hears the natural pauses inside a sentence as silence. Confirming the
WebRTC VAD with a low Silero threshold keeps those pauses and drops the room:
docs/turn_taking.md.

Voice starts after `start_ms` of voiced frames within a short
window (one noisy frame never starts it) and stops after `stop_ms` of continuous unvoiced
frames (a pause between words does not end an utterance).

Sample positions in events count input samples since the detector was created.
"""

from __future__ import annotations

import functools
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import webrtcvad

from .audio import MAX_GAIN_DB, level_dbfs, resample

WEBRTC_RATES = (8000, 16000, 32000, 48000)
# The asr's Silero veto on the WebRTC VAD (VadSettings.silero_veto_ms): the background of 3 of
# 12 real recordings never let the WebRTC VAD end an utterance; with this each ends 0.1-2.8 s
# after the voice, and padded with silence nothing changes (test_vad_silero).
DEFAULT_SILERO_VETO_MS = 400
VAD_MODELS = ("webrtc", "silero", "webrtc+silero")
SILERO_RATE = 16000
SILERO_WINDOW = 512  # samples per call at 16 kHz (32 ms): the only size the model takes
SILERO_CONTEXT = 64  # samples of the previous window the model reads before each window
DC_POLE = 0.995  # the DC blocker's pole at 16 kHz: -3 dB at about 13 Hz, far below any voice
VOICE_BAND_HZ = 250.0  # the level gate's band starts here: above mains hum's 50-180 Hz
VOICE_LEVEL_FRAMES = 10  # voiced frames that set a voice's own level (voice_level_db)
RECENT_FRAMES = 400  # frames kept for loudest_voiced_since: 12 s of 30 ms frames
# A voice too quiet for `min_level_dbfs` (a microphone at low gain, a far speaker) is never
# voice, and nothing says why: the frames of the last QUIET_WINDOW_S the speech model calls
# speech and that stand clear of the noise floor are counted by level, and when at least
# QUIET_VOICE_FRAMES of them and more than half lie under the minimum, RoomSound says so
# (the mic node's "room" status on /diagnostics).
QUIET_WINDOW_S = 10.0
QUIET_VOICE_FRAMES = 10
# The median level of a voice's frames at a microphone's usual gain (the real-speech set's
# voiced frames: about -25 to -35 dBFS): what RoomSound.suggested_gain_db aims for.
QUIET_VOICE_TARGET_DBFS = -28.0


def voice_band_dbfs(frame: np.ndarray, rate: int) -> float:
    """The frame's mean-square level from VOICE_BAND_HZ up, in dB relative to full scale (a
    Hann window keeps a 50 Hz hum from leaking into the band; silence -> -120)."""
    n = len(frame)
    if not n:
        return -120.0
    window = _hann(n)
    spectrum = np.fft.rfft(np.asarray(frame, np.float64) * window)
    first = int(np.ceil(VOICE_BAND_HZ * n / rate))
    power = 2.0 * float(np.sum(np.abs(spectrum[first:]) ** 2)) / (n * float(np.sum(window**2)))
    return 10.0 * np.log10(max(power, 1e-12) / 32768.0**2)


@functools.lru_cache(maxsize=8)
def _hann(n: int) -> np.ndarray:
    return np.hanning(n)


@functools.lru_cache(maxsize=8)
def _powers(pole: float, n: int) -> np.ndarray:
    """pole ** 0 .. pole ** (n - 1): every frame of a stream has the same length."""
    return pole ** np.arange(n)


class DcBlocker:
    """y[n] = x[n] - x[n-1] + r * y[n-1], with its state carried from frame to frame."""

    def __init__(self, pole: float = DC_POLE) -> None:
        self.pole = pole
        self._x = 0.0  # the last input sample
        self._y = 0.0  # the last output sample
        self.offset = 0.0  # the input's mean over the last second or so, in samples (for diagnostics)

    def __call__(self, frame: np.ndarray) -> np.ndarray:
        x = np.asarray(frame, np.float64)
        if not len(x):
            return x.astype(np.int16)
        step = np.diff(x, prepend=self._x)
        # the recursion in closed form over one frame (pole**-n stays small for a frame's length)
        powers = _powers(self.pole, len(x))
        y = powers * (self.pole * self._y + np.cumsum(step / powers))
        self._x, self._y = float(x[-1]), float(y[-1])
        self.offset += 0.05 * (float(np.mean(x)) - self.offset)
        return np.clip(np.round(y), -32768, 32767).astype(np.int16)


@dataclass(frozen=True)
class VadSettings:
    frame_ms: int = 30
    aggressiveness: int = 2  # WebRTC VAD mode 0 (permissive) .. 3 (strict)
    start_ms: int = 150  # voiced time needed (within start_window_ms) to start
    start_window_ms: int = 300
    stop_ms: int = 500  # continuous unvoiced time that ends voice activity
    min_level_dbfs: float = -50.0  # quieter frames are never speech
    snr_db: float = 9.0  # a voiced frame must be this far above the noise floor
    model: str = "webrtc"  # the speech model: "webrtc", "silero" or "webrtc+silero" (VAD_MODELS)
    silero_threshold: float = 0.5  # Silero: P(speech) from which a window is speech
    silero_confirm: float = 0.2  # webrtc+silero: the P(speech) a frame the WebRTC VAD calls speech needs
    # webrtc: once the WebRTC VAD has called this much speech since Silero last heard any
    # (P >= silero_confirm), its "speech" is the room's noise (0: never)
    silero_veto_ms: int = 0
    steady_ms: int = 1000  # a sound this long within steady_range_db is steady noise (0: never)
    steady_range_db: float = 3.0

    @property
    def uses_silero(self) -> bool:
        """Silero hears the frames (alone, or confirming the WebRTC VAD): 16 kHz only."""
        return self.model in ("silero", "webrtc+silero") or self.silero_veto_ms > 0

    def validate(self) -> None:
        if self.frame_ms not in (10, 20, 30):
            raise ValueError(f"frame_ms must be 10, 20 or 30 (got {self.frame_ms})")
        if self.model not in VAD_MODELS:
            raise ValueError(f"model must be one of {', '.join(VAD_MODELS)} (got {self.model!r})")
        if not 0.0 < self.silero_threshold < 1.0:
            raise ValueError(f"silero_threshold must be between 0 and 1 (got {self.silero_threshold})")
        if not 0.0 < self.silero_confirm < 1.0:
            raise ValueError(f"silero_confirm must be between 0 and 1 (got {self.silero_confirm})")
        if self.silero_veto_ms < 0:
            raise ValueError(f"silero_veto_ms must be >= 0 (got {self.silero_veto_ms})")
        if not 0 <= self.aggressiveness <= 3:
            raise ValueError(f"aggressiveness must be 0..3 (got {self.aggressiveness})")
        if self.steady_ms < 0 or self.steady_range_db <= 0:
            raise ValueError(
                f"need steady_ms >= 0 and steady_range_db > 0 (got {self.steady_ms}, {self.steady_range_db})"
            )
        if self.start_ms <= 0 or self.start_window_ms < self.start_ms:
            raise ValueError("need 0 < start_ms <= start_window_ms")
        if self.stop_ms <= 0:
            raise ValueError("stop_ms must be > 0")


@dataclass(frozen=True)
class RoomSound:
    """The room as the VAD hears it."""

    noise_floor_db: float  # dBFS, whole band
    band_floor_db: float  # dBFS, from VOICE_BAND_HZ up
    steady: bool  # a steady sound (hum, a fan) fills it now
    dc_offset: float  # the microphone's DC offset, as a fraction of full scale
    # a voice heard lately that was mostly too quiet to count (its median level, dBFS; None: none)
    quiet_voice_db: float | None = None
    min_level_db: float = -50.0  # the VAD's minimum level for voice (VadSettings.min_level_dbfs)

    def describe(self) -> str:
        what = (
            f"steady noise at {self.noise_floor_db:.0f} dBFS (hum or a fan; not taken for voice)"
            if self.steady
            else f"noise floor {self.noise_floor_db:.0f} dBFS"
        )
        if abs(self.dc_offset) >= 0.01:
            what += f", DC offset {100 * self.dc_offset:+.0f}% of full scale (taken out)"
        if self.quiet_voice_db is not None:
            what += (
                f"; a voice at about {self.quiet_voice_db:.0f} dBFS is too quiet to be heard (voice needs "
                f"{self.min_level_db:.0f} dBFS, vad_min_level_dbfs): raise the microphone's gain, or the asr's "
                f"input_gain_db, by about {self.suggested_gain_db:.0f} dB"
            )
        return what

    @property
    def suggested_gain_db(self) -> float:
        """The gain that brings the too-quiet voice to a microphone's usual level (0: none needed)."""
        if self.quiet_voice_db is None:
            return 0.0
        return float(min(MAX_GAIN_DB, max(5.0, 5.0 * round((QUIET_VOICE_TARGET_DBFS - self.quiet_voice_db) / 5.0))))

    def status(self) -> tuple[str, str, dict[str, str]]:
        """(level, message, values) of a node's "room" status on /diagnostics: a warning while a
        voice too quiet to be heard was heard lately."""
        values = {
            "noise_floor_dbfs": f"{self.noise_floor_db:.1f}",
            "voice_band_floor_dbfs": f"{self.band_floor_db:.1f}",
            "steady_noise": "yes" if self.steady else "no",
            "dc_offset": f"{self.dc_offset:.3f}",
        }
        if self.quiet_voice_db is not None:
            values["quiet_voice_dbfs"] = f"{self.quiet_voice_db:.1f}"
            values["suggested_gain_db"] = f"{self.suggested_gain_db:.0f}"
        return ("warning" if self.quiet_voice_db is not None else "ok"), self.describe(), values


@dataclass(frozen=True)
class VadEvent:
    kind: str  # "start" or "end"
    sample: int  # "start": first sample of the first voiced frame; "end": end of the last voiced frame


@dataclass(frozen=True)
class Frame:
    start: int  # input-sample index of the frame's first sample
    end: int
    level_db: float
    voiced: bool


def silero_model_path() -> Path:
    """Silero VAD v6 as faster-whisper (the Whisper backend) ships it."""
    import faster_whisper

    return Path(faster_whisper.__file__).parent / "assets" / "silero_vad_v6.onnx"


class SileroSpeech:
    """P(speech) of consecutive 32 ms windows of 16 kHz audio, Silero VAD v6 with its state
    (the LSTM's h and c, and the last 64 samples) carried from window to window. A frame
    shorter than a window is buffered: `feed` answers with the latest whole window."""

    def __init__(self, path: str | Path | None = None) -> None:
        import onnxruntime as ort

        found = Path(path) if path else silero_model_path()
        if not found.is_file():
            raise FileNotFoundError(f"Silero VAD model not found: {found} (faster-whisper ships it; `make setup`)")
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # a window is ~0.1 ms: more threads only wait for each other
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self._session = ort.InferenceSession(str(found), sess_options=options, providers=["CPUExecutionProvider"])
        self._h = np.zeros((1, 1, 128), np.float32)
        self._c = np.zeros((1, 1, 128), np.float32)
        self._context = np.zeros(SILERO_CONTEXT, np.float32)
        self._pending = np.zeros(0, np.float32)
        self.probability = 0.0
        # the lower of the latest two windows' P(speech): a voice holds it for 64 ms and more,
        # a room's noise only flickers one window up (0.2-0.45, one in a few, on some CPUs)
        self.held = 0.0

    def feed(self, samples: np.ndarray) -> float:
        """Run every whole window `samples` completes; returns the latest window's P(speech)."""
        audio = np.concatenate([self._pending, np.asarray(samples, np.float32) / 32768.0])
        whole = len(audio) // SILERO_WINDOW * SILERO_WINDOW
        for start in range(0, whole, SILERO_WINDOW):
            window = audio[start : start + SILERO_WINDOW]
            out, self._h, self._c = self._session.run(
                None, {"input": np.concatenate([self._context, window])[None, :], "h": self._h, "c": self._c}
            )
            previous, self.probability = self.probability, float(np.asarray(out).reshape(-1)[0])
            self.held = min(previous, self.probability)
            self._context = window[-SILERO_CONTEXT:]
        self._pending = audio[whole:]
        return self.probability


class FrameClassifier:
    """The speech model's decision gated by level: voiced = speech-like AND clearly above the noise."""

    def __init__(self, settings: VadSettings, rate: int) -> None:
        self.settings = settings
        self.rate = rate
        self._vad = webrtcvad.Vad(settings.aggressiveness)
        self.silero_missing = ""  # why the Silero veto is off though asked for ("" = it is not)
        try:
            self._silero = SileroSpeech() if settings.uses_silero else None
        except FileNotFoundError as exc:
            if settings.model != "webrtc":
                raise
            self._silero, self.silero_missing = None, str(exc)  # (the veto only: the WebRTC VAD alone)
        if self._silero is not None and rate != SILERO_RATE:
            raise ValueError(f"Silero VAD takes {SILERO_RATE} Hz frames (got {rate})")
        self.noise_floor_db = -70.0  # whole band
        self.band_floor_db = -70.0  # from VOICE_BAND_HZ up
        self.steady = False  # the latest frame was steady noise
        self._levels: deque[float] = deque()  # the latest frames' levels, for the steady-sound test
        self._dc_blocker = DcBlocker(DC_POLE ** (16000 / rate))  # the same -3 dB frequency at any rate
        self._unheard_ms = 0  # the WebRTC VAD's speech since Silero last heard any (silero_veto_ms)
        self.heard = False  # Silero heard speech in the latest frame (P >= silero_confirm)
        # ... and was sure of it (P >= silero_threshold over two windows): an utterance with no
        # such frame is the room (a voice's tail, a fan's swell), which Silero hears as 0.2-0.4
        self.sure = False
        # the last QUIET_WINDOW_S of speech-like frames clear of the noise floor: (frame number,
        # level, under min_level_dbfs) (`quiet_voice_db`)
        self._speech_levels: deque[tuple[int, float, bool]] = deque(maxlen=self._window_frames)
        self._frame_number = 0

    def update(self, settings: VadSettings) -> None:
        """New mode and thresholds from the next frame on; the tracked noise floor stays (the
        detector keeps the model: VoiceActivityDetector.update)."""
        self.settings = settings
        self._vad.set_mode(settings.aggressiveness)

    @property
    def hears_speech(self) -> bool:
        """Silero runs on the frames (it says whether any speech was heard)."""
        return self._silero is not None

    def _steady(self, level: float, frame_len: int) -> bool:
        """The sound has stayed within steady_range_db for steady_ms (this frame included)."""
        frames = self.settings.steady_ms * self.rate // (1000 * frame_len)
        if frames <= 0:
            return False
        self._levels.append(level)
        while len(self._levels) > frames:
            self._levels.popleft()
        return len(self._levels) == frames and max(self._levels) - min(self._levels) <= self.settings.steady_range_db

    def _speech_like(self, frame: np.ndarray) -> bool:
        """The speech model's call on the frame."""
        model = self.settings.model
        # (Silero hears every frame: its state follows the audio)
        silero = self._silero.feed(frame) if self._silero is not None else 0.0
        # heard: Silero's P(speech) held over two windows (one window up is the room flickering)
        heard = self.heard = self._silero is not None and self._silero.held >= self.settings.silero_confirm
        self.sure = self._silero is not None and self._silero.held >= self.settings.silero_threshold
        if model == "silero":
            return silero >= self.settings.silero_threshold
        webrtc = self._vad.is_speech(frame.astype("<i2").tobytes(), self.rate)
        if model == "webrtc+silero":
            # (each frame as Silero calls it: the held value is for the veto and the turn's check)
            return webrtc and silero >= self.settings.silero_confirm
        # the veto: how long the WebRTC VAD has called it speech that Silero did not hear. Silence,
        # which neither calls speech, neither adds to it nor clears it: in a quiet room a voice
        # begins as the WebRTC VAD hears it (Silero takes a few windows to), and once the veto
        # holds in a noisy one the room cannot start an utterance of its own either.
        if heard:
            self._unheard_ms = 0
        elif webrtc:
            self._unheard_ms += len(frame) * 1000 // self.rate
        veto = self._silero is not None and 0 < self.settings.silero_veto_ms <= self._unheard_ms
        return webrtc and not veto

    @property
    def dc_offset(self) -> float:
        return self._dc_blocker.offset / 32768.0

    @property
    def _window_frames(self) -> int:
        return int(QUIET_WINDOW_S * 1000 / self.settings.frame_ms)

    def quiet_voice_db(self) -> float | None:
        """The median level (dBFS) of a voice of the last QUIET_WINDOW_S that was mostly too
        quiet to count (under min_level_dbfs), or None. (Read from any thread: it only copies.)"""
        oldest = self._frame_number - self._window_frames
        recent = [(level, under) for number, level, under in list(self._speech_levels) if number > oldest]
        quiet = [level for level, under in recent if under]
        if len(quiet) < QUIET_VOICE_FRAMES or 2 * len(quiet) <= len(recent):
            return None
        return float(np.median(quiet))

    def classify(self, frame: np.ndarray) -> tuple[bool, float]:
        """(voiced, the frame's full-band level in dBFS)."""
        frame = self._dc_blocker(frame)
        level = level_dbfs(frame)
        band = voice_band_dbfs(frame, self.rate)
        steady = self._steady(level, len(frame))
        speechy = self._speech_like(frame)
        over_noise = self.noise_floor_db + self.settings.snr_db
        over_band_noise = self.band_floor_db + self.settings.snr_db
        floor = max(self.settings.min_level_dbfs, over_noise)
        band_floor = max(self.settings.min_level_dbfs, over_band_noise)
        # Loud on the whole band (a voice's last syllables and their room, as always), or from
        # 250 Hz up (a voice over hum, which fills the low band and with it the whole-band floor).
        loud = level >= floor or band >= band_floor
        voiced = speechy and loud and not steady
        self._frame_number += 1
        if speechy and not steady and (level >= over_noise or band >= over_band_noise):
            self._speech_levels.append((self._frame_number, level, not loud))
        self.steady = steady
        if not voiced:
            self.noise_floor_db = _tracked(self.noise_floor_db, level, steady)
            self.band_floor_db = _tracked(self.band_floor_db, band, steady)
        return voiced, level


def _tracked(floor: float, level: float, steady: bool) -> float:
    """A noise floor after one more unvoiced frame: it falls fast (a quieter room), rises slowly
    (a louder room), or quickly to a steady sound (hum, a fan) so that speech must stand out."""
    alpha = 0.5 if level < floor else 0.3 if steady else 0.02
    return floor + alpha * (level - floor)


class VoiceActivityDetector:
    """Feed any number of int16 samples; get start/end events and the per-frame decisions."""

    def __init__(self, sample_rate: int, settings: VadSettings | None = None) -> None:
        self.settings = settings or VadSettings()
        self.settings.validate()
        self.sample_rate = sample_rate
        # WebRTC VAD only takes 8/16/32/48 kHz and Silero 16 kHz; other rates are resampled for the decision.
        if self.settings.uses_silero:
            self.vad_rate = SILERO_RATE
        else:
            self.vad_rate = sample_rate if sample_rate in WEBRTC_RATES else 16000
        self.frame_len = self.vad_rate * self.settings.frame_ms // 1000
        self.classifier = FrameClassifier(self.settings, self.vad_rate)
        self.active = False
        self._pending = np.zeros(0, dtype=np.int16)
        self._consumed_vad = 0  # vad-rate samples framed so far
        self._consumed_in = 0  # input samples received so far
        self._window: deque[Frame] = deque()
        self._apply_hysteresis()
        self._silent_run = 0
        self._last_voiced_end = 0
        # (input-sample index, frames): from that sample on, a shorter pause ends the voice
        # (`end_sooner`); None: only stop_ms does
        self._sooner: tuple[int, int] | None = None
        self._last_heard_end = 0
        self._last_sure_end = 0
        self._voice_levels: list[float] = []  # levels (dBFS) of the active voice's voiced frames
        self._recent: deque[Frame] = deque(maxlen=RECENT_FRAMES)  # (`loudest_voiced_since`)

    def _frames(self, ms: int) -> int:
        return max(1, round(ms / self.settings.frame_ms))

    def _apply_hysteresis(self) -> None:
        self._start_needed = self._frames(self.settings.start_ms)
        self._stop_needed = self._frames(self.settings.stop_ms)
        self._window = deque(self._window, maxlen=self._frames(self.settings.start_window_ms))

    def update(self, settings: VadSettings) -> None:
        """New thresholds (live parameters) from the next frame on. The noise floor, the frames
        in the start window and an ongoing voice stay: a change never cuts or invents speech
        by itself. The frame length cannot change (the frames in flight have the old one)."""
        settings.validate()
        if settings.frame_ms != self.settings.frame_ms:
            raise ValueError(f"frame_ms cannot change while running ({self.settings.frame_ms} -> {settings.frame_ms})")
        if settings.model != self.settings.model:
            raise ValueError(f"the VAD model cannot change while running ({self.settings.model} -> {settings.model})")
        if settings.uses_silero != self.settings.uses_silero:
            raise ValueError("Silero cannot join or leave the VAD while running (silero_veto_ms 0 <-> > 0)")
        self.settings = settings
        self.classifier.update(settings)
        self._apply_hysteresis()

    def _to_input_index(self, vad_index: int) -> int:
        return round(vad_index * self.sample_rate / self.vad_rate)

    def process(self, samples: np.ndarray) -> tuple[list[VadEvent], list[Frame]]:
        samples = np.asarray(samples, dtype=np.int16)
        self._consumed_in += len(samples)
        if self.vad_rate != self.sample_rate:
            samples = resample(samples, self.sample_rate, self.vad_rate)
        buf = np.concatenate([self._pending, samples]) if len(self._pending) else samples
        events: list[VadEvent] = []
        frames: list[Frame] = []
        n = len(buf) // self.frame_len
        for i in range(n):
            chunk = buf[i * self.frame_len : (i + 1) * self.frame_len]
            voiced, level = self.classifier.classify(chunk)
            start = self._to_input_index(self._consumed_vad)
            self._consumed_vad += self.frame_len
            frame = Frame(start, self._to_input_index(self._consumed_vad), level, voiced)
            if self.classifier.heard:
                self._last_heard_end = frame.end
            if self.classifier.sure:
                self._last_sure_end = frame.end
            frames.append(frame)
            event = self._step(frame)
            if event:
                events.append(event)
        self._pending = buf[n * self.frame_len :].copy()
        return events, frames

    def _step(self, frame: Frame) -> VadEvent | None:
        self._recent.append(frame)
        if self.active and frame.voiced:
            self._voice_levels.append(frame.level_db)
        self._window.append(frame)
        if frame.voiced:
            self._silent_run = 0
            self._last_voiced_end = frame.end
        else:
            self._silent_run += 1
        if not self.active:
            voiced = [f for f in self._window if f.voiced]
            if len(voiced) >= self._start_needed:
                self.active = True
                self._silent_run = 0
                self._voice_levels = [f.level_db for f in voiced]
                return VadEvent("start", voiced[0].start)
        elif self._silent_run >= self._stop_needed or (
            self._sooner is not None and frame.end > self._sooner[0] and self._silent_run >= self._sooner[1]
        ):
            self.active = False
            self._sooner = None
            self._window.clear()
            return VadEvent("end", self._last_voiced_end)
        return None

    def end_sooner(self, from_sample: int, pause_ms: int) -> None:
        """From input sample `from_sample` on, end the active voice at a pause of `pause_ms`
        instead of stop_ms (a long utterance near its maximum length closes between two
        words, not in one); for this voice only."""
        if self.active:
            self._sooner = (from_sample, self._frames(pause_ms))

    def force_end(self) -> VadEvent | None:
        """End an active utterance now (e.g. it reached the maximum length)."""
        if not self.active:
            return None
        self.active = False
        self._sooner = None
        self._window.clear()
        self._silent_run = 0
        return VadEvent("end", max(self._last_voiced_end, 0))

    @property
    def voice_level_db(self) -> float | None:
        """The active (or last) voice's own level: the 90th percentile of its voiced frames'
        levels (dBFS); None before VOICE_LEVEL_FRAMES of them."""
        if len(self._voice_levels) < VOICE_LEVEL_FRAMES:
            return None
        return float(np.percentile(self._voice_levels, 90))

    def loudest_voiced_since(self, sample: int) -> float:
        """The level (dBFS) of the loudest voiced frame that ends after input sample `sample`
        (-120 when none did; +inf when the frames kept no longer reach back to it)."""
        frames = self._recent
        if frames and frames[0].start > sample:
            return float("inf")
        return max((f.level_db for f in frames if f.voiced and f.end > sample), default=-120.0)

    @property
    def last_heard_end(self) -> int:
        """Input-sample index just after the last frame in which Silero heard speech."""
        return self._last_heard_end

    @property
    def last_sure_end(self) -> int:
        """Input-sample index just after the last frame in which Silero was sure of speech."""
        return self._last_sure_end

    @property
    def last_voiced_end(self) -> int:
        """Input-sample index just after the last voiced frame."""
        return self._last_voiced_end

    @property
    def silent_ms(self) -> int:
        """Continuous unvoiced time at the end of an active utterance (0 when inactive)."""
        return self._silent_run * self.settings.frame_ms if self.active else 0

    def room(self) -> RoomSound:
        """What the detector hears of the room (for diagnostics: read from any thread)."""
        c = self.classifier
        quiet = c.quiet_voice_db()
        return RoomSound(c.noise_floor_db, c.band_floor_db, c.steady, c.dc_offset, quiet, c.settings.min_level_dbfs)

    @property
    def samples_seen(self) -> int:
        return self._consumed_in
