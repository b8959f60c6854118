"""The owner's corrections of the companion's tone, read from their own words by rules.

"Don't sound like customer service", "别客服腔", "be more casual", "说话简短点" are standing
instructions about how the companion talks (seed 003: 主人纠正口吻 → 策略事实). Each known
correction becomes one policy fact: a confirmed, persistent rule of that owner
(`kind:rule`, `persistent:true`), keyed so that saying it again changes nothing and the
rules are listed once. The dialogue writes it (only for the owner of the robot, never for a
guest); the memory policy confirms such a write when the owner's heard words say it
(`states_tone_rule`), as it does for a statement about oneself; the active rules then carry
it into every later prompt of that owner.

Pure Python, no ROS.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .model import PERSISTENT_TAG, RULE_TAG

TONE_KEY_PREFIX = "tone:"


@dataclass(frozen=True)
class ToneRule:
    key: str  # "tone:<name>": one rule per kind of correction
    content: str  # the rule as the prompt states it (English: every prompt is)

    @property
    def tags(self) -> tuple[str, ...]:
        return (RULE_TAG, PERSISTENT_TAG, "source:user")


# (key, the rule, what the owner says). Negations and questions about tone ("do I sound like
# customer service?") are not corrections: the patterns need an imperative or a wish.
_CORRECTIONS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (
        "tone:no_customer_service",
        "Talk like a friend at home, never like customer service: no stock politeness, "
        "no 'How may I help you', no apologising for nothing.",
        re.compile(
            r"\b(?:don'?t|do not|stop|quit) (?:sound(?:ing)?|talk(?:ing)?|speak(?:ing)?) like (?:a |an )?"
            r"(?:customer (?:service|support)|call cent(?:er|re)|help ?desk|service (?:bot|agent))|"
            r"\bless like (?:a )?customer service\b|"
            r"(?:别|不要|不许|少)(?:用|带|来|那么|这么)?(?:客服|官方)(?:腔|味|口吻|语气)|"
            r"(?:别|不要)(?:像|跟)客服(?:一样|似的)",
            re.I,
        ),
    ),
    (
        "tone:casual",
        "Speak casually and warmly, in everyday words.",
        re.compile(
            r"\bbe (?:more |a bit more |a little more )?(?:casual|relaxed|informal)\b|"
            r"\b(?:talk|speak) (?:more )?(?:casually|informally)\b|\bless formal\b|"
            r"(?:说话)?(?:随意|随便|轻松|自然)(?:一)?(?:点|些)|(?:别|不要)(?:那么|这么)?(?:正式|拘谨|生硬)",
            re.I,
        ),
    ),
    (
        "tone:brief",
        "Keep every answer short: one or two sentences.",
        re.compile(
            r"\b(?:be (?:more )?(?:brief|concise)|keep (?:it|your answers|answers) (?:short|brief)|"
            r"shorter (?:answers|replies)|(?:talk|say) less|stop rambling)\b|"
            r"(?:说话|回答|回复)?(?:简短|简洁|短)(?:一)?(?:点|些)|(?:别|不要)(?:那么)?(?:啰嗦|啰唆|唠叨)|少说(?:点|几句)",
            re.I,
        ),
    ),
)
_QUESTION = re.compile(r"[?？]\s*$|[吗么]\s*[?？]?\s*$|\b(?:do|did|am|is|does) (?:i|you|it) (?:sound|talk)\b", re.I)


def _as_typed(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "").replace("\u2019", "'").replace("\u2018", "'")


def tone_corrections(text: str) -> list[ToneRule]:
    """The corrections of tone in one utterance, in table order; [] for a question."""
    typed = _as_typed(text).strip()
    if not typed or _QUESTION.search(typed):
        return []
    return [ToneRule(key, rule) for key, rule, said in _CORRECTIONS if said.search(typed)]


def states_tone_rule(texts: list[str], key: str, content: str) -> bool:
    """True when the owner's words in `texts` ask for this tone rule (same key and wording):
    the memory policy's check that a confirmed tone rule came from the owner's own words."""
    if not key.startswith(TONE_KEY_PREFIX):
        return False
    return any(rule.key == key and rule.content == content.strip() for t in texts for rule in tone_corrections(t))
