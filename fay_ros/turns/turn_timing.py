"""Turn-taking's timing and thresholds that tie two processes (or two cores) together.

Each constant is decided by one side and assumes what the other side does: the mic's voice
activity and the recogniser's final (FINAL_DUE_S), the mic's release of held audio and the
recogniser's early decode (STALE_CHUNK_S), the played reference and the canceller (PHRASE_GAP_S,
SETTLING_DOUBLE_TALK_DB), the mic's barge-in and the voice's interrupt (PAIR_S), the barge-in
and the recogniser's utterances (BARGED_UTTERANCE_S). Kept in one place so a change to one
side is seen next to what the other side relies on. Each says who uses it.
"""

from __future__ import annotations

# Used by: turns/talking_again.py (the tts node's TalkingAgain.waiting), tests.
# The recogniser's final comes at most this long after the mic's voice activity fell: the
# voice activity falls 500 ms (mic vad_stop_ms) after the last word, the final at most the asr's
# turn_patience_ms (1500) after it, plus a decode.
FINAL_DUE_S = 1.5
# ... unless the recogniser runs behind (a loaded 2-core machine: its finals came over 2 s after
# the voice fell, and a reply waiting only FINAL_DUE_S talked over the person's next words):
# then it is due this many times its last final's lag, never longer than FINAL_DUE_MAX_S (voice
# that brings no final, a cough, holds a reply no longer than that).
FINAL_LAG_MARGIN = 1.5
FINAL_DUE_MAX_S = 6.0

# Used by: turns/asr_order.py (`behind`: the asr node feeds a chunk this old as behind, AsrCore.feed).
# A chunk that ended this long (s) before it is processed has audio after it already, even
# when none waits in the queue yet: the mic released the audio it held at a barge-in (a second
# of the person's words in one burst, delivered chunk by chunk), or delivery lagged. The early
# decode then waits for the present (AsrCore.feed `behind`): "Stop, wait a moment" released
# at once must not end its turn at the comma's gap after "Stop", which the released audio
# shows was not the end. Live audio arrives within a few ms of its capture; a busy machine's
# mic has lagged by up to ~250 ms (the whole-graph tests), which must not cost the turn
# detection, while the released words are up to a second old.
STALE_CHUNK_S = 0.3

# Used by: hearing/mic_core.py (where the played voice starts a new phrase: the canceller's
# onset guard and settling), which feeds turns/duplex_gate.py.
# Only a silence of the played voice this long starts a new phrase (mic_core's ONSET_GUARD_S and
# RECANCEL_MAX_S): a shorter one is a stop consonant's closure inside the phrase (30-60 ms),
# after which the canceller lets nothing through. Restarting the guards there cost a person who began just
# after it up to 150 ms (the barge-in bench: 等一下 at 4 s held at 367 ms, now 217 ms; no reply
# of the robot's own voice held, as before).
PHRASE_GAP_S = 0.1

# Used by: turns/duplex_gate.py (DuplexGate.step, while hearing/mic_core.py says `settling`).
# While the canceller settles on a new phrase of the robot's voice (hearing/mic_core.py,
# `settling`), it still takes 2-6 dB out of the robot's own frames (the least measured: 2.3 dB,
# espeak-ng's Mandarin 嗯 after a pause), but hardly anything out of a person talking over it
# (0.1-1.6 dB: what is left is mostly them). Double talk then needs at most this much taken
# out, and counts for the hold only (as a first consonant does).
SETTLING_DOUBLE_TALK_DB = 1.0

# Used by: turns/resume.py (the tts node pairs the mic's `audio/barge_in` with `interrupt`).
# A barge-in and its interrupt are one event when they arrive this close together.
PAIR_S = 1.0

# Used by: hearing/asr_core.py (which utterances were said over the robot).
# An utterance that starts this long (s) after a barge-in is a turn of its own, not the words
# that barged in (the voice resumes ResumeSettings.resume_after_s, 1.5 s, after they end:
# turns/resume.py).
BARGED_UTTERANCE_S = 2.0
