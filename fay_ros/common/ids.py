"""Identifiers shared by several nodes."""


def utterance_id(conversation_id: str, seq: int) -> str:
    """The id that ties an Utterance to its ActionCue and VisemeTrack."""
    return f"{conversation_id}:{seq}"


def split_utterance_id(uid: str) -> tuple[str, int]:
    """Inverse of utterance_id; raises ValueError for an id that is not conversation:seq."""
    conversation_id, sep, seq = uid.rpartition(":")
    if not sep or not seq.isdigit():
        raise ValueError(f"not an utterance id (expected '<conversation>:<seq>'): {uid!r}")
    return conversation_id, int(seq)
