"""Servo mapper core: the shipped table and hand-made tables through the real planner.

Every trajectory is checked the way a servo controller would execute it: the cubic Hermite
curve through its points (positions + velocities) is sampled densely and must stay inside
each joint's limits and below its maximum velocity.
"""

from __future__ import annotations

import copy
import math

import pytest
import yaml

from fay_ros.body.body_cue import Cue
from fay_ros.body.map_tables import default_table_path
from fay_ros.body.servo import (
    TABLE_FILE,
    ServoMapper,
    Trajectory,
    hermite_peak_speed,
    load_servo_table,
    peak_offsets,
    plan,
    with_preemption,
)
from fay_ros.common.vocabulary import BEHAVIORS

SHIPPED = default_table_path(TABLE_FILE)
TOLERANCE = 1e-9


@pytest.fixture(scope="module")
def table():
    return load_servo_table(SHIPPED)


@pytest.fixture(scope="module")
def raw():
    return yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))


def make_table(tmp_path, raw, edit):
    data = copy.deepcopy(raw)
    edit(data)
    path = tmp_path / "servo_map.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_servo_table(path)


def assert_executable(trajectory: Trajectory, table, samples: int = 200) -> None:
    """What a controller interpolating the points would command stays legal."""
    names = list(table.joints)
    assert list(trajectory.joint_names) == names, "every joint, in table order"
    times = [p.time for p in trajectory.points]
    assert times[0] > 0 and all(b > a for a, b in zip(times, times[1:])), f"time_from_start not increasing: {times}"
    for point in trajectory.points:
        assert len(point.positions) == len(point.velocities) == len(names)
        for name, pos, vel in zip(names, point.positions, point.velocities):
            spec = table.joints[name]
            assert spec.min - TOLERANCE <= pos <= spec.max + TOLERANCE, (name, pos)
            assert abs(vel) <= spec.max_velocity * (1 + 1e-6), (name, vel)
    last = trajectory.points[-1]
    assert last.positions == tuple(table.joints[n].idle for n in names), "ends at idle"
    assert all(v == 0.0 for v in last.velocities), "ends at rest"
    end = trajectory.duration
    for i in range(samples + 1):
        positions, velocities = trajectory.sample(end * i / samples)
        for name, pos, vel in zip(names, positions, velocities):
            spec = table.joints[name]
            assert spec.min - 1e-6 <= pos <= spec.max + 1e-6, (name, pos, end * i / samples)
            assert abs(vel) <= spec.max_velocity * (1 + 1e-6), (name, vel, end * i / samples)


def amplitude_factor(raw, behavior: str, intensity: float) -> float:
    scale = raw["behaviors"][behavior].get("amplitude") or raw["amplitude"]
    return scale["at_0"] + (scale["at_1"] - scale["at_0"]) * intensity


def expected_keyframe_positions(raw, behavior: str, intensity: float) -> list[dict[str, float]]:
    """Keyframe positions straight from the YAML: idle + offset × amplitude, clamped, held."""
    amp = amplitude_factor(raw, behavior, intensity)
    joints = raw["joints"]
    current = {n: j["idle"] for n, j in joints.items()}
    out = []
    for frame in raw["behaviors"][behavior]["keyframes"]:
        for name, offset in frame["pose"].items():
            j = joints[name]
            current[name] = min(j["max"], max(j["min"], j["idle"] + offset * amp))
        out.append(dict(current))
    return out


