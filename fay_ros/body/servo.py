"""Servo mapper core: behavior → a joint trajectory a real servo controller can execute.

The table (config/servo_map.yaml) names the joints with their limits, idle pose and maximum
velocity, and maps each behavior to a motion template: keyframes at times (seconds, at speed
1.0) holding joint offsets from the idle pose (radians). A cue's intensity scales the
amplitude (offsets) and the speed (times) of the template linearly between the table's
`at_0` and `at_1` values.

What comes out (and why, for the consumer):
- every trajectory names every joint of the table, in table order (ros2_control's
  joint_trajectory_controller rejects partial goals unless configured to accept them);
- points carry positions AND velocities, `time_from_start` strictly increasing and > 0; the
  first point is reached from wherever the joints are now (the controller starts a trajectory
  stamped 0 from its current state); the last point is the idle pose with zero velocity, so
  every motion returns to idle by itself and nothing has to be sent afterwards;
- positions are clamped to each joint's [min, max]; velocities come from a monotone cubic
  (PCHIP, Fritsch–Carlson) scheme, so the cubic Hermite curve a controller interpolates
  through the points never overshoots a keyframe (hence never leaves the limits), and
  segment times are stretched until that curve's peak speed is within `max_velocity` of
  every joint. The amplitude is never cut to meet a velocity limit: the motion gets slower.

Arbitration (documented in config/servo_map.yaml and docs/body.md):
- a motion is *busy* from its start until its last keyframe; its return to idle can be
  interrupted by any cue;
- a cue with a higher priority than the busy motion preempts it at once, starting from where
  the joints are (sampled from the running trajectory, or measured joint states if given);
- a cue with the same priority waits (or preempts, if `preemption.equal_priority: preempt`);
- a lower-priority cue waits for the busy motion to end, in a single waiting slot: it is
  dropped if it would wait longer than `preemption.max_wait`, if a cue of higher priority
  is already waiting, or when a newer cue of at least its priority takes the slot.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..common.vocabulary import BEHAVIORS
from ..common.yaml_loader import load_model
from .body_cue import Cue
from .map_tables import unit

TABLE_FILE = "servo_map.yaml"
# Relative slack when comparing a peak speed with a limit (float round-off only).
_SPEED_SLACK = 1e-9
_MAX_RETIME_PASSES = 60


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


class JointSpec(_Strict):
    min: float = Field(description="Lowest allowed position (rad).")
    max: float = Field(description="Highest allowed position (rad).")
    max_velocity: float = Field(gt=0.0, description="Highest allowed speed (rad/s).")
    idle: float = Field(0.0, description="Rest position the joint returns to (rad).")


class Scale(_Strict):
    """A value that varies linearly with the cue intensity."""

    at_0: float = Field(ge=0.0)
    at_1: float = Field(ge=0.0)

    def at(self, intensity: float) -> float:
        return self.at_0 + (self.at_1 - self.at_0) * intensity


class Keyframe(_Strict):
    at: float = Field(gt=0.0, description="Seconds after the motion starts, at speed 1.0.")
    pose: dict[str, float] = Field(description="Joint offsets from the idle pose (rad); unlisted joints hold.")


class Motion(_Strict):
    description: str = ""
    keyframes: list[Keyframe] = Field(default_factory=list)
    amplitude: Scale | None = Field(None, description="Overrides the table's intensity → amplitude scale.")
    speed: Scale | None = Field(None, description="Overrides the table's intensity → speed scale.")


class Preemption(_Strict):
    equal_priority: Literal["wait", "preempt"] = "wait"
    # default= by keyword: a type checker reads a positional Field default as no default at all.
    max_wait: float = Field(default=2.0, ge=0.0, description="Longest a lower-priority cue may wait (s); 0 drops it.")


class ServoTable(_Strict):
    joints: dict[str, JointSpec] = Field(min_length=1)
    amplitude: Scale
    speed: Scale
    return_to_idle: float = Field(gt=0.0, description="Seconds for the return to idle (stretched if too fast).")
    preemption: Preemption = Field(default_factory=Preemption)
    default: str
    behaviors: dict[str, Motion] = Field(min_length=1)

    def cross_check(self) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        for name, joint in self.joints.items():
            if joint.min >= joint.max:
                problems.append((f"joints.{name}.min", f"must be below max ({joint.min} >= {joint.max})"))
            elif not joint.min <= joint.idle <= joint.max:
                problems.append((f"joints.{name}.idle", f"{joint.idle} is outside [{joint.min}, {joint.max}]"))
        for key in ("speed",):
            scale = getattr(self, key)
            if scale.at_0 <= 0 or scale.at_1 <= 0:
                problems.append((key, "speed factors must be greater than 0"))
        if self.default not in self.behaviors:
            problems.append(("default", f"{self.default!r} is not a key of behaviors"))
        for bname, motion in self.behaviors.items():
            if motion.speed and (motion.speed.at_0 <= 0 or motion.speed.at_1 <= 0):
                problems.append((f"behaviors.{bname}.speed", "speed factors must be greater than 0"))
            previous = 0.0
            for i, frame in enumerate(motion.keyframes):
                where = f"behaviors.{bname}.keyframes[{i}]"
                if frame.at <= previous:
                    problems.append((f"{where}.at", f"{frame.at} is not after the previous keyframe ({previous})"))
                previous = max(previous, frame.at)
                for joint_name in frame.pose:
                    if joint_name not in self.joints:
                        problems.append(
                            (f"{where}.pose.{joint_name}", f"unknown joint (joints: {', '.join(self.joints)})")
                        )
        return problems

    def unmapped_behaviors(self) -> list[str]:
        """Vocabulary words this table leaves to its default."""
        return [b for b in BEHAVIORS if b not in self.behaviors]


def load_servo_table(path: str | Path) -> ServoTable:
    return load_model(path, ServoTable)


@dataclass(frozen=True)
class TrajectoryPoint:
    time: float  # seconds from the trajectory start (time_from_start)
    positions: tuple[float, ...]
    velocities: tuple[float, ...]


@dataclass(frozen=True)
class Trajectory:
    """A planned motion. `start` and `busy_until` are absolute times on the mapper's clock."""

    joint_names: tuple[str, ...]
    start_positions: tuple[float, ...]
    points: tuple[TrajectoryPoint, ...]
    behavior: str
    requested: str
    priority: int
    intensity: float
    start: float = 0.0
    motion_end: float = 0.0  # seconds from start at which the return to idle begins

    @property
    def duration(self) -> float:
        return self.points[-1].time

    @property
    def busy_until(self) -> float:
        return self.start + self.motion_end

    @property
    def end(self) -> float:
        return self.start + self.duration

    def knots(self) -> list[tuple[float, tuple[float, ...], tuple[float, ...]]]:
        zero = tuple(0.0 for _ in self.joint_names)
        return [(0.0, self.start_positions, zero)] + [(p.time, p.positions, p.velocities) for p in self.points]

    def sample(self, t: float) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """Positions and velocities at `t` seconds from the start, as a cubic Hermite
        interpolating controller would command them (held at the ends)."""
        knots = self.knots()
        if t <= 0.0:
            return knots[0][1], knots[0][2]
        if t >= knots[-1][0]:
            return knots[-1][1], tuple(0.0 for _ in self.joint_names)
        times = [k[0] for k in knots]
        i = bisect.bisect_right(times, t) - 1
        (t0, p0, v0), (t1, p1, v1) = knots[i], knots[i + 1]
        h = t1 - t0
        s = (t - t0) / h
        pos, vel = [], []
        for a, b, ma, mb in zip(p0, p1, v0, v1):
            pos.append(_hermite(a, b, ma, mb, h, s))
            vel.append(_hermite_velocity(a, b, ma, mb, h, s))
        return tuple(pos), tuple(vel)


