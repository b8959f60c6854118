"""Conversions between builtin_interfaces/Time and float seconds."""
from builtin_interfaces.msg import Time


def to_time_msg(seconds: float) -> Time:
    sec = int(seconds // 1)
    nanosec = int(round((seconds - sec) * 1e9))
    if nanosec >= 1_000_000_000:
        sec, nanosec = sec + 1, nanosec - 1_000_000_000
    return Time(sec=sec, nanosec=nanosec)


def from_time_msg(stamp: Time) -> float:
    return stamp.sec + stamp.nanosec * 1e-9
