"""The memory node's data model: what one memory is, and the vocabulary of its tags.

Follows Fay's memory stream (observation / conversation / reflection nodes with namespaced
tags) plus the companion policy of seed 002: every memory has a status, and only confirmed
memories are ever used in answers.
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from dataclasses import dataclass, field

from ..common.errors import FayError

NODE_TYPES = ("observation", "conversation", "reflection")

CONFIRMED = "confirmed"
CANDIDATE = "candidate"
SUPERSEDED = "superseded"
STATUSES = (CONFIRMED, CANDIDATE, SUPERSEDED)

# Fay's `kind:` enumeration (docs/memory_mechanism.md).
KINDS = ("decision", "event", "fact", "rule", "error", "insight", "preference", "observation")

# Tag namespaces and what they mean; `describe_schema()` hands this to external agents.
TAG_NAMESPACES = {
    "kind": "what the memory is: " + " | ".join(KINDS),
    "source": "who wrote it: user, fay_self, fay_conversation, fay_reflection, claude_code, "
    "cursor, family_app, fay_import, ...",
    "persistent": "'persistent:true' marks a long-lived constraint; every kind:rule carries it",
    "domain": "area of life or work: companion, life_assistant, homecare, education, quant, ...",
    "session": "session / conversation id the memory came from (not inherited by reflections)",
    "date": "YYYY-MM-DD the memory is about (not inherited by reflections)",
    "schedule": "when a rule applies, e.g. schedule:daily (not inherited by reflections)",
    "strategy": "free-form sub-domain labels such as strategy:, symbol:, subject:, topic:, module:",
}

# Tag namespaces that describe one moment; reflections do not inherit them (Fay's rule).
EPHEMERAL_TAG_NAMESPACES = ("session", "date", "schedule")

REFLECTION_TAGS = ("kind:insight", "source:fay_reflection")
CONVERSATION_SOURCE_TAG = "source:fay_conversation"
RULE_TAG = "kind:rule"
PERSISTENT_TAG = "persistent:true"

MAX_CONTENT_CHARS = 4000
MAX_TAG_CHARS = 200
MAX_TAGS = 32
_TAG_RE = re.compile(r"^[a-z][a-z0-9_\-]*:[^\s\x00-\x1f]([^\x00-\x1f]*[^\s\x00-\x1f])?$")


class MemoryInputError(FayError, ValueError):
    """A request to the memory is malformed; the message says which field and why."""


def new_id() -> str:
    return uuid.uuid4().hex[:20]


def is_guest(owner: str) -> bool:
    """An unidentified speaker ("" or blank) has no private memory."""
    return not owner or not owner.strip()


def tag_namespace(tag: str) -> str:
    return tag.split(":", 1)[0]


def tag_value(tags: list[str] | tuple[str, ...], namespace: str) -> str:
    """Value of the first `namespace:value` tag, or ""."""
    prefix = namespace + ":"
    for tag in tags:
        if tag.startswith(prefix):
            return tag[len(prefix) :]
    return ""


def normalise_tags(tags: list[str] | tuple[str, ...]) -> list[str]:
    """Strip, lower-case the namespace, drop duplicates, validate; keeps the caller's order."""
    if len(tags) > MAX_TAGS:
        raise MemoryInputError(f"tags: at most {MAX_TAGS} tags, got {len(tags)}")
    out: list[str] = []
    for raw in tags:
        tag = str(raw).strip()
        if not tag:
            continue
        ns, sep, value = tag.partition(":")
        tag = f"{ns.strip().lower()}{sep}{value.strip()}"
        if len(tag) > MAX_TAG_CHARS or not _TAG_RE.match(tag):
            raise MemoryInputError(
                f"tag {raw!r}: expected 'namespace:value' (namespace a-z0-9_-, no control "
                f"characters, at most {MAX_TAG_CHARS} characters), e.g. 'kind:preference'"
            )
        if tag not in out:
            out.append(tag)
    kind = tag_value(out, "kind")
    if kind and kind not in KINDS:
        raise MemoryInputError(f"tag 'kind:{kind}': unknown kind; use one of {', '.join(KINDS)}")
    return out


def inherited_tags(source_tags: list[list[str]]) -> list[str]:
    """Tags of a reflection distilled from nodes with `source_tags` (Fay's inheritance rule).

    The sources' tags are kept -- their source: and persistent: too, as Fay keeps them -- but
    the moment-bound ones (session:, date:, schedule:) and the sources' kind: (a reflection
    is an insight), then kind:insight + source:fay_reflection.
    """
    counts: dict[str, int] = {}
    for tags in source_tags:
        for tag in dict.fromkeys(tags):
            ns = tag_namespace(tag)
            if ns in EPHEMERAL_TAG_NAMESPACES or ns == "kind" or tag in REFLECTION_TAGS:
                continue
            counts[tag] = counts.get(tag, 0) + 1
    kept = sorted(counts, key=lambda t: (-counts[t], t))[: MAX_TAGS - len(REFLECTION_TAGS)]
    return sorted(kept) + list(REFLECTION_TAGS)


@dataclass
class MemoryNode:
    """One memory. Times are seconds since the epoch; 0 = unset / never."""

    owner: str
    content: str
    node_type: str = "observation"
    importance: float = 5.0
    created: float = 0.0
    last_retrieved: float = 0.0
    pointer_ids: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    status: str = CONFIRMED
    key: str = ""
    source_session: str = ""
    source_turn: int = 0
    expires: float = 0.0
    origin: str = ""  # e.g. "fay:142" for a node imported from Fay's nodes.json
    superseded_by: str = ""
    # --- turn log (issue 35): the heard turns this memory rests on (its evidence) ---
    sources: list[str] = field(default_factory=list)
    # --- end turn log ---
    id: str = field(default_factory=new_id)
    score: float = 0.0  # retrieval score when returned by recall

    @property
    def kind(self) -> str:
        return tag_value(self.tags, "kind")

    def copy(self, **changes) -> MemoryNode:
        return dataclasses.replace(self, **changes)


def describe_schema() -> dict:
    """The conventions an external agent needs to write memories that fit (Fay's memory_get_schema)."""
    return {
        "node_types": {
            "observation": "a fact, preference, rule or event about the owner (default)",
            "conversation": "one exchange recorded by the memory node ('User: ...\\nFay: ...')",
            "reflection": "an insight distilled by the LLM from other nodes; pointer_ids name them",
        },
        "statuses": {
            CONFIRMED: "the user said it explicitly or it is a verbatim record: used in answers",
            CANDIDATE: "inferred by a model: stored for review, never used in answers until confirmed",
            SUPERSEDED: "an older value of a keyed fact replaced by a newer confirmed one (history)",
        },
        "kinds": list(KINDS),
        "tag_namespaces": TAG_NAMESPACES,
        "rules": [
            "owner always comes from the session (speaker identity), never from model output",
            "owner '' (unidentified guest) has no private memory: every request is refused",
            "user_confirmed=true only when the user explicitly asked (remember / 记住 / 以后 / 别忘了)",
            "a confirmed value for the same owner + kind + key supersedes the previous one",
            "kind:rule memories should carry persistent:true; memory/active_rules returns them",
            "reflections inherit their sources' tags (source: and persistent: included) except "
            "session:, date:, schedule: and kind:, and get kind:insight + source:fay_reflection",
            "forget by exact id, or by a query that must match exactly one memory; an ambiguous "
            "query returns the candidates and deletes nothing unless confirm_all is set",
        ],
        "importance": "1..10 (Generative Agents scale); 0 lets the memory node estimate it",
    }
