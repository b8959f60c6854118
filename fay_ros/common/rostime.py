"""Node time: conversions between builtin_interfaces/Time and float seconds, the node clock
in seconds, and re-timing a timer (a live period parameter)."""

from typing import Any

from builtin_interfaces.msg import Time


def to_time_msg(seconds: float) -> Time:
    sec = int(seconds // 1)
    nanosec = int(round((seconds - sec) * 1e9))
    if nanosec >= 1_000_000_000:
        sec, nanosec = sec + 1, nanosec - 1_000_000_000
    return Time(sec=sec, nanosec=nanosec)


def from_time_msg(stamp: Time) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def node_seconds(node: Any) -> float:
    """The node clock's time in seconds: ROS time, or /clock with use_sim_time."""
    return node.get_clock().now().nanoseconds * 1e-9


def set_timer_period(timer: Any, period: float) -> None:
    """Run `timer` every `period` seconds from now on, or stop it when `period` <= 0 (e.g. a
    live `reload_period`)."""
    if period > 0:
        timer.timer_period_ns = int(period * 1e9)
        timer.reset()
    else:
        timer.cancel()


# A stopped timer still needs a period; this one is never used while stopped.
_STOPPED_TIMER_PERIOD = 1.0


def file_check_timer(node: Any, period: float, callback: Any, callback_group: Any = None) -> Any:
    """A timer checking files for edits every `period` seconds (<= 0: stopped; retime it with
    set_timer_period). On the steady clock, so edits are picked up while sim time stands still."""
    from rclpy.clock import Clock, ClockType

    timer = node.create_timer(
        _STOPPED_TIMER_PERIOD,
        callback,
        callback_group=callback_group,
        clock=Clock(clock_type=ClockType.STEADY_TIME),
        autostart=False,
    )
    set_timer_period(timer, period)
    return timer
