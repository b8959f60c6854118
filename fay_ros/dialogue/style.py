"""The companion's voice by scene and relation, and the speaker card of the person spoken to.

Seed 003 (说话样例, 说话人卡片): the examples of how the companion sounds are chosen per
turn by the turn's scene (morning, comfort, play, shop) and the relation of the speaker
(owner, adult, child, guest), and go into the system prompt as examples, never as history
(a model copies history as things it said). The speaker card says how to address the person
speaking (name, language, formality); it is built only from that person's own statements
about themselves (memory.self_facts: `name`, `address:formality`, `address:language`), which
the dialogue learns from their own turns only, so what someone says about them, or what is
overheard, never changes it. The owner's corrections of tone are rules of the memory
(memory.tone), not part of this file.

`config/voice_examples.yaml` is read with the strict YAML loader: an unknown scene or
relation, or an unknown key, is a StyleError naming the file, the key and its line.

Pure Python, no ROS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..common.errors import TableError
from ..common.yaml_loader import load_model
from ..memory.self_facts import ADDRESS_FORMALITY, ADDRESS_LANGUAGE, CASUAL
from ..text.words import has_cjk
from .fact_answers import user_name

SCENES = ("morning", "comfort", "play", "shop")
RELATIONS = ("owner", "adult", "child", "guest")
OWNER, GUEST = "owner", "guest"
EXAMPLES_PER_TURN = 2
CARD_KEY_PREFIX = "address:"

# Prompt headings (the reply guard stops a reply that starts copying one: prompts.BLOCK_HEADINGS).
CARD = "How to address the person you are talking with"
STYLE = "Examples of your voice for this moment (style only; never repeat them word for word)"

Scene = Literal["morning", "comfort", "play", "shop"]
Relation = Literal["owner", "adult", "child", "guest"]


class StyleError(TableError):
    """A voice examples file that cannot be used; names the file, the key and its line."""


class VoiceExamples(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scene: Scene
    relation: Relation
    lines: list[str] = Field(min_length=1)


class StyleTable(BaseModel):
    model_config = ConfigDict(extra="forbid")

    default_scene: Literal["", "morning", "comfort", "play", "shop"] = ""
    examples: list[VoiceExamples] = Field(default_factory=list)

    @classmethod
    def load(cls, path: Path | str) -> StyleTable:
        return load_model(path, cls, error=StyleError)

    def lines_for(self, scene: str, relation: str) -> list[str]:
        return [line for ex in self.examples if ex.scene == scene and ex.relation == relation for line in ex.lines]


# What a turn is about, from the speaker's words; the morning also from the clock.
_SCENE_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "comfort",
        re.compile(
            r"\b(?:sad|upset|lonely|tired|exhausted|worried|scared|afraid|anxious|stressed|depressed|"
            r"hurts?|crying|cried|miss (?:him|her|them)|bad day)\b|"
            r"难过|伤心|累了|好累|孤单|孤独|害怕|担心|焦虑|压力|烦|想哭|哭了|不开心|心情不好",
            re.I,
        ),
    ),
    (
        "shop",
        re.compile(
            r"\b(?:buy|buying|price|prices|cost|costs|how much|discount|sale|cheaper|in stock|checkout|pay)\b|"
            r"买|多少钱|价格|价钱|打折|便宜|有货|结账|付款",
            re.I,
        ),
    ),
    (
        "play",
        re.compile(
            r"\b(?:play|game|games|joke|jokes|riddle|riddles|let's have fun|hide and seek|sing)\b|"
            r"玩|游戏|笑话|猜谜|谜语|唱歌|捉迷藏",
            re.I,
        ),
    ),
    ("morning", re.compile(r"\bgood morning\b|\bmorning!|早上好|早安|早呀|早啊", re.I)),
)
MORNING_HOURS = range(5, 10)


def scene_of(text: str, hour: int, default: str = "") -> str:
    """The turn's scene: what the words are about first (comfort before anything else: a sad
    person in a shop is comforted), then the morning hours, then the configured default."""
    for scene, said in _SCENE_WORDS:
        if said.search(text or ""):
            return scene
    if hour in MORNING_HOURS:
        return "morning"
    return default


def voice_examples(table: StyleTable | None, scene: str, relation: str, language: str, turn: int) -> list[str]:
    """Up to EXAMPLES_PER_TURN lines for this scene and relation in the turn's language,
    rotating with the turn number so the voice does not settle on one line."""
    if table is None or not scene:
        return []
    zh = language.startswith("zh")
    lines = [line for line in table.lines_for(scene, relation or OWNER) if has_cjk(line) == zh]
    if not lines:
        return []
    count = min(EXAMPLES_PER_TURN, len(lines))
    return [lines[(turn + i) % len(lines)] for i in range(count)]


@dataclass(frozen=True)
class SpeakerCard:
    name: str = ""
    language: str = ""  # "English" / "Chinese": what they asked to be answered in
    formality: str = ""  # "casually" / "formally" / "" (not said)

    def __bool__(self) -> bool:
        return bool(self.name or self.language or self.formality)

    def line(self) -> str:
        """The card as one prompt line ("" for an empty card)."""
        parts = []
        if self.name:
            parts.append(f"call them {self.name}")
        if self.language:
            parts.append(f"answer in {self.language}")
        if self.formality == CASUAL:
            parts.append("casually, as a friend (no titles, no honorifics)")
        elif self.formality:
            parts.append("politely and formally")
        return "; ".join(parts) + "." if parts else ""


def speaker_card(facts: dict[str, str]) -> SpeakerCard:
    """The card of the person whose facts these are (their own statements only)."""
    formality = facts.get(ADDRESS_FORMALITY, "")
    language = facts.get(ADDRESS_LANGUAGE, "")
    return SpeakerCard(
        name=user_name(facts),
        language=_last_word(language),
        formality="formally" if "formally" in formality else CASUAL if CASUAL in formality else "",
    )


def _last_word(content: str) -> str:
    """ "User wants to be answered in Chinese." -> "Chinese"."""
    m = re.search(r"in (\w+)\.?$", content.strip())
    return m.group(1) if m else ""


def is_card_key(key: str) -> bool:
    """A fact that belongs to the speaker card (said there, not as a memory line)."""
    return key.startswith(CARD_KEY_PREFIX)


def addressing_blocks(card: SpeakerCard, examples: list[str]) -> tuple[str, ...]:
    """The prompt blocks of a turn: the speaker card, then the voice examples."""
    blocks = []
    if card:
        blocks.append(f"{CARD}: {card.line()}")
    if examples:
        blocks.append(STYLE + ":\n" + "\n".join(f'- "{line}"' for line in examples))
    return tuple(blocks)
