"""Identifiers shared by several nodes."""


def utterance_id(conversation_id: str, seq: int) -> str:
    """The id that ties an Utterance to its ActionCue and VisemeTrack."""
    return f"{conversation_id}:{seq}"


def conversation_of(utterance: str) -> str:
    """The conversation id in an utterance id ("" when it has none)."""
    return split_utterance_id(utterance)[0]


def split_utterance_id(utterance: str) -> tuple[str, int | None]:
    """(conversation id, seq) of an utterance id; seq None when it has none (not `utterance_id`'s)."""
    conversation, _, seq = utterance.rpartition(":")
    return conversation, int(seq) if seq.isdigit() else None
