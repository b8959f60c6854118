"""URLs fit for logs, error messages, topics and /diagnostics.

A configured endpoint may carry credentials: `user:password@` in the authority, or a key in
the query string (`?api_key=…`). Every URL that is shown anywhere goes through `safe_url`.
"""

from __future__ import annotations

import base64
import ipaddress
import urllib.parse


def safe_url(url: str) -> str:
    """The URL with scheme, host, port and path only: userinfo, query and fragment dropped."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:  # e.g. a non-numeric port: show nothing of it rather than risk a secret
        return "<invalid URL>"
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal: urlsplit strips the brackets
        host = f"[{host}]"
    if port is not None:
        host += f":{port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


def url_secrets(url: str) -> list[str]:
    """The parts of `url` that `safe_url` drops because they may be credentials (userinfo,
    password, query string and each query value), longest first, for scrubbing them out of
    texts that echo them (a server's or library's error message)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return []
    userinfo = parts.netloc.rpartition("@")[0]
    found = {userinfo, parts.password or "", parts.query, parts.fragment}
    if userinfo:  # HTTP clients send it as a Basic Authorization header, which a server may echo
        found.add(base64.b64encode(urllib.parse.unquote(userinfo).encode()).decode())
    found.update(value for _key, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
    found.update(pair.partition("=")[2] for pair in parts.query.split("&"))  # as written (percent-encoded)
    # very short fragments ("1", "en") are not worth mangling every message for
    return sorted((s for s in found if len(s) >= 4), key=len, reverse=True)


def error_without_secrets(exc: BaseException, url: str) -> str:
    """`exc` as "Type: message" for people, with every credential of `url` replaced by ***
    (database drivers echo the connection string in their errors)."""
    text = f"{type(exc).__name__}: {exc}".strip()
    for secret in url_secrets(url):
        text = text.replace(secret, "***")
    return text


def is_loopback_host(host: str) -> bool:
    """`localhost` or a loopback address (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_loopback_url(url: str) -> bool:
    """Whether the URL's host is this machine (`is_loopback_host`)."""
    return is_loopback_host(urllib.parse.urlsplit(url).hostname or "")
