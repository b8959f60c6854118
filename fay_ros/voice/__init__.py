"""Voice: outbound sanitising, speech synthesis with timed phonemes, viseme tracks, playback
with an exact speaking state, and interruption. Pure Python: nothing here imports rclpy; the
`tts` node (fay_ros/nodes/tts.py) and `fay-ros say` are thin shells over these modules.
"""
