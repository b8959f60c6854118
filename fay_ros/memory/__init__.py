"""Long-term memory: Fay's memory stream on SQLite with a confirmed/candidate policy.

Pure Python (no rclpy): `MemoryStore` (SQLite + vectorised recall), `policy`, `Reflector`,
`ProfileKeeper`, `MemoryService` (what the memory node serves), `fay_import`.
"""
from .model import CANDIDATE, CONFIRMED, SUPERSEDED, MemoryNode, describe_schema
from .policy import RememberRequest, is_explicit_request

__all__ = ["CANDIDATE", "CONFIRMED", "SUPERSEDED", "MemoryNode", "describe_schema", "RememberRequest",
           "is_explicit_request", "build_service"]


def build_service(db_path, embedder="auto", llm=None, clock=None, **settings):
    """A ready MemoryService on `db_path` (for tools and tests; the node builds its own)."""
    import time

    from .embeddings import make_embedder
    from ..dialogue.llm import ChatClient, Endpoint
    from .profile import ProfileKeeper, ProfileSettings
    from .reflection import ReflectionSettings, Reflector
    from .service import MemoryService, ServiceSettings
    from .store import MemoryStore

    store = MemoryStore(db_path, make_embedder(embedder) if isinstance(embedder, str) else embedder,
                        clock=clock or time.time)
    llm = llm or ChatClient(Endpoint())  # no endpoint: no reflection, plain portraits
    reflection = ReflectionSettings(**settings.pop("reflection", {}))
    profile = ProfileSettings(**settings.pop("profile", {}))
    return MemoryService(store, ServiceSettings(**settings), Reflector(store, llm, reflection),
                         ProfileKeeper(store, profile), llm)
