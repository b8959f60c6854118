"""Identifiers shared by several nodes."""


def utterance_id(conversation_id: str, seq: int) -> str:
    """The id that ties an Utterance to its ActionCue and VisemeTrack."""
    return f"{conversation_id}:{seq}"
