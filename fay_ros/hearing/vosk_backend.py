"""vosk (Kaldi) backend: streaming partials, finals with per-word timings and confidences."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .models import ModelError, resolve_vosk_model
from .recognition import Recognition, Word


class VoskRecognizer:
    streaming = True

    def __init__(self, model: str, language: str = "", sample_rate: int = 16000) -> None:
        import vosk

        vosk.SetLogLevel(-1)  # Kaldi's own logging goes to stderr; errors still raise here
        self.model_dir = resolve_vosk_model(model)
        try:
            self._model = vosk.Model(str(self.model_dir))
        except Exception as exc:  # noqa: BLE001 - vosk raises a bare Exception on a bad model
            raise ModelError(
                f"vosk model at {self.model_dir} is corrupt or unreadable: vosk could not load it "
                f"({exc}); replace it with a freshly unpacked model (see models/README.md)"
            ) from None
        # A vosk model knows no language code; "auto" cannot be detected, so it stays unknown.
        self.language = "" if language == "auto" else language
        self.sample_rate = sample_rate
        self._vosk = vosk
        # The vosk.KaldiRecognizer of the current utterance (None between utterances); vosk has no
        # type hints, so it is Any to the type checker either way.
        self._rec: Any = None
        self._done: list[dict] = []
        self._last_partial = ""

    def start(self) -> None:
        self._rec = self._vosk.KaldiRecognizer(self._model, float(self.sample_rate))
        self._rec.SetWords(True)
        self._done = []
        self._last_partial = ""

    def _done_text(self) -> str:
        return " ".join(r.get("text", "") for r in self._done if r.get("text"))

    def accept(self, samples: np.ndarray) -> str | None:
        if self._rec is None:
            self.start()
        data = np.asarray(samples, dtype="<i2").tobytes()
        if self._rec.AcceptWaveform(data):
            # vosk found an endpoint of its own inside our utterance: keep that piece.
            self._done.append(json.loads(self._rec.Result()))
            partial = ""
        else:
            partial = json.loads(self._rec.PartialResult()).get("partial", "")
        text = " ".join(t for t in (self._done_text(), partial) if t)
        if text and text != self._last_partial:
            self._last_partial = text
            return text
        return None

    def peek(self) -> Recognition | None:
        return None  # vosk keeps its own endpointing; its partials carry no punctuation to judge by

    def finish(self) -> Recognition:
        if self._rec is None:
            return Recognition("", self.language)
        self._done.append(json.loads(self._rec.FinalResult()))
        self._rec = None
        words = [
            Word(w["word"], float(w["start"]), float(w["end"]), float(w.get("conf", 0.0)))
            for r in self._done
            for w in r.get("result", [])
        ]
        text = self._done_text()
        confidence = float(np.mean([w.confidence for w in words])) if words else 0.0
        return Recognition(text, self.language, confidence, words)
