"""Text utilities shared by the dialogue, the voice and the memory: stream processors
(`processors`: feed/flush), the outbound sanitiser (`outbound`), sentence splitting
(`sentences`), reasoning-block stripping (`think`) and words/CJK detection (`words`).
Pure, and imports no other fay_ros package but `common`."""
