"""The memory policy (seed 002), independent of any prompt: a model may propose, this decides.

- An explicit request from the user ("remember", "记住", "以后", "别忘了", ...) is what makes a
  memory confirmed; anything inferred is a candidate, never used in answers until confirmed.
- When the memory node has heard the owner's recent words, a write flagged user_confirmed
  is checked against them: without an explicit request in those words it is stored as a
  candidate. (A caller with no conversation, e.g. a family app or an external agent writing
  a rule, is trusted with the flag.)
- A statement about oneself ("my name is Tom", "I like hiking", "我叫林") is the user's own
  word, not an inference: a write flagged user_confirmed whose key is one the user's heard
  words state, with the value they stated (`self_facts.states_fact`), is confirmed. What a model concludes from
  such words without that key stays a candidate.
- A correction of the companion's tone ("don't sound like customer service", "别客服腔") is
  a standing instruction: a write flagged user_confirmed with the tone rule the owner's heard
  words ask for (`tone.states_tone_rule`) is a confirmed rule.
- The owner always comes from the session; an unidentified guest ("") gets no private memory.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .model import (
    CANDIDATE,
    CONFIRMED,
    MAX_CONTENT_CHARS,
    NODE_TYPES,
    MemoryInputError,
    is_guest,
    normalise_tags,
    tag_value,
)
from .self_facts import states_fact
from .tone import states_tone_rule

GUEST_REFUSAL = "guest has no private memory: the speaker is not identified (owner is empty)"

# Explicit requests to remember, in the user's own words (simplified and traditional Chinese).
_EXPLICIT = re.compile(
    r"[记記]住|[记記]下|[记記]一下|[别別]忘|不要忘|不[许許]忘|以[后後]|今[后後]|往[后後]|[从從][现現]在起|[从從]今天起|"
    r"我的偏好是|"
    r"\bremember\b|\bdon'?t forget\b|\bdo not forget\b|\bnote that\b|\bplease note\b|\btake note\b|"
    r"\bmake a note\b|\bkeep in mind\b|\bfrom now on\b|\bin (the )?future\b",
    re.IGNORECASE,
)
# ...that are really questions about memory ("do you remember...?", "你还记得吗"), not requests.
_QUESTION_ABOUT_MEMORY = re.compile(
    r"[记記]住了[吗嗎]|[记記]得[吗嗎]|[还還][记記]得|你[记記]住.*[吗嗎么麼]|是否[记記]住|"
    r"\b(do|did|can|don't|didn't) you (still |even )?remember\b|\bremember when\b",
    re.IGNORECASE,
)
# ...or the user speaking of their own memory ("I remember when...", "I'll remember", "我会记住的"),
# which asks nothing of the robot. "帮我记住" (help me remember) is a request, so 帮/替/给 before
# 我 do not count.
_OWN_RECOLLECTION = re.compile(
    r"(?<![帮幫替给給])我(会|會|要|也|都|一定|能|已经|已經|早就|没有|沒有|没|沒|不)?[记記][住下]|"
    r"\bi('ll| will| do| did| can| could| still| always| also| just| really| don't| didn't| can't| won't)?"
    r" remember\b",
    re.IGNORECASE,
)


# A user correcting a fact already confirmed ("其实我现在吃香菜了") is as explicit as a request.
_CORRECTION = re.compile(
    r"其实|不再|改成|改为|不对|纠正|更正|现在.{0,6}了|已经不|"
    r"\bactually\b|\bno longer\b|\banymore\b|\bcorrection\b|\bi changed\b|\bnow i\b",
    re.IGNORECASE,
)


def _as_typed(text: str) -> str:
    """NFKC (full-width letters) and straight apostrophes: phones and recognisers write "don’t"."""
    return unicodedata.normalize("NFKC", text).replace("\u2019", "'").replace("\u2018", "'")


def is_explicit_correction(text: str) -> bool:
    """True when the user's words correct something ("其实…", "不再…", "actually", "no longer")."""
    text = _as_typed(text or "")
    return bool(text) and bool(_CORRECTION.search(text)) and not _QUESTION_ABOUT_MEMORY.search(text)


def is_explicit_request(text: str) -> bool:
    """True when the user's words ask to remember something (记住 / 以后 / 别忘了 / remember /
    please note ...), and are neither a question about memory nor the user speaking of their
    own memory. The one rule for "the user asked to remember": the memory policy checks heard
    words with it, the dialogue's memory_remember tool the question of its turn.
    """
    text = _as_typed(text or "")
    if not text or not _EXPLICIT.search(text):
        return False
    return not _QUESTION_ABOUT_MEMORY.search(text) and not _OWN_RECOLLECTION.search(text)


