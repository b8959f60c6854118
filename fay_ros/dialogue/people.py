"""Who is in the household: the people file (`config/people.yaml`), one model for the dialogue
and the asr node. Pure Python, no ROS.

The file lists each person the companion knows: their user id (`id`, what memory, reminders
and the dialogue key on), `name`, `role` (what they may do: owner | user | guest), `relation`
(how to talk to them: owner | adult | child | guest), `language`, and the REP-155 ids that
identify them (`voices`: voice ids of a speaker-identification node, `persons`: person ids).
Its `tools` section says which tools each role may use (the tool set is decided by identity,
so it lives with the identities rather than in the tools file, which lists what exists); its
`speaking` section tunes when the companion speaks (`dialogue.room`).

Identity is bound by the server side only: the asr node's fixed `user_id`, the voice or person
id a speaker-identification node publishes (`SpeakerTracker`), or a web session's token.
Nothing a person says changes who they are taken for.

An identified user id that the file does not list has the role `default_role` (`user`); the
unidentified guest (`""`) is always a guest. Errors name the file, the key and its line
(`common.yaml_loader`); the dialogue and asr nodes re-read the file when it changes.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..common.errors import TableError
from ..common.yaml_loader import load_model

OWNER: Final = "owner"
USER: Final = "user"
GUEST: Final = "guest"
ROLES = (OWNER, USER, GUEST)
Role = Literal["owner", "user", "guest"]
Relation = Literal["owner", "adult", "child", "guest"]
ALL_TOOLS: Final = "all"  # a role's tool set: every tool the tools file configures
# The tools that create a schedule: a scheduled turn (a reminder's line, proactive talk) never
# sets a new one (no task inside a task).
SCHEDULING_TOOLS = frozenset({"reminder_add"})
# What an unidentified or unknown speaker may use by default: harmless lookups only (the
# knowledge tool searches the household's shared documents, never a person's memory).
DEFAULT_GUEST_TOOLS = ("current_time", "knowledge_search")


class PeopleFileError(TableError):
    """The people file is unusable; the message names file, key path and line of each problem."""


class PersonEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, description="the user id memory and reminders key on")
    # empty: not known from the file (the companion asks, and takes the name the person says)
    name: str = Field("", description="what the companion calls this person")
    role: Role = USER
    relation: Relation = "adult"
    language: str = ""
    voices: list[str] = Field(default_factory=list, description="REP-155 voice ids of this person")
    persons: list[str] = Field(default_factory=list, description="REP-155 person ids of this person")

    @field_validator("id", "name")
    @classmethod
    def _stripped(cls, value: str) -> str:
        if value != value.strip():
            raise ValueError("must not start or end with spaces")
        return value


class ToolSets(BaseModel):
    """Tools per role: `all` (every configured tool) or a list of tool names."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    owner: Literal["all"] | list[str] = ALL_TOOLS
    user: Literal["all"] | list[str] = ALL_TOOLS
    guest: Literal["all"] | list[str] = Field(default_factory=lambda: list(DEFAULT_GUEST_TOOLS))


