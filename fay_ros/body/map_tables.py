"""Helpers shared by the body's mapping tables (config/servo_map.yaml, config/led_map.yaml).

The tables are read with the one strict YAML loader (`fay_ros.common.yaml_loader`:
duplicate keys refused, pydantic models with unknown keys refused, errors that name the file
and the key path and line, e.g. `config/servo_map.yaml: behaviors.invite.keyframes[1].at:
... (line 42)`) and hot-reloaded with `fay_ros.common.reloading.ReloadingTable`.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..common.paths import config_file


def default_table_path(file_name: str) -> Path:
    """The shipped table: the source tree's config/ (pip/editable), else the ament share."""
    return config_file(file_name)


def finite(value: float, default: float) -> float:
    """A float from a message field, or `default` when it is NaN or infinite."""
    return value if isinstance(value, (int, float)) and math.isfinite(value) else default


def unit(value: float, default: float = 0.5) -> float:
    """Clamp to 0..1 (NaN → default): cue intensities come from other processes."""
    return min(1.0, max(0.0, finite(value, default)))
