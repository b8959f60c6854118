"""The factory that picks an ASR backend (the interface itself is in hearing.types).

Backends are imported only when chosen: faster-whisper and vosk are heavy, and a node needs
one of them.
"""

from __future__ import annotations

from .recognition import Recognizer


def create_recognizer(backend: str, model: str = "", language: str = "auto", **options) -> Recognizer:
    """Build a recogniser; raises ModelError for a missing/corrupt model, ValueError for bad options."""
    if backend == "whisper":
        from .whisper_backend import WhisperRecognizer

        return WhisperRecognizer(model, language=language, **options)
    if backend == "vosk":
        from .vosk_backend import VoskRecognizer

        allowed = {k: v for k, v in options.items() if k in ("sample_rate",)}
        return VoskRecognizer(model, language=language, **allowed)
    raise ValueError(f"unknown ASR backend {backend!r}; use 'whisper' or 'vosk'")