def test_invite_amplitude_follows_the_table_and_stays_inside_the_limits(table, raw):
    low, high = plan(table, "invite", 0.3, {}), plan(table, "invite", 0.9, {})
    for trajectory, intensity in ((low, 0.3), (high, 0.9)):
        assert trajectory.behavior == "invite"
        assert_executable(trajectory, table)
        expected = expected_keyframe_positions(raw, "invite", intensity)
        motion = trajectory.points[: len(expected)]
        assert len(trajectory.points) == len(expected) + 1, "keyframes then the return to idle"
        for point, want in zip(motion, expected):
            assert point.positions == pytest.approx([want[n] for n in trajectory.joint_names], abs=1e-12)
    ratio = amplitude_factor(raw, "invite", 0.9) / amplitude_factor(raw, "invite", 0.3)
    assert ratio > 1.5
    low_peaks, high_peaks = peak_offsets(low, table), peak_offsets(high, table)
    moved = [n for n in low_peaks if low_peaks[n] > 0]
    assert {"right_shoulder_pitch", "right_shoulder_roll", "head_pan"} <= set(moved)
    compared = 0
    amp_high = amplitude_factor(raw, "invite", 0.9)
    for name in moved:
        j = raw["joints"][name]
        offsets = [f["pose"][name] for f in raw["behaviors"]["invite"]["keyframes"] if name in f["pose"]]
        if all(j["min"] <= j["idle"] + o * amp_high <= j["max"] for o in offsets):  # not clamped
            assert high_peaks[name] / low_peaks[name] == pytest.approx(ratio, rel=1e-9), name
            compared += 1
    assert compared >= 3


@pytest.mark.parametrize("intensity", [0.0, 0.3, 0.9, 1.0])
def test_every_behavior_gives_an_executable_trajectory(table, intensity):
    off_idle = {n: (s.min + s.max) / 2 + 0.3 * (s.max - s.min) for n, s in table.joints.items()}
    for behavior in BEHAVIORS:
        assert_executable(plan(table, behavior, intensity, {}), table)
        assert_executable(plan(table, behavior, intensity, off_idle), table)


def test_positions_are_clamped_to_the_joint_limits(tmp_path, raw):
    def edit(data):
        data["behaviors"]["invite"]["keyframes"][0]["pose"]["right_shoulder_pitch"] = 5.0
        data["behaviors"]["invite"]["keyframes"][0]["pose"]["head_pan"] = -4.0

    table = make_table(tmp_path, raw, edit)
    trajectory = plan(table, "invite", 1.0, {})
    j = list(table.joints).index("right_shoulder_pitch")
    h = list(table.joints).index("head_pan")
    assert trajectory.points[0].positions[j] == table.joints["right_shoulder_pitch"].max
    assert trajectory.points[0].positions[h] == table.joints["head_pan"].min
    assert_executable(trajectory, table)


def test_velocity_limit_slows_the_motion_and_keeps_the_amplitude(tmp_path, raw):
    def edit(data):
        data["joints"]["head_tilt"]["max_velocity"] = 0.5
        data["behaviors"]["nod"] = {"keyframes": [{"at": 0.1, "pose": {"head_tilt": 0.4}}]}
        data["amplitude"] = {"at_0": 1.0, "at_1": 1.0}

    table = make_table(tmp_path, raw, edit)
    trajectory = plan(table, "nod", 1.0, {})
    j = list(table.joints).index("head_tilt")
    assert trajectory.points[0].positions[j] == pytest.approx(0.4)
    # From rest to rest a cubic peaks at 1.5 × the mean speed: 0.4 rad at 0.5 rad/s takes ≥ 1.2 s.
    assert trajectory.points[0].time >= 1.5 * 0.4 / 0.5 - 1e-9
    assert trajectory.points[0].time > 0.1 / table.speed.at_1
    assert_executable(trajectory, table)


def test_hermite_peak_speed_matches_dense_sampling():
    for p0, p1, m0, m1, h in [(0, 1, 0, 0, 1), (0, 1, 2.5, 0.3, 0.7), (1, -1, -3, 0, 2), (0, 0, 1, -1, 1)]:
        slope = (p1 - p0) / h
        dense = max(
            abs(slope * (6 * s - 6 * s * s) + m0 * (3 * s * s - 4 * s + 1) + m1 * (3 * s * s - 2 * s))
            for s in (i / 2000 for i in range(2001))
        )
        assert hermite_peak_speed(p0, p1, m0, m1, h) == pytest.approx(dense, rel=1e-5)