def _hermite(p0: float, p1: float, m0: float, m1: float, h: float, s: float) -> float:
    s2, s3 = s * s, s * s * s
    return (2 * s3 - 3 * s2 + 1) * p0 + (s3 - 2 * s2 + s) * h * m0 + (-2 * s3 + 3 * s2) * p1 + (s3 - s2) * h * m1


def _hermite_velocity(p0: float, p1: float, m0: float, m1: float, h: float, s: float) -> float:
    slope = (p1 - p0) / h
    return slope * (6 * s - 6 * s * s) + m0 * (3 * s * s - 4 * s + 1) + m1 * (3 * s * s - 2 * s)


def hermite_peak_speed(p0: float, p1: float, m0: float, m1: float, h: float) -> float:
    """Largest |velocity| of one cubic Hermite segment (its velocity is a quadratic in s)."""
    slope = (p1 - p0) / h
    a = -6 * slope + 3 * m0 + 3 * m1
    b = 6 * slope - 4 * m0 - 2 * m1
    peak = max(abs(m0), abs(m1))
    if a != 0.0:
        s = -b / (2 * a)
        if 0.0 < s < 1.0:
            peak = max(peak, abs(a * s * s + b * s + m0))
    return peak


def _pchip_velocities(times: list[float], values: list[float]) -> list[float]:
    """Fritsch–Butland weighted harmonic-mean slopes (as in PCHIP), zero at both ends and at
    every local extremum, so each Hermite segment is monotone: no overshoot past a keyframe."""
    n = len(times)
    v = [0.0] * n
    for k in range(1, n - 1):
        h0, h1 = times[k] - times[k - 1], times[k + 1] - times[k]
        d0, d1 = (values[k] - values[k - 1]) / h0, (values[k + 1] - values[k]) / h1
        if d0 * d1 <= 0.0:
            continue
        w0, w1 = 2 * h1 + h0, h1 + 2 * h0
        v[k] = (w0 + w1) / (w0 / d0 + w1 / d1)
    return v


