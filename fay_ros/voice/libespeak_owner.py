"""Which engine drives this process's libespeak-ng.

Both engines (espeak_ng through ctypes, pyttsx3's espeak driver) initialise the one
libespeak-ng, which keeps global state: two users in one process produce garbled audio. Each
engine starts inside `starting(name)`, which refuses a second engine with a clear VoiceError.
This module, not the engines, holds that state, so the engines never import each other.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from .engine_types import VoiceError

_lock = threading.Lock()
_owner: str | None = None


@contextlib.contextmanager
def starting(engine: str) -> Iterator[None]:
    """Start `engine` as the one user of libespeak-ng; it owns the library only if the start
    succeeds (a failed start leaves it free). Starts are serialised, so two engines starting
    at once cannot both pass the check."""
    global _owner
    with _lock:
        if _owner not in (None, engine):
            raise VoiceError(
                f"the {engine} engine cannot run in a process that already uses the {_owner} engine "
                "(both drive the one libespeak-ng); use one engine per process"
            )
        yield
        _owner = engine
