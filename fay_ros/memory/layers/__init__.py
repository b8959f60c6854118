"""The layered ("onion") profile of each owner (seed 001): events → preferences → awareness →
insights → soul, every item with the turn ids it rests on, one update entry point
(`ProfilePipeline.ingest`), rule-based updaters by default and optional LLM updaters.

Pure Python, no ROS. See docs/memory.md ("The layered profile").
"""

from .core_memory import core_memory_text, is_safety_fact, split_safety, trim_core_memory, without_safety
from .layer_config import LayersConfig, LayerThreshold
from .layer_pipeline import ProfilePipeline
from .layer_signals import ProfileSignal, signals_from_turn

__all__ = [
    "LayerThreshold",
    "LayersConfig",
    "ProfilePipeline",
    "ProfileSignal",
    "core_memory_text",
    "is_safety_fact",
    "signals_from_turn",
    "split_safety",
    "trim_core_memory",
    "without_safety",
]
