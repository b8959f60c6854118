"""`--add-client USER_ID` of the token servers (`fay-ros mcp`, `fay-ros openai`): one new
token for a person in an access file, printed once on stdout."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..common.exit_codes import EXIT_CONFIG_ERROR


def add_token_client(path: Path, user_id: str, label: str, say: Callable[[str], None]) -> int:
    """Add the client and print its token (shown only now); the exit code."""
    from ..web.access import AccessError, add_client

    try:
        client = add_client(path, user_id, label=label)
    except (AccessError, ValueError) as exc:
        say(f"cannot add a client: {exc}")
        return EXIT_CONFIG_ERROR
    say(f"added a client for {client.user_id or 'a guest'} to {path}; its token (shown only now):")
    print(client.token)
    return 0