def _retime(times: list[float], rows: list[list[float]], limits: list[float]) -> tuple[list[float], list[list[float]]]:
    """Stretch segments until every joint's interpolated peak speed is within its limit.

    `rows[j]` are joint j's knot values. Returns the new knot times and per-joint velocities.
    """
    times = list(times)
    for _ in range(_MAX_RETIME_PASSES):
        vels = [_pchip_velocities(times, row) for row in rows]
        stretched = False
        durations = [times[k + 1] - times[k] for k in range(len(times) - 1)]
        for k, h in enumerate(durations):
            worst = 1.0
            for row, vel, vmax in zip(rows, vels, limits):
                peak = hermite_peak_speed(row[k], row[k + 1], vel[k], vel[k + 1], h)
                worst = max(worst, peak / vmax)
            if worst > 1.0 + _SPEED_SLACK:
                durations[k] = h * worst * (1.0 + 1e-6)
                stretched = True
        if not stretched:
            return times, vels
        times = [0.0]
        for h in durations:
            times.append(times[-1] + h)
    # Safety net (not reached in practice): stop at every knot; a Hermite segment with zero end
    # velocities peaks at 1.5 × its mean slope.
    durations = []
    for k in range(len(times) - 1):
        h = times[k + 1] - times[k]
        need = max(1.5 * abs(row[k + 1] - row[k]) / vmax for row, vmax in zip(rows, limits))
        durations.append(max(h, need * (1.0 + 1e-6)))
    times = [0.0]
    for h in durations:
        times.append(times[-1] + h)
    return times, [[0.0] * len(times) for _ in rows]


def _clamp(value: float, spec: JointSpec) -> float:
    return min(spec.max, max(spec.min, value))


def with_preemption(table: ServoTable, equal_priority: str = "", max_wait: float | None = None) -> ServoTable:
    """`table` with its `preemption` settings overridden (the servo_mapper node's live
    parameters); "" / None keep the table's own value."""
    update: dict[str, object] = {}
    if equal_priority:
        update["equal_priority"] = equal_priority
    if max_wait is not None:
        update["max_wait"] = max_wait
    if not update:
        return table
    preemption = Preemption.model_validate({**table.preemption.model_dump(), **update})
    return table.model_copy(update={"preemption": preemption})


REST = "rest"


