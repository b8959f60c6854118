"""Hearing: audio sources, voice activity, half duplex / barge-in, ASR backends, wake words.

Everything here is pure Python (numpy, sounddevice, faster-whisper, vosk) with no rclpy
import; the mic and asr nodes are thin shells over these cores.
"""
