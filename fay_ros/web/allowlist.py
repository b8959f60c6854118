"""What a browser may do through the rosbridge endpoint.

The web face only needs to read the cues and speech of the robot and to type a message, so
the default allow-list is small and directional:

- subscribe: action_cue, visemes, reply, robot_speaking
- publish:   text_input (typed chat), interrupt (a "stop" button)
- services:  none (in particular no memory/* service: a browser must not read, write or
  forget anybody's memories unless the operator opens one on purpose)
- parameters: none

Both servers enforce the list themselves (verified by test/test_web_bridge.py against the
real rosbridge-server-rs): rosbridge-server-rs has separate publish and subscribe globs;
the apt rosbridge_server has only one `topics_glob` for both directions, so there the
union of both lists applies to both directions (documented in web/README.md).

Names are resolved against the graph namespace like ROS resolves relative names, and are
validated, so a typo or a glob that would open everything is refused with the reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..common import topics
from ..common.errors import ConfigError

DEFAULT_SUBSCRIBE = (topics.ACTION_CUE, topics.VISEMES, topics.REPLY, topics.ROBOT_SPEAKING)
DEFAULT_PUBLISH = (topics.TEXT_INPUT, topics.INTERRUPT)
DEFAULT_SERVICES: tuple[str, ...] = ()

# The apt rosbridge_server treats an EMPTY glob list as "no restriction", so "nothing
# allowed" is written as one pattern that no valid ROS name can match ('!' is not allowed
# in ROS names).
NOTHING = "/!nothing-allowed"

# A ROS name (possibly relative) with optional glob characters * ? [ ] in its tokens.
_NAME = re.compile(r"^/?[A-Za-z_*?\[\]][A-Za-z0-9_*?\[\]]*(/[A-Za-z_*?\[\]][A-Za-z0-9_*?\[\]]*)*$")


class AllowListError(ConfigError, ValueError):
    """An allow-list entry is not a usable topic/service name or glob."""


def resolve(name: str, namespace: str = topics.DEFAULT_NAMESPACE) -> str:
    """Absolute form of a topic/service name or glob, relative names under `namespace`."""
    raw = name
    name = name.strip()
    if not name or not _NAME.match(name) or "//" in name:
        raise AllowListError(f"not a ROS name or name glob: {raw!r}")
    if name.startswith("/"):
        absolute = name
    else:
        ns = "/" + namespace.strip("/") if namespace.strip("/") else ""
        absolute = f"{ns}/{name}"
    if absolute.strip("/*?") == "" or absolute in ("/*", "/**"):
        raise AllowListError(f"{raw!r} would allow every name; list the names instead")
    return absolute


@dataclass(frozen=True)
class AllowList:
    subscribe: tuple[str, ...]
    publish: tuple[str, ...]
    services: tuple[str, ...]

    @classmethod
    def build(
        cls,
        namespace: str = topics.DEFAULT_NAMESPACE,
        *,
        subscribe: tuple[str, ...] = DEFAULT_SUBSCRIBE,
        publish: tuple[str, ...] = DEFAULT_PUBLISH,
        services: tuple[str, ...] = DEFAULT_SERVICES,
        extra_subscribe: tuple[str, ...] = (),
        extra_publish: tuple[str, ...] = (),
        extra_services: tuple[str, ...] = (),
    ) -> AllowList:
        def names(items: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(dict.fromkeys(resolve(n, namespace) for n in items))

        return cls(
            names(tuple(subscribe) + tuple(extra_subscribe)),
            names(tuple(publish) + tuple(extra_publish)),
            names(tuple(services) + tuple(extra_services)),
        )

    def memory_services(self, namespace: str = topics.DEFAULT_NAMESPACE) -> list[str]:
        """Allowed entries that open a memory service (the CLI warns about each)."""
        import fnmatch

        memory = [
            resolve(s, namespace)
            for s in (
                topics.SRV_REMEMBER,
                topics.SRV_RECALL,
                topics.SRV_FORGET,
                topics.SRV_ACTIVE_RULES,
                topics.SRV_PROFILE,
            )
        ]
        return [pattern for pattern in self.services if any(fnmatch.fnmatchcase(m, pattern) for m in memory)]

    # --- rendering for the two servers -------------------------------------------------------

    def rosbridge_rs_toml(self, address: str, port: int, url_path: str = "/") -> str:
        """Configuration file of rosbridge-server-rs (its globs: omitted = all, [] = none).
        `url_path`: the only path it accepts websockets on (the web door uses a secret one)."""

        def array(items: tuple[str, ...]) -> str:
            return json.dumps(list(items))  # a JSON string array is a valid TOML array

        return "\n".join(
            [
                "# Written by `fay-ros web`; regenerated on every start.",
                f"address = {json.dumps(address)}",
                f"port = {int(port)}",
                f"url_path = {json.dumps(url_path)}",
                f"topics_sub_glob = {array(self.subscribe)}",
                f"topics_pub_glob = {array(self.publish)}",
                f"services_glob = {array(self.services)}",
                "params_glob = []",
                "",
            ]
        )

    def rosbridge_server_parameters(self, address: str, port: int) -> dict[str, object]:
        """ROS parameters of the apt rosbridge_server's rosbridge_websocket node.

        Its globs are strings in the form "[a, b]" (it strips the brackets and splits on
        commas); an empty list there would mean "everything", hence NOTHING. It has one
        topic list for both directions.
        """

        def glob_string(items: tuple[str, ...]) -> str:
            return "[" + ", ".join(items or (NOTHING,)) + "]"

        both = tuple(dict.fromkeys(self.subscribe + self.publish))
        return {
            "address": address,
            "port": int(port),
            "topics_glob": glob_string(both),
            "services_glob": glob_string(self.services),
            "params_glob": glob_string(()),
        }

    def describe(self) -> str:
        def show(items: tuple[str, ...]) -> str:
            return ", ".join(items) if items else "(none)"

        return (
            f"subscribe: {show(self.subscribe)}\n  publish: {show(self.publish)}\n"
            f"  services: {show(self.services)}\n  parameters: (none)"
        )