def plan(
    table: ServoTable,
    behavior: str,
    intensity: float,
    start_positions: dict[str, float],
    priority: int = 0,
    start: float = 0.0,
) -> Trajectory:
    """The trajectory for one behavior, starting at `start_positions` (missing joints: idle)."""
    requested = behavior
    if behavior not in table.behaviors:
        behavior = table.default
    return _plan_motion(
        table, table.behaviors[behavior], behavior, requested, intensity, start_positions, priority, start
    )


def plan_rest(table: ServoTable, start_positions: dict[str, float], start: float = 0.0) -> Trajectory:
    """The move from `start_positions` to the idle pose alone (`return_to_idle` seconds, slowed
    to the velocity limits), whatever the table's behaviors are."""
    return _plan_motion(table, Motion(amplitude=None, speed=None), REST, REST, 0.0, start_positions, 0, start)


def _plan_motion(
    table: ServoTable,
    motion: Motion,
    behavior: str,
    requested: str,
    intensity: float,
    start_positions: dict[str, float],
    priority: int,
    start: float,
) -> Trajectory:
    intensity = unit(intensity)
    amplitude = (motion.amplitude or table.amplitude).at(intensity)
    speed = (motion.speed or table.speed).at(intensity)
    names = list(table.joints)
    specs = [table.joints[n] for n in names]
    first = [_clamp(start_positions.get(n, s.idle), s) for n, s in zip(names, specs)]

    times = [0.0]
    poses = [first]
    current = list(first)
    for frame in motion.keyframes:
        for j, (name, spec) in enumerate(zip(names, specs)):
            if name in frame.pose:
                current[j] = _clamp(spec.idle + frame.pose[name] * amplitude, spec)
        times.append(frame.at / speed)
        poses.append(list(current))
    motion_end_index = len(times) - 1
    times.append(times[-1] + table.return_to_idle)
    poses.append([s.idle for s in specs])

    rows = [[pose[j] for pose in poses] for j in range(len(names))]
    times, vels = _retime(times, rows, [s.max_velocity for s in specs])
    points = tuple(
        TrajectoryPoint(
            times[k], tuple(rows[j][k] for j in range(len(names))), tuple(vels[j][k] for j in range(len(names)))
        )
        for k in range(1, len(times))
    )
    return Trajectory(
        tuple(names),
        tuple(first),
        points,
        behavior,
        requested,
        int(priority),
        intensity,
        start=start,
        motion_end=times[motion_end_index],
    )


@dataclass(frozen=True)
class Outcome:
    """What the mapper did with a cue (or a waiting cue): `trajectory` is set when it must be
    published now."""

    action: Literal["started", "preempted", "waiting", "dropped"]
    cue: Cue
    reason: str
    trajectory: Trajectory | None = None


@dataclass
class _Waiting:
    cue: Cue
    received: float


