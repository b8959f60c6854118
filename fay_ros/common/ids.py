"""Identifiers shared by several nodes."""


def utterance_id(conversation_id: str, seq: int) -> str:
    """The id that ties an Utterance to its ActionCue and VisemeTrack."""
    return f"{conversation_id}:{seq}"


def conversation_of(utterance: str) -> str:
    """The conversation id in an utterance id ("" when it has none)."""
    return utterance.rpartition(":")[0]
