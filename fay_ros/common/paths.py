"""Where the shipped data files are: the source tree (pip/editable install, `make run`), else
the ament share directory (colcon install, `ros2 launch`); and where the user's own settings
and data live (the XDG base directories)."""

from __future__ import annotations

import os
from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parents[2]


def shipped_file(*parts: str) -> Path:
    """share/fay_ros/<parts...>: e.g. shipped_file("config", "qa.csv").

    Returns the source-tree path when that exists, else the installed one when that exists,
    else the source-tree path (so the caller's "not found" error names a sensible place).
    """
    candidate = SOURCE_ROOT.joinpath(*parts)
    if candidate.exists():
        return candidate
    try:
        from ament_index_python.packages import get_package_share_directory

        installed = Path(get_package_share_directory("fay_ros")).joinpath(*parts)
        if installed.exists():
            return installed
    except Exception:  # noqa: BLE001 - not installed through ament
        pass
    return candidate


def config_file(file_name: str) -> Path:
    """A shipped table or parameter file in config/."""
    return shipped_file("config", file_name)


def user_config_dir() -> Path:
    """$XDG_CONFIG_HOME/fay_ros (default ~/.config/fay_ros): the user's own settings and
    secrets, which never live in the source tree."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "fay_ros"


def user_data_dir() -> Path:
    """$XDG_DATA_HOME/fay_ros (default ~/.local/share/fay_ros): what the companion keeps of
    its users (the memory, the knowledge base)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "fay_ros"


def default_memory_db() -> str:
    """The memory database file of the memory node and the memory CLIs, when none is named."""
    return str(user_data_dir() / "memory.db")