@dataclass
class ServoMapper:
    """Arbitration between cues plus the model of where the joints are (no ROS, no clock:
    every call gets `now` in seconds on one monotonic clock)."""

    table: ServoTable
    current: Trajectory | None = None
    waiting: _Waiting | None = None

    def set_table(self, table: ServoTable) -> None:
        """Use a new table from now on; the joints keep their modelled positions."""
        self.table = table
        if self.current is not None and self.current.joint_names != tuple(table.joints):
            # A different joint set cannot continue the running trajectory's model.
            self.current = None

    def positions_at(self, now: float) -> dict[str, float]:
        if self.current is None:
            return {n: s.idle for n, s in self.table.joints.items()}
        positions, _ = self.current.sample(now - self.current.start)
        return dict(zip(self.current.joint_names, positions))

    def busy(self, now: float) -> bool:
        return self.current is not None and now < self.current.busy_until

    def _start(self, cue: Cue, now: float, action: str, reason: str, measured: dict[str, float] | None) -> Outcome:
        start = self.positions_at(now)
        start.update(measured or {})
        trajectory = plan(self.table, cue.behavior, cue.intensity, start, cue.priority, start=now)
        self.current = trajectory
        return Outcome(action, cue, reason, trajectory)  # type: ignore[arg-type]

    def _expire_waiting(self, now: float) -> list[Outcome]:
        """After a preemption the waiting cue may no longer start within max_wait of arriving."""
        if self.waiting is None or self.current is None:
            return []
        late = self.current.busy_until - self.waiting.received
        if late <= self.table.preemption.max_wait:
            return []
        cue, self.waiting = self.waiting.cue, None
        return [
            Outcome(
                "dropped",
                cue,
                f"preempted by {self.current.behavior}: would start "
                f"{late:.2f} s after arriving (max_wait "
                f"{self.table.preemption.max_wait:.2f} s)",
            )
        ]

    def handle(self, cue: Cue, now: float, measured: dict[str, float] | None = None) -> list[Outcome]:
        """Decide about a new cue. Returns the outcomes (a cue pushed out of the waiting slot
        is reported as dropped too)."""
        if not self.busy(now):
            return [self._start(cue, now, "started", "nothing busy", measured)]
        running = self.current
        assert running is not None
        if cue.priority > running.priority or (
            cue.priority == running.priority and self.table.preemption.equal_priority == "preempt"
        ):
            started = self._start(
                cue,
                now,
                "preempted",
                f"priority {cue.priority} over running {running.behavior} ({running.priority})",
                measured,
            )
            return [started, *self._expire_waiting(now)]
        max_wait = self.table.preemption.max_wait
        remaining = running.busy_until - now
        if remaining > max_wait:
            return [
                Outcome(
                    "dropped",
                    cue,
                    f"{running.behavior} (priority {running.priority}) is busy for "
                    f"{remaining:.2f} s, more than max_wait {max_wait:.2f} s",
                )
            ]
        if self.waiting is not None and self.waiting.cue.priority > cue.priority:
            return [
                Outcome(
                    "dropped",
                    cue,
                    f"{self.waiting.cue.behavior} (priority {self.waiting.cue.priority}) is already waiting",
                )
            ]
        outcomes = []
        if self.waiting is not None:
            outcomes.append(Outcome("dropped", self.waiting.cue, f"replaced in the waiting slot by {cue.behavior}"))
        self.waiting = _Waiting(cue, now)
        outcomes.append(
            Outcome("waiting", cue, f"{running.behavior} (priority {running.priority}) busy for {remaining:.2f} s")
        )
        return outcomes

    def rest(self, now: float, measured: dict[str, float] | None = None) -> Trajectory:
        """Back to the idle pose from where the joints are now (the node's deactivation): a
        waiting cue is forgotten and the rest move becomes the running trajectory (never busy)."""
        self.waiting = None
        start = self.positions_at(now)
        start.update(measured or {})
        self.current = plan_rest(self.table, start, start=now)
        return self.current

    def tick(self, now: float, measured: dict[str, float] | None = None, grace: float = 0.5) -> Outcome | None:
        """Start the waiting cue once the busy motion is over (call periodically). A cue that
        has waited longer than max_wait + `grace` (the ticks stalled) is dropped instead."""
        if self.waiting is None or self.busy(now):
            return None
        waiting, self.waiting = self.waiting, None
        waited = now - waiting.received
        if waited > self.table.preemption.max_wait + grace:
            return Outcome("dropped", waiting.cue, f"waited {waited:.2f} s, out of step with the speech")
        return self._start(waiting.cue, now, "started", f"after waiting {waited:.2f} s", measured)


def describe(trajectory: Trajectory) -> str:
    name = (
        trajectory.behavior
        if trajectory.behavior == trajectory.requested
        else f"{trajectory.requested}→{trajectory.behavior} (default)"
    )
    return (
        f"{name} intensity {trajectory.intensity:.2f} priority {trajectory.priority}: "
        f"{len(trajectory.points)} points over {trajectory.duration:.2f} s "
        f"(busy {trajectory.motion_end:.2f} s)"
    )


def peak_offsets(trajectory: Trajectory, table: ServoTable) -> dict[str, float]:
    """Largest |position - idle| per joint over the motion's keyframes (not the return)."""
    out = {}
    motion_points = [p for p in trajectory.points if p.time <= trajectory.motion_end + 1e-12]
    for j, name in enumerate(trajectory.joint_names):
        idle = table.joints[name].idle
        out[name] = max((abs(p.positions[j] - idle) for p in motion_points), default=0.0)
    return out
