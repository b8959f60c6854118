"""Long-term memory: Fay's memory stream on SQLite with a confirmed/candidate policy.

Pure Python (no rclpy). Import from the module that defines a name: `model` (MemoryNode,
statuses, tags), `policy` (RememberRequest, is_explicit_request), `store` (MemoryStore and
vectorised recall), `conversation` (ConversationRecorder), `forget` (ForgetMatcher),
`reflection` (Reflector), `profile` (ProfileKeeper), `service` (MemoryService, what the memory
node serves, and build_service), `scheduler` (the node's background work), `fay_import`,
`turn_log` (Turn), `evidence` (hybrid recall over turns and memories), `temporal` (time words).

This file imports nothing: a submodule that needs the package never finds it half-initialised.
"""
