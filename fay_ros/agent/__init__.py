"""Fay's agent: tools and servers that let other agents use the companion (no rclpy here)."""
