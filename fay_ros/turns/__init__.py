"""Turn-taking: who speaks when, decided in one place.

End of turn (end_of_turn), the mic's duplex gate over the robot's voice: hold, release and
barge-in (duplex_gate), what words over the robot are (backchannel, stop_request), the voice's
hold while a person talks over it (voice_hold), resuming after a false interruption (resume),
the person talking again before their turn's answer (talking_again), the recogniser's order
of a barge-in and queued audio (asr_order), the speculative reply's lifecycle
(speculative_reply: the guess parked, claimed or discarded; the model call is the dialogue's),
and the timing that ties the processes together (turn_timing).

Explicit events in, decisions out: no ROS, no clock of its own (every time is an argument).
The node shells (nodes/mic.py, nodes/asr.py, nodes/tts.py) translate messages into these
calls and the decisions back into actions; the pure DSP these decisions are fed from (echo
cancellation, VAD, segmenter) stays in hearing/.
"""
