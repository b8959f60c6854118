"""The schedule file: one YAML for memory's daily jobs and proactive talk.

    timezone: local              # or an IANA name (Asia/Shanghai); daily times, cron, quiet hours use it
    memory:
      portrait_at: "11:30"       # daily portrait rebuild ("" = never)
      reflection_at: "23:00"     # daily reflection ("" = never)
    proactive:
      enabled: true
      quiet_hours: "22:00-07:00" # nothing proactive then ("" = none)
      min_gap: 1800              # seconds between two proactive lines to one user
      max_per_day: 6             # proactive lines per user and day (0 = no limit)
      absent_after: 3600         # time triggers skip when nobody was heard for this long (0 = never skip)
      max_delay: 120             # a due line waits at most this long (someone speaking), then is dropped
      triggers:
        - name: good_morning
          daily: "08:30"         # exactly one of daily / every / cron / topic / silence
          say: "Good morning!"   # exactly one of say (a fixed line) / prompt (an instruction for the model)
          user: ""               # the target user; "" = the last user heard

`config/schedule.yaml` is the shipped default, `config/schedule.example.yaml` shows every
option. Read with the strict YAML loader: unknown keys, duplicate keys and bad values are
errors naming the file, the key path and the line.
"""

from __future__ import annotations

import os
import re
from datetime import time, tzinfo
from functools import cached_property
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dateutil import tz as dateutil_tz
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..common.errors import TableError
from ..common.paths import config_file
from ..common.yaml_loader import load_model
from .timing import CronRule, IntervalRule, TimeRule, cron_problem, daily_rule

SCHEDULE_FILE = "schedule.yaml"
CLOCK_TIME = re.compile(r"^([01][0-9]|2[0-3]):([0-5][0-9])$")
# rosidl's interface names: package/msg/Type
MESSAGE_TYPE = re.compile(r"^[a-z][a-z0-9_]*/msg/[A-Z][A-Za-z0-9]*$")
TOPIC_NAME = re.compile(r"^[~/]?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")
TIME_KINDS = ("daily", "every", "cron")
KINDS = TIME_KINDS + ("topic", "silence")


class ScheduleError(TableError):
    """The schedule file is unusable; the message names file, key path and line of each problem."""


def default_schedule_path() -> Path:
    return config_file(SCHEDULE_FILE)


def schedule_path(parameter: str) -> Path:
    """The file a node's `schedule_file` parameter names ('' = the shipped config/schedule.yaml)."""
    return Path(parameter).expanduser() if parameter.strip() else default_schedule_path()


def parse_clock_time(value: str) -> time:
    match = CLOCK_TIME.match(value)
    if not match:
        raise ValueError('a time of day is written HH:MM, 00:00 to 23:59 (e.g. "08:30")')
    return time(int(match.group(1)), int(match.group(2)))


def _clock_time_or_empty(value: str) -> str:
    if value:
        parse_clock_time(value)
    return value


def local_zone_name() -> str:
    """The system's IANA zone name: $TZ, the /etc/localtime link, /etc/timezone, else UTC."""
    candidates = [os.environ.get("TZ", "").lstrip(":")]
    localtime = Path("/etc/localtime")
    if localtime.is_symlink():
        target = str(localtime.resolve())
        if "zoneinfo/" in target:
            candidates.append(target.split("zoneinfo/", 1)[1])
    try:
        candidates.append(Path("/etc/timezone").read_text(encoding="utf-8").strip())
    except OSError:
        pass
    for name in candidates:
        if not name:
            continue
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            continue
        return name
    return "UTC"


def zone_name(name: str) -> str:
    """The IANA name of a schedule `timezone`: "local" is the system's (`local_zone_name`)."""
    return local_zone_name() if name == "local" else name


def resolve_zone(name: str) -> tzinfo:
    """ "local" (the system's zone, daylight saving included) or an IANA name."""
    if name == "local":
        return dateutil_tz.tzlocal()
    return ZoneInfo(name)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MemorySchedule(_Strict):
    portrait_at: str = Field(default="11:30", description="Daily portrait rebuild, HH:MM ('' = never).")
    reflection_at: str = Field(default="23:00", description="Daily reflection, HH:MM ('' = never).")

    _times = field_validator("portrait_at", "reflection_at")(_clock_time_or_empty)


class TopicEvent(_Strict):
    name: str = Field(description="The topic, e.g. /people/detected (relative names resolve in the node's namespace).")
    type: str = Field(description="Its message type, package/msg/Type, e.g. std_msgs/msg/Bool.")

    @field_validator("name")
    @classmethod
    def _topic_name(cls, value: str) -> str:
        if not TOPIC_NAME.match(value):
            raise ValueError("not a ROS topic name (letters, digits, _ and / between parts, e.g. /people/detected)")
        return value

    @field_validator("type")
    @classmethod
    def _message_type(cls, value: str) -> str:
        if not MESSAGE_TYPE.match(value):
            raise ValueError("a message type is written package/msg/Type, e.g. std_msgs/msg/Bool")
        return value


