"""Dialogue: Fay's qa → chat judge → tool loop → final reply flow on any OpenAI-compatible LLM.

Pure Python (no rclpy): `engine.DialogueEngine` is the core the `dialogue` node wraps.
"""
