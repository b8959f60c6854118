"""The voice-activity parameters the mic and the asr share (validated at the nodes' edge; the
defaults are VadSettings' own)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from .vad import VadSettings

_DEFAULTS = VadSettings()

# What of it can change while the node runs.
VAD_LIVE_PARAMETERS = frozenset({"vad_aggressiveness", "vad_start_ms", "vad_min_level_dbfs", "vad_steady_ms"})


class VadParameters(BaseModel):
    vad_aggressiveness: int = Field(
        _DEFAULTS.aggressiveness, ge=0, le=3, description="WebRTC VAD mode: 0 permissive .. 3 strict."
    )
    vad_start_ms: int = Field(
        _DEFAULTS.start_ms, gt=0, description="Voiced time (within 300 ms) that starts voice activity."
    )
    vad_min_level_dbfs: float = Field(
        _DEFAULTS.min_level_dbfs, le=0.0, description="Frames quieter than this are never voice."
    )
    vad_steady_ms: int = Field(
        _DEFAULTS.steady_ms,
        ge=0,
        description="A sound whose level stays within 3 dB this long is steady noise (mains hum, a fan), never "
        "voice (0: off).",
    )

    def vad_settings_with(self, **node_own: Any) -> VadSettings:
        """VadSettings from these parameters and the node's own (`stop_ms`, the model, ...)."""
        return VadSettings(
            aggressiveness=self.vad_aggressiveness,
            start_ms=self.vad_start_ms,
            start_window_ms=max(_DEFAULTS.start_window_ms, self.vad_start_ms),
            min_level_dbfs=self.vad_min_level_dbfs,
            steady_ms=self.vad_steady_ms,
            **node_own,
        )