class SpeakingRules(BaseModel):
    """When the companion speaks in a room of several people (`dialogue.room.Room`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    wake_words: list[str] = Field(
        default_factory=list, description="words that address the companion, besides its persona name"
    )
    reply_window: float = Field(20.0, ge=0.0, description="seconds an answer to the companion's question counts")
    presence_window: float = Field(120.0, gt=0.0, description="seconds a speaker counts as present")
    chime_in_chance: float = Field(0.0, ge=0.0, le=1.0, description="chance to join a close topic (0 = never)")
    topic_overlap: float = Field(0.3, ge=0.0, le=1.0, description="share of words shared with the recent talk")
    cooldown: float = Field(60.0, ge=0.0, description="seconds between two chime-ins")
    room_memory: float = Field(300.0, gt=0.0, description="seconds overheard talk is kept (in memory only)")
    room_memory_lines: int = Field(50, ge=1, le=1000, description="most overheard lines kept")


class PeopleFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    people: list[PersonEntry] = Field(default_factory=list)
    default_role: Literal["user", "guest"] = Field(USER, description="role of an identified user id not listed")
    tools: ToolSets = Field(default_factory=ToolSets)
    speaking: SpeakingRules = Field(default_factory=lambda: SpeakingRules.model_validate({}))

    def cross_check(self) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        for kind in ("id", "voices", "persons"):
            seen: dict[str, int] = {}
            for index, person in enumerate(self.people):
                values = [person.id] if kind == "id" else getattr(person, kind)
                for value in values:
                    if value in seen and seen[value] != index:
                        where = f"people[{index}].{kind}"
                        problems.append((where, f"{value!r} is already used by people[{seen[value]}]"))
                    seen.setdefault(value, index)
        return problems


@dataclass(frozen=True)
class Person:
    """One person as the dialogue sees them (`People.find`)."""

    id: str
    name: str
    role: str = USER
    relation: str = "adult"
    language: str = ""
    voices: tuple[str, ...] = ()
    persons: tuple[str, ...] = ()


GUEST_PERSON = Person("", "", GUEST, "guest")


@dataclass(frozen=True)
class People:
    """The loaded people file: who is who, and what each role may use."""

    persons: tuple[Person, ...] = ()
    default_role: str = USER
    tools: ToolSets = field(default_factory=ToolSets)
    speaking: SpeakingRules = field(default_factory=lambda: SpeakingRules.model_validate({}))
    path: Path | None = None

    @classmethod
    def load(cls, path: Path | str) -> People:
        parsed = load_model(path, PeopleFile, error=PeopleFileError)
        return cls.of(parsed, Path(path))

    @classmethod
    def of(cls, parsed: PeopleFile, path: Path | None = None) -> People:
        persons = tuple(
            Person(p.id, p.name, p.role, p.relation, p.language, tuple(p.voices), tuple(p.persons))
            for p in parsed.people
        )
        return cls(persons, parsed.default_role, parsed.tools, parsed.speaking, path)

    def find(self, user_id: str) -> Person | None:
        """The listed person with this user id; None for the guest ("") and unlisted ids."""
        if not user_id:
            return None
        return next((p for p in self.persons if p.id == user_id), None)

    def role_of(self, user_id: str) -> str:
        """owner | user | guest: the guest ("") is always a guest."""
        if not user_id:
            return GUEST
        person = self.find(user_id)
        return person.role if person is not None else self.default_role

    def by_voice(self, voice_id: str) -> str:
        """The user id of a REP-155 voice id; "" (a guest) for a voice nobody is known by."""
        return next((p.id for p in self.persons if voice_id in p.voices), "")

    def by_person(self, person_id: str) -> str:
        """The user id of a REP-155 person id; "" (a guest) for an unknown person."""
        return next((p.id for p in self.persons if person_id in p.persons), "")

    def tool_names(self, user_id: str, configured: tuple[str, ...], *, scheduled: bool = False) -> tuple[str, ...]:
        """The tools this speaker may use, of `configured` (the tools file's), in its order; a
        scheduled turn never gets a tool that sets a new schedule."""
        chosen = getattr(self.tools, self.role_of(user_id))
        names = configured if chosen == ALL_TOOLS else tuple(n for n in configured if n in chosen)
        return tuple(n for n in names if not (scheduled and n in SCHEDULING_TOOLS))

    def named_tools(self) -> dict[str, list[str]]:
        """Each role's listed tool names (not `all`), to check them against the registry."""
        return {role: list(chosen) for role in ROLES if (chosen := getattr(self.tools, role)) != ALL_TOOLS}


class SpeakerTracker:
    """Who spoke an utterance, from REP-155 (a speaker-identification node's topics): when each
    voice was speaking (`/humans/voices/<id>/is_speaking`) and which person a voice belongs to
    (`/humans/persons/<id>/voice_id`). The speaker of an utterance is the voice that spoke most
    within its time span; a voice nobody is known by, or no voice at all, is the guest "".
    Times are the caller's clock (the asr node's: capture times of the audio). Pure: the shell
    feeds it."""

    def __init__(self, people: People, keep: float = 120.0) -> None:
        self.people = people
        self.keep = keep  # seconds of speaking spans kept
        self._voice_of_person: dict[str, str] = {}  # REP-155 person id -> its voice id
        self._since: dict[str, float] = {}  # voice -> when it started speaking (speaking now)
        self._spans: deque[tuple[str, float, float]] = deque()  # (voice, start, end), oldest first

    def person_voice(self, person_id: str, voice_id: str) -> None:
        """/humans/persons/<person_id>/voice_id said which voice is this person's."""
        self._voice_of_person[person_id] = voice_id

    def voice_speaking(self, voice_id: str, speaking: bool, at: float) -> None:
        started = self._since.pop(voice_id, None)
        if speaking:
            self._since[voice_id] = started if started is not None else at
        elif started is not None:
            self._spans.append((voice_id, started, at))
        while self._spans and at - self._spans[0][2] > self.keep:
            self._spans.popleft()

    def speaking_now(self) -> tuple[str, ...]:
        """The voices speaking now."""
        return tuple(self._since)

    def voice_between(self, start: float, end: float) -> str:
        """The voice that spoke most between `start` and `end` ("" = none)."""
        spoken: dict[str, float] = {}
        spans = [*self._spans, *((v, since, max(end, since)) for v, since in self._since.items())]
        for voice, begun, ended in spans:
            overlap = min(end, ended) - max(start, begun)
            if overlap > 0 or (start == end and begun <= start <= ended):
                spoken[voice] = spoken.get(voice, 0.0) + max(overlap, 0.0)
        return max(spoken, key=lambda v: spoken[v]) if spoken else ""

    def speaker_between(self, start: float, end: float) -> str:
        """The user id of who spoke between `start` and `end`; "" = a guest (unknown or none)."""
        return self.user_of_voice(self.voice_between(start, end))

    def user_of_voice(self, voice: str) -> str:
        if not voice:
            return ""
        user = self.people.by_voice(voice)
        if user:
            return user
        for person_id, person_voice in self._voice_of_person.items():
            if person_voice == voice and (user := self.people.by_person(person_id)):
                return user
        return ""
