"""End of turn from the sound of the voice: Pipecat's smart-turn v3.2 model (issue 38).

Smart Turn v3.2 (Daily, BSD-2-Clause; an 8.7 MB int8 ONNX model, a Whisper-tiny-sized encoder
with a classifier head) hears the last 8 s of a turn, 16 kHz mono, zero-padded at the start,
as 80-bin Whisper log-mel features of the zero-mean, unit-variance waveform (800 frames of
10 ms), and gives the probability that the speaker has finished. It hears intonation, rhythm
and the words together, in English better than in Mandarin. scripts/post_setup.d/turns.sh takes
it out of the hash-pinned pipecat-ai wheel at set-up into
`<prefix>/share/fay_ros/models/smart-turn-v3.2/`; nothing is fetched at run time.

`SemanticTurn.load()` never raises: a missing or unreadable model gives None and the reason,
and the caller keeps the word and prosody rules (fay_ros.turns.end_of_turn) and says so.
`SemanticTurn.probability()` never raises either: a failed run is nan (no opinion).

`SemanticSettings.wait_ms` folds the model's probability into the rules' wait:

- the words leave the sentence open (the text cue is incomplete), or the transcript's language
  is not in `languages` (English only by default: on the evaluation set's espeak-ng Mandarin
  it called 8 of 11 pauses inside a sentence finished): the rules decide, the model is not asked;
- p >= `finished`: the turn ends now (after `after_ms` of silence, when the model was asked);
- p < `unfinished`: the wait grows to `hold_ms` (a thinking pause), unless the words of a
  Mandarin transcript end a sentence (the model separates Mandarin less well);
- in between, or no opinion: the rules' wait.

The model is asked also when the recogniser's worker is behind the audio and has made no early
decode yet (the text cue is then unknown, the rules' wait the silence endpoint): one model call
costs a fraction of a decode, and without it a thinking pause longer than the endpoint would
end the turn on silence alone. Without the words it may only hold the turn open: "finished"
waits for the early decode, whose words may leave the sentence open ("four, queen of").
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .end_of_turn import COMPLETE, INCOMPLETE

MODEL_NAME = "smart-turn-v3.2"
MODEL_FILE = "smart-turn-v3.2-cpu.onnx"
RATE = 16000
WINDOW_S = 8
N_FFT, HOP, N_MELS = 400, 160, 80


def model_dirs() -> list[Path]:
    """Where the model may be, first found wins: $FAY_MODELS_DIR, then the venv's share."""
    dirs = []
    if os.environ.get("FAY_MODELS_DIR"):
        dirs.append(Path(os.environ["FAY_MODELS_DIR"]))
    dirs.append(Path(sys.prefix) / "share" / "fay_ros" / "models")
    return [d / MODEL_NAME / MODEL_FILE for d in dirs]


def find_model() -> Path | None:
    return next((p for p in model_dirs() if p.is_file()), None)


def _hz_to_mel(f: np.ndarray) -> np.ndarray:
    """Slaney's mel scale (linear below 1 kHz, logarithmic above), as Whisper's filters use."""
    f = np.asarray(f, dtype=np.float64)
    return np.where(f < 1000.0, 3.0 * f / 200.0, 15.0 + np.log(np.maximum(f, 1e-9) / 1000.0) * 27.0 / np.log(6.4))