class Trigger(_Strict):
    """One proactive trigger: when (exactly one kind), what (say or prompt), to whom."""

    name: str = Field(min_length=1)
    daily: str | None = None
    every: float | None = Field(default=None, gt=0.0)
    cron: str | None = None
    topic: TopicEvent | None = None
    silence: float | None = Field(default=None, gt=0.0)
    say: str = ""
    prompt: str = ""
    user: str = ""

    @field_validator("daily")
    @classmethod
    def _daily(cls, value: str | None) -> str | None:
        if value is not None:
            parse_clock_time(value)
        return value

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        if value is not None:
            problem = cron_problem(value)
            if problem:
                raise ValueError(problem)
        return value.strip() if value is not None else None

    @model_validator(mode="after")
    def _one_of_each(self) -> Trigger:
        kinds = [kind for kind in KINDS if getattr(self, kind) is not None]
        if len(kinds) != 1:
            raise ValueError(f"needs exactly one of {', '.join(KINDS)} (got {', '.join(kinds) or 'none'})")
        if bool(self.say.strip()) == bool(self.prompt.strip()):
            raise ValueError("needs exactly one of say (a fixed line) or prompt (an instruction for the model)")
        return self

    @property
    def kind(self) -> str:
        """daily | every | cron | topic | silence."""
        return next(kind for kind in KINDS if getattr(self, kind) is not None)

    def time_rule(self, zone: tzinfo) -> TimeRule | None:
        """The time rule of a daily / every / cron trigger (None for topic and silence)."""
        if self.daily is not None:
            return daily_rule(self.daily, zone)
        if self.every is not None:
            return IntervalRule(self.every)
        if self.cron is not None:
            return CronRule(self.cron, zone)
        return None


class ProactiveSchedule(_Strict):
    enabled: bool = True
    quiet_hours: str = Field(
        default="", description="HH:MM-HH:MM (may span midnight) with nothing proactive ('' = none)."
    )
    min_gap: float = Field(default=1800.0, ge=0.0, description="Seconds between two proactive lines to the same user.")
    max_per_day: int = Field(default=6, ge=0, description="Proactive lines per user and day (0 = no limit).")
    absent_after: float = Field(
        default=3600.0, ge=0.0, description="Time triggers skip when nobody was heard for this long (0 = never skip)."
    )
    max_delay: float = Field(
        default=120.0, ge=0.0, description="Seconds a due line may wait (someone speaking) before it is dropped."
    )
    triggers: list[Trigger] = Field(default_factory=list)

    @field_validator("quiet_hours")
    @classmethod
    def _quiet_hours(cls, value: str) -> str:
        if value:
            parse_quiet_hours(value)
        return value

    def cross_check(self) -> list[tuple[str, str]]:
        names = [t.name for t in self.triggers]
        return [
            (f"proactive.triggers[{i}].name", f"trigger name {t.name!r} used twice")
            for i, t in enumerate(self.triggers)
            if names.index(t.name) != i
        ]

    @cached_property
    def quiet(self) -> tuple[time, time] | None:
        return parse_quiet_hours(self.quiet_hours) if self.quiet_hours else None


def parse_quiet_hours(value: str) -> tuple[time, time]:
    parts = value.split("-")
    if len(parts) != 2:
        raise ValueError('quiet hours are written HH:MM-HH:MM, e.g. "22:00-07:00"')
    start, end = parse_clock_time(parts[0].strip()), parse_clock_time(parts[1].strip())
    if start == end:
        raise ValueError('quiet hours start and end at the same time: all day or never? use "" for none')
    return start, end


class ScheduleFile(_Strict):
    timezone: str = Field(default="local", description="'local' or an IANA time zone name (e.g. Asia/Shanghai).")
    memory: MemorySchedule = Field(default_factory=lambda: MemorySchedule())
    proactive: ProactiveSchedule = Field(default_factory=lambda: ProactiveSchedule())

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            resolve_zone(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError("unknown time zone: 'local' or an IANA name such as Asia/Shanghai or UTC") from None
        return value

    def cross_check(self) -> list[tuple[str, str]]:
        return self.proactive.cross_check()

    @cached_property
    def zone(self) -> tzinfo:
        return resolve_zone(self.timezone)


def load_schedule(path: Path | str) -> ScheduleFile:
    """Read and validate a schedule file (ScheduleError with file, key path and line)."""
    return load_model(path, ScheduleFile, error=ScheduleError)
