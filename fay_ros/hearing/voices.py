"""REP-155 (ROS4HRI) naming for the voices the asr node hears: ids and topic names, without ROS.

REP-155 gives every detected voice an id and a namespace `/humans/voices/<id>/` with `speech`
(hri_msgs/LiveSpeech: incremental hypotheses, then the final text), `is_speaking`
(std_msgs/Bool) and `audio`; `/humans/voices/tracked` (hri_msgs/IdsList) lists the voices
currently tracked. The companion has one voice: the speaker of its microphone, identified by
the asr node's `user_id`. An id must be a valid ROS name token, so the user id is mapped to
one (letters, digits and single underscores, not starting with a digit; a user id that needed changes
gets a short hash of itself appended, so "张三" and "李四" stay two voices); the unidentified guest
(user_id '') is `anonymous_speaker`, the id ROS4HRI implementations use for speech they
cannot attribute.
"""

from __future__ import annotations

import hashlib
import re

VOICES_NAMESPACE = "/humans/voices"  # absolute: REP-155's namespace, shared by every HRI tool
TRACKED_TOPIC = f"{VOICES_NAMESPACE}/tracked"
ANONYMOUS_VOICE = "anonymous_speaker"


def voice_id(user_id: str) -> str:
    """The REP-155 voice id of a user id: a valid ROS name token, stable for a given user id."""
    if not user_id.strip():
        return ANONYMOUS_VOICE
    # ROS 2 name tokens: letters, digits, single underscores; no leading digit
    token = re.sub(r"[^A-Za-z0-9]+", "_", user_id).strip("_") or "voice"
    if token[0].isdigit():
        token = "u" + token
    if token != user_id:
        token = f"{token}_{hashlib.sha256(user_id.encode()).hexdigest()[:8]}"
    return token


def speech_topic(voice: str) -> str:
    return f"{VOICES_NAMESPACE}/{voice}/speech"


def is_speaking_topic(voice: str) -> str:
    return f"{VOICES_NAMESPACE}/{voice}/is_speaking"


# REP-155 persons: a speaker-identification (or face) node links each person it knows to the
# voice it hears them by (`/humans/persons/<id>/voice_id`, std_msgs/String) and lists the
# persons it sees (`/humans/persons/tracked`, hri_msgs/IdsList).
PERSONS_NAMESPACE = "/humans/persons"
PERSONS_TRACKED_TOPIC = f"{PERSONS_NAMESPACE}/tracked"


def person_voice_topic(person: str) -> str:
    return f"{PERSONS_NAMESPACE}/{person}/voice_id"