def _mel_to_hz(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    return np.where(m < 15.0, 200.0 * m / 3.0, 1000.0 * np.exp((m - 15.0) * np.log(6.4) / 27.0))


def _mel_filters() -> np.ndarray:
    """(N_MELS, N_FFT // 2 + 1) Slaney-normalised triangles from 0 to 8 kHz (librosa's defaults)."""
    fft_freqs = np.fft.rfftfreq(N_FFT, 1.0 / RATE)
    edges = _mel_to_hz(np.linspace(0.0, float(_hz_to_mel(np.array(RATE / 2.0))), N_MELS + 2))
    ramps = edges[:, None] - fft_freqs[None, :]
    lower = -ramps[:-2] / np.diff(edges)[:-1, None]
    upper = ramps[2:] / np.diff(edges)[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    return weights * (2.0 / (edges[2:] - edges[:-2]))[:, None]


_FILTERS = _mel_filters()
_WINDOW = np.hanning(N_FFT + 1)[:-1]  # periodic Hann


def window(audio: np.ndarray) -> np.ndarray:
    """The last WINDOW_S seconds of int16 (or float) 16 kHz audio as float32 in [-1, 1],
    zero-padded at the start to exactly WINDOW_S seconds."""
    x = np.asarray(audio)
    x = x.astype(np.float32) / 32768.0 if x.dtype == np.int16 else x.astype(np.float32)
    n = WINDOW_S * RATE
    x = x[-n:]
    return np.pad(x, (n - len(x), 0)) if len(x) < n else x


def log_mel(x: np.ndarray) -> np.ndarray:
    """(80, 800) float32 Whisper log-mel features of WINDOW_S seconds of float audio, as
    transformers' WhisperFeatureExtractor(chunk_length=8, do_normalize=True) computes them
    (what the model was trained on): the waveform normalised to zero mean and unit variance,
    a centred 25 ms / 10 ms STFT, log10 power clamped 8 decades under its peak, scaled."""
    x = np.asarray(x, dtype=np.float32)
    x = (x - x.mean()) / np.sqrt(x.var() + 1e-7)
    padded = np.pad(x.astype(np.float64), N_FFT // 2, mode="reflect")
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP]
    power = np.abs(np.fft.rfft(frames * _WINDOW, axis=-1)) ** 2  # (801, 201)
    spec = np.log10(np.maximum(_FILTERS @ power.T, 1e-10))[:, :-1]  # (80, 800): the last frame dropped
    spec = np.maximum(spec, spec.max() - 8.0)
    return ((spec + 4.0) / 4.0).astype(np.float32)


class SemanticTurn:
    """The loaded model; `probability(audio)` that the turn in `audio` has ended."""

    def __init__(self, session: Any, path: Path) -> None:
        self._session = session
        self.path = path
        self._input = session.get_inputs()[0].name

    @classmethod
    def load(cls, path: str | Path | None = None) -> tuple[SemanticTurn | None, str]:
        """(model, "") or (None, why not). One inference thread: the recogniser has the other core."""
        found = Path(path) if path else find_model()
        if found is None or not found.is_file():
            where = found or " or ".join(str(p) for p in model_dirs())
            return None, f"smart-turn v3.2 model not found ({where}); run `make setup` (scripts/post_setup.d/turns.sh)"
        try:
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.log_severity_level = 3
            # The model is int8: without VNNI (AVX2 only) onnxruntime's u8s8 products saturate and
            # the same audio scored 0.83 on one CI machine and under 0.3 on another; widening them
            # to int16 gives every x64 CPU the same answer for ~15 ms more per call.
            options.add_session_config_entry("session.x64quantprecision", "1")
            session = ort.InferenceSession(str(found), sess_options=options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # (ImportError, a corrupt file: onnxruntime's own errors)
            return None, f"smart-turn v3.2 model unusable ({found}): {type(exc).__name__}: {exc}"
        return cls(session, found), ""

    def probability(self, audio: np.ndarray) -> float:
        """P(the turn has ended) for 16 kHz mono audio ending now (its last 8 s are heard);
        nan when the model fails (never an exception in the audio path)."""
        try:
            features = log_mel(window(audio))[None]
            out = self._session.run(None, {self._input: features})
            return float(np.asarray(out[0]).reshape(-1)[0])
        except Exception:
            return float("nan")


@dataclass(frozen=True)
class SemanticSettings:
    """How the model's probability moves the rules' wait (see the module docstring)."""

    enabled: bool = True
    after_ms: int = 200  # silence after which the model is asked
    finished: float = 0.7  # at or above: the turn ends now
    unfinished: float = 0.3  # below: the wait grows to hold_ms
    hold_ms: int = 1500  # the longest wait an "unfinished" asks for
    languages: tuple[str, ...] = ("en",)  # the transcript languages the model is asked for

    def validate(self) -> None:
        if self.after_ms <= 0 or self.hold_ms < self.after_ms:
            raise ValueError(f"semantic turn: need 0 < after_ms ({self.after_ms}) <= hold_ms ({self.hold_ms})")
        if not self.languages or not all(code.strip() for code in self.languages):
            raise ValueError(f"semantic turn: languages must be language codes such as 'en' (got {self.languages!r})")
        if not 0.0 <= self.unfinished <= self.finished <= 1.0:
            raise ValueError(
                f"semantic turn: need 0 <= unfinished ({self.unfinished}) <= finished ({self.finished}) <= 1"
            )

    def asks(self, text_cue: str, language: str) -> bool:
        """The model is asked for a transcript in one of `languages`, unless its words already
        leave the sentence open."""
        return text_cue != INCOMPLETE and language.split("-")[0].lower() in self.languages

    def wait_ms(self, rules_ms: int, text_cue: str, language: str, probability: float) -> int:
        """The silence that ends the turn, from the rules' wait and the model's probability."""
        if math.isnan(probability) or not self.asks(text_cue, language):
            return rules_ms
        if probability >= self.finished:
            return min(rules_ms, self.after_ms)
        if probability < self.unfinished:
            if language.startswith("zh") and text_cue == COMPLETE:
                return rules_ms
            return max(rules_ms, self.hold_ms)
        return rules_ms