# Importance (1..10) when the caller leaves it at 0: by kind, since no LLM is on the write path.
_KIND_IMPORTANCE = {
    "rule": 9.0,
    "preference": 7.0,
    "decision": 7.0,
    "error": 7.0,
    "fact": 6.0,
    "insight": 6.0,
    "event": 5.0,
    "observation": 4.0,
}
CONVERSATION_IMPORTANCE = 3.0


def estimate_importance(node_type: str, tags: list[str], explicit: bool) -> float:
    if node_type == "conversation":
        return CONVERSATION_IMPORTANCE
    base = _KIND_IMPORTANCE.get(tag_value(tags, "kind"), 5.0)
    if "persistent:true" in tags:
        base += 1.0
    if explicit:
        base += 1.0
    return float(min(base, 10.0))


@dataclass
class RememberRequest:
    owner: str
    content: str
    node_type: str = ""
    importance: float = 0.0
    tags: list[str] = field(default_factory=list)
    key: str = ""
    user_confirmed: bool = False
    source_session: str = ""
    source_turn: int = 0
    ttl: float = 0.0


@dataclass
class RememberDecision:
    status: str  # confirmed | candidate
    node_type: str
    content: str
    tags: list[str]
    key: str
    importance: float
    reason: str  # why this status (for the response message)


def decide_remember(
    req: RememberRequest,
    heard_user_texts: list[str] | None,
    verify_explicit: bool = True,
    corrects_confirmed_fact: bool = False,
    stated_texts: list[str] | None = None,
    known_relatives: Callable[[], Sequence[tuple[str, str]]] = tuple,
) -> RememberDecision:
    """Validate a Remember request and decide its status. Raises MemoryInputError on bad input
    and PermissionError for a guest.

    `heard_user_texts`: the owner's recent final transcripts (None/empty: nothing heard, the
    flag is trusted). `corrects_confirmed_fact`: the request carries the key of a confirmed
    fact, so a correction ("其实…") counts as explicit too. `stated_texts`: the owner's last
    few utterances across turns (besides `heard_user_texts`), where a statement about
    oneself with this key and value makes the flag true; `known_relatives`: the relatives the
    owner named before (asked for only when the words alone state nothing), for words that
    name one by name alone."""
    heard = heard_user_texts or []
    stated = list(stated_texts or []) + list(heard)
    if is_guest(req.owner):
        raise PermissionError(GUEST_REFUSAL)
    content = (req.content or "").strip()
    if not content:
        raise MemoryInputError("content is empty: nothing to remember")
    if len(content) > MAX_CONTENT_CHARS:
        raise MemoryInputError(f"content has {len(content)} characters; at most {MAX_CONTENT_CHARS}")
    node_type = (req.node_type or "observation").strip()
    if node_type not in NODE_TYPES:
        raise MemoryInputError(f"node_type {req.node_type!r}: expected one of {', '.join(NODE_TYPES)}")
    if not (0.0 <= req.importance <= 10.0):
        raise MemoryInputError(f"importance {req.importance}: expected 1..10, or 0 to let the memory node estimate it")
    if req.ttl < 0 or req.ttl != req.ttl:
        raise MemoryInputError(f"ttl {req.ttl}: expected seconds >= 0 (0 = never expires)")
    key = (req.key or "").strip()
    if len(key) > 200 or any(ord(c) < 32 for c in key):
        raise MemoryInputError("key: at most 200 characters, no control characters")
    tags = normalise_tags(req.tags)
    if "source:fay_reflection" in tags and node_type != "reflection":
        raise MemoryInputError("tag source:fay_reflection is reserved for reflections")

    checked = req.user_confirmed and verify_explicit and bool(heard)
    requested = checked and any(is_explicit_request(t) for t in heard)
    corrected = checked and not requested and corrects_confirmed_fact and any(is_explicit_correction(t) for t in heard)
    # the owner's own correction of the companion's tone is a request too (tone.py)
    said_about_self = (
        checked
        and not requested
        and (
            states_fact(stated, key, content)
            or states_tone_rule(stated, key, content)
            or states_fact(stated, key, content, known=known_relatives())
        )
    )
    if not req.user_confirmed:
        status, reason = CANDIDATE, "stored as candidate (inferred; not used in answers until confirmed)"
    elif checked and not requested and not corrected and not said_about_self:
        status, reason = (
            CANDIDATE,
            (
                "stored as candidate: user_confirmed was set but the user's recent words "
                "contain no explicit request to remember"
            ),
        )
    elif said_about_self:
        status, reason = CONFIRMED, "stored (confirmed: the user said it about themselves)"
    else:
        status, reason = CONFIRMED, "stored (confirmed)"
    importance = req.importance or estimate_importance(node_type, tags, status == CONFIRMED)
    return RememberDecision(
        status=status,
        node_type=node_type,
        content=content,
        tags=tags,
        key=key,
        importance=float(importance),
        reason=reason,
    )