def test_unknown_behavior_falls_back_to_the_table_default(table):
    for word in ("moonwalk", "", "INVITE"):
        trajectory = plan(table, word, 0.5, {})
        assert trajectory.behavior == table.default and trajectory.requested == word
        assert trajectory.points == plan(table, table.default, 0.5, {}).points
        assert_executable(trajectory, table)


def test_intensity_out_of_range_or_nan_is_clamped(table):
    assert plan(table, "nod", 7.0, {}).points == plan(table, "nod", 1.0, {}).points
    assert plan(table, "nod", -1.0, {}).points == plan(table, "nod", 0.0, {}).points
    assert plan(table, "nod", math.nan, {}).points == plan(table, "nod", 0.5, {}).points


def test_idle_goes_back_to_the_idle_pose_and_is_never_busy(table):
    start = {"head_pan": 0.5, "right_elbow": 1.0}
    trajectory = plan(table, "idle", 0.5, start, start=10.0)
    assert len(trajectory.points) == 1 and trajectory.busy_until == 10.0
    assert trajectory.start_positions[list(table.joints).index("head_pan")] == 0.5
    assert_executable(trajectory, table)


# ---- arbitration -------------------------------------------------------------------------


def cue(behavior: str, priority: int, intensity: float = 0.6) -> Cue:
    return Cue(behavior=behavior, affect="neutral", intensity=intensity, priority=priority)


def test_higher_priority_preempts_from_where_the_joints_are(table):
    mapper = ServoMapper(table)
    [first] = mapper.handle(cue("invite", 40), now=100.0)
    assert first.action == "started"
    [second] = mapper.handle(cue("warn", 80), now=100.5)
    assert second.action == "preempted" and second.trajectory is not None
    assert second.trajectory.behavior == "warn" and mapper.current is second.trajectory
    where, _ = first.trajectory.sample(0.5)
    assert second.trajectory.start_positions == pytest.approx(where)
    assert max(abs(p - table.joints[n].idle) for n, p in zip(table.joints, where)) > 0.05, "mid-motion"
    assert_executable(second.trajectory, table)


def test_lower_priority_waits_then_starts_when_the_motion_ends(table):
    mapper = ServoMapper(table)
    [running] = mapper.handle(cue("wave", 50), now=0.0)
    busy_until = running.trajectory.busy_until
    assert busy_until <= table.preemption.max_wait
    [waiting] = mapper.handle(cue("nod", 10), now=0.1)
    assert waiting.action == "waiting" and waiting.trajectory is None
    assert mapper.tick(busy_until - 0.01) is None
    started = mapper.tick(busy_until)
    assert started.action == "started" and started.trajectory.behavior == "nod"
    where, _ = running.trajectory.sample(busy_until)
    assert started.trajectory.start_positions == pytest.approx(where)
    assert mapper.tick(busy_until + 0.1) is None


def test_lower_priority_is_dropped_when_it_would_wait_too_long(tmp_path, raw):
    table = make_table(tmp_path, raw, lambda d: d["preemption"].update(max_wait=0.5))
    mapper = ServoMapper(table)
    mapper.handle(cue("invite", 40), now=0.0)
    [dropped] = mapper.handle(cue("nod", 10), now=0.2)
    assert dropped.action == "dropped" and "max_wait" in dropped.reason
    assert mapper.waiting is None


def test_equal_priority_waits_by_default_and_preempts_when_configured(tmp_path, raw, table):
    mapper = ServoMapper(table)
    mapper.handle(cue("nod", 30), now=0.0)
    assert [o.action for o in mapper.handle(cue("shake", 30), now=0.2)] == ["waiting"]
    eager = ServoMapper(make_table(tmp_path, raw, lambda d: d["preemption"].update(equal_priority="preempt")))
    eager.handle(cue("nod", 30), now=0.0)
    assert [o.action for o in eager.handle(cue("shake", 30), now=0.2)] == ["preempted"]


def test_the_waiting_slot_keeps_the_strongest_newest_cue(table):
    mapper = ServoMapper(table)
    mapper.handle(cue("wave", 90), now=0.0)
    assert [o.action for o in mapper.handle(cue("nod", 20), now=0.1)] == ["waiting"]
    outcomes = mapper.handle(cue("shake", 20), now=0.2)
    assert [(o.action, o.cue.behavior) for o in outcomes] == [("dropped", "nod"), ("waiting", "shake")]
    [weaker] = mapper.handle(cue("bow", 5), now=0.3)
    assert weaker.action == "dropped" and "already waiting" in weaker.reason
    assert mapper.waiting.cue.behavior == "shake"


def test_return_to_idle_can_be_interrupted_by_any_cue(table):
    mapper = ServoMapper(table)
    [running] = mapper.handle(cue("nod", 90), now=0.0)
    during_return = (running.trajectory.busy_until + running.trajectory.end) / 2
    [next_one] = mapper.handle(cue("shake", 1), now=during_return)
    assert next_one.action == "started"


def test_a_preemption_drops_a_waiting_cue_that_could_no_longer_start_in_time(table):
    mapper = ServoMapper(table)
    [running] = mapper.handle(cue("nod", 40), now=0.0)
    mapper.handle(cue("shake", 10), now=0.1)
    late = running.trajectory.busy_until - 0.05
    outcomes = mapper.handle(cue("comfort", 80), now=late)
    assert [(o.action, o.cue.behavior) for o in outcomes] == [("preempted", "comfort"), ("dropped", "shake")]
    assert mapper.waiting is None


def test_measured_joint_states_are_the_start_of_the_next_motion(table):
    mapper = ServoMapper(table)
    [out] = mapper.handle(cue("nod", 10), now=0.0, measured={"head_pan": 0.7})
    assert out.trajectory.start_positions[list(table.joints).index("head_pan")] == 0.7
    assert_executable(out.trajectory, table)


def test_the_live_preemption_parameters_override_the_table(table):
    assert with_preemption(table) is table, "nothing set: the table's own"
    eager = with_preemption(table, "preempt", 0.0)
    assert eager.preemption.equal_priority == "preempt" and eager.preemption.max_wait == 0.0
    assert table.preemption.equal_priority == "wait", "the loaded table is not changed"
    mapper = ServoMapper(eager)
    mapper.handle(cue("nod", 30), now=0.0)
    assert [o.action for o in mapper.handle(cue("shake", 30), now=0.2)] == ["preempted"]
    assert [o.action for o in mapper.handle(cue("bow", 10), now=0.3)] == ["dropped"], "max_wait 0"
    with pytest.raises(ValueError, match="max_wait"):
        with_preemption(table, max_wait=-1.0)


def test_rest_goes_to_the_idle_pose_from_where_the_joints_are_and_forgets_the_waiting_cue(table):
    mapper = ServoMapper(table)
    [running] = mapper.handle(cue("invite", 40), now=0.0)
    mapper.handle(cue("nod", 10), now=0.1)
    rest = mapper.rest(now=0.5)
    where, _ = running.trajectory.sample(0.5)
    assert rest.start_positions == pytest.approx(where)
    assert len(rest.points) == 1 and rest.points[0].positions == tuple(s.idle for s in table.joints.values())
    assert rest.behavior == "rest" and rest.busy_until == 0.5 and mapper.waiting is None
    assert_executable(rest, table)
    assert mapper.tick(10.0) is None, "no waiting cue starts after a rest"
    assert mapper.positions_at(0.5 + rest.duration) == {n: s.idle for n, s in table.joints.items()}
