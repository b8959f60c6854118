"""The admin page's file endpoint: read and save the editable files over HTTP.

Writing a file is no rosbridge operation, so `fay-ros web --admin` serves this small JSON
API next to the pages (fay_ros.web.page_server hands it every /admin/api/ request):

    GET  /admin/api/files          the editable files (name, title, path, who reloads it)
    GET  /admin/api/files/NAME     its text and version
    POST /admin/api/files/NAME     {"text": ..., "version": ..., "check_only": false}
                                   200 {"ok": true, ...} written (or, check_only, valid);
                                   422 {"ok": false, "problems": [{line, message}]} not written
    GET  /admin/api/profile?owner=U  the owner's layered profile (layers with evidence, latest
                                   events, changelog), read-only from the memory database
                                   (`fay-ros web --admin --memory-db ...`; 404 without it)
    GET  /admin/api/reminders?owner=U  the owner's active reminders and open commitments,
                                   read-only from the same database (issue 36); a cancel goes
                                   through the memory node's memory/reminders (rosbridge)
    GET  /admin/api/card?owner=U   the owner's speaker card (name, formality, language, each
                                   with its memory id and the turns it was heard in), read-only
                                   from the same database (issue 39); an edit goes through the
                                   memory node's memory/remember and memory/forget (rosbridge)
    GET  /admin/api/card/fact?field=F&value=V  the key, content and tags memory/remember gets
                                   for that edit (the keyed fact self_facts writes); 422 for a
                                   value the card cannot hold; writes nothing
    GET  /admin/api/knowledge      the knowledge base's documents: knowledge base, source, chunk
                                   count, when it was indexed, its error (issue 41), read from
                                   the store (`fay-ros web --admin --knowledge-db ...`; 404
                                   without it)
    GET  /admin/api/config         the running configuration (the node parameter file, the
                                   models and tools files), every secret masked (`****` and at
                                   most its last 4 characters; common.masking), and whether
                                   each environment variable it names is set (masked too)

Every request must:
- come from loopback (the peer address), whatever address the server is bound to;
- carry an admin token of the access file in a header (`X-Fay-Token: ...` or
  `Authorization: Bearer ...`), never a cookie: a browser adds no such header to a request
  another site makes, and a cross-site script that wants to set one needs a CORS preflight,
  which this server never grants (it sends no Access-Control-* header). That is what makes
  it CSRF-safe;
- if it carries an Origin (browsers do on POST), come from the page's own origin;
- POST: have Content-Type application/json and at most MAX_BODY bytes.

Tokens never reach a log or a response.
"""

from __future__ import annotations

import http
import ipaddress
import json
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from ..common.errors import FayError, TableError, display_path
from ..common.masking import env_names, environment_report, mask_config
from ..common.paths import config_file
from ..common.yaml_loader import read_yaml
from .access import Access
from .admin_files import MAX_FILE_BYTES, EditableFiles, EditError

API_PREFIX = "/admin/api/"
TOKEN_HEADER = "X-Fay-Token"
MAX_BODY = MAX_FILE_BYTES + 64 * 1024  # the file as JSON text, escaped
# The configuration the config view shows: where endpoints, keys' variable names and tool
# servers are set (the editable files have their own route).
CONFIG_FILES = ("companion.yaml", "models.yaml", "tools.yaml")


class AdminApi:
    def __init__(
        self,
        access: Access,
        files: EditableFiles,
        origins: set[str],
        profiles: Callable[[str], dict[str, Any]] | None = None,
        reminders: Callable[[str], dict[str, Any]] | None = None,
        knowledge: Callable[[], dict[str, Any]] | None = None,
        config_files: dict[str, Path] | None = None,
        cards: Callable[[str], dict[str, Any]] | None = None,
    ) -> None:
        """`profiles`: owner -> the owner's layered profile (a read-only reader of the memory
        database; raises LookupError when there is none); None: the route answers 404.
        `reminders`: owner -> the owner's reminders and commitments (the same kind of reader).
        `cards`: owner -> the owner's speaker card (issue 39; the same kind of reader).
        `knowledge`: the knowledge base's documents (shared, no owner); None: the route answers 404.
        `config_files`: name -> path of the files the config view shows (default: CONFIG_FILES
        in config/)."""
        self.access = access
        self.files = files
        self.origins = {o.lower() for o in origins} | set(access.origins)
        self.profiles = profiles
        self.reminders = reminders
        self.knowledge = knowledge
        self.cards = cards
        self.config_files = (
            config_files if config_files is not None else {name: config_file(name) for name in CONFIG_FILES}
        )

    # ---- the checks -----------------------------------------------------------------------

    def refusal(self, handler: BaseHTTPRequestHandler) -> tuple[int, str] | None:
        """(status, reason) when the request may not be served, else None."""
        try:
            loopback = ipaddress.ip_address(handler.client_address[0].split("%")[0]).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            return 403, "the admin endpoint answers loopback clients only"
        origin = handler.headers.get("Origin")
        if origin is not None and origin.lower() not in self.origins:
            return 403, "page origin is not the admin page's"
        token = handler.headers.get(TOKEN_HEADER, "").strip()
        authorization = handler.headers.get("Authorization", "")
        if not token and authorization.lower().startswith("bearer "):
            token = authorization[7:].strip()
        if not token:
            return 401, f"no admin token (send it in the {TOKEN_HEADER} header)"
        client = self.access.lookup(token)
        if client is None:
            return 401, "unknown token"
        if client.role != "admin":
            return 403, f"a {client.role} token may not use the admin endpoint"
        return None

    # ---- requests -------------------------------------------------------------------------

    def handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        refused = self.refusal(handler)
        if refused is not None:
            self._send(handler, refused[0], {"error": refused[1]})
            return
        route = urlsplit(handler.path).path[len(API_PREFIX) :].strip("/")
        try:
            if route == "files" and method == "GET":
                self._send(handler, 200, {"files": self.files.listing()})
            elif route.startswith("files/") and method == "GET":
                self._send(handler, 200, self.files.read(unquote(route[len("files/") :])))
            elif route.startswith("files/") and method == "POST":
                self._save(handler, unquote(route[len("files/") :]))
            elif route == "profile" and method == "GET":
                self._read_owner(handler, self.profiles, "profile", "a guest has no profile")
            elif route == "config" and method == "GET":
                self._send(handler, 200, self.masked_config())
            elif route == "reminders" and method == "GET":
                self._read_owner(handler, self.reminders, "reminders", "a guest has no reminders")
            elif route == "card" and method == "GET":
                self._read_owner(handler, self.cards, "card", "a guest has no speaker card")
            elif route == "card/fact" and method == "GET":
                self._card_fact(handler)
            elif route == "knowledge" and method == "GET":
                self._read_knowledge(handler)
            else:
                self._send(handler, 404, {"error": f"no {method} {API_PREFIX}{route}"})
        except EditError as exc:
            self._send(handler, exc.status, {"error": str(exc)})

    def masked_config(self) -> dict[str, Any]:
        """Each config file parsed, its secrets masked (a file that does not parse: its error,
        which names lines, never values), and the environment variables it names."""
        files: dict[str, Any] = {}
        names: list[str] = []
        for name, path in self.config_files.items():
            try:
                data = read_yaml(path).data
            except TableError as exc:
                files[name] = {"path": display_path(path), "error": str(exc)}
                continue
            files[name] = {"path": display_path(path), "config": mask_config(data)}
            names += env_names(data)
        return {"files": files, "environment": environment_report(list(dict.fromkeys(names)))}

    def _read_owner(
        self,
        handler: BaseHTTPRequestHandler,
        reader: Callable[[str], dict[str, Any]] | None,
        route: str,
        guest: str,
    ) -> None:
        """What `reader` answers for ?owner= (the layered profile, issue 35; the reminders,
        issue 36); read-only from the memory database."""
        if reader is None:
            self._send(handler, 404, {"error": "no memory database (fay-ros web --admin --memory-db ...)"})
            return
        owner = parse_qs(urlsplit(handler.path).query).get("owner", [""])[0].strip()
        if not owner:
            self._send(handler, 400, {"error": f"name the owner: {route}?owner=USER_ID ({guest})"})
            return
        try:
            self._send(handler, 200, reader(owner))
        except LookupError as exc:
            self._send(handler, 404, {"error": str(exc)})

    def _card_fact(self, handler: BaseHTTPRequestHandler) -> None:
        """The memory/remember fields an edit of one card field sends (issue 39): the keyed
        fact self_facts writes for the same words, made here so the page holds no sentence
        templates. Writes nothing: the page sends it through the memory node."""
        from ..dialogue.card_reader import card_fact

        query = parse_qs(urlsplit(handler.path).query)
        try:
            fact = card_fact(query.get("field", [""])[0], query.get("value", [""])[0])
        except ValueError as exc:
            self._send(handler, 422, {"error": str(exc)})
            return
        self._send(handler, 200, {"key": fact.key, "content": fact.content, "tags": list(fact.tags)})

    def _read_knowledge(self, handler: BaseHTTPRequestHandler) -> None:
        if self.knowledge is None:
            self._send(handler, 404, {"error": "no knowledge base (fay-ros web --admin --knowledge-db ...)"})
            return
        try:
            self._send(handler, 200, self.knowledge())
        except FayError as exc:  # a store that cannot be opened: said, with its location
            self._send(handler, 503, {"error": str(exc)})

    def _save(self, handler: BaseHTTPRequestHandler, name: str) -> None:
        if handler.headers.get_content_type() != "application/json":
            self._send(handler, 415, {"error": "send the edit as application/json"})
            return
        try:
            length = int(handler.headers.get("Content-Length", "-1"))
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self._send(handler, 413, {"error": f"a body of 0..{MAX_BODY} bytes with its Content-Length"})
            return
        try:
            body = json.loads(handler.rfile.read(length).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            self._send(handler, 400, {"error": "the body is not UTF-8 JSON"})
            return
        text = body.get("text") if isinstance(body, dict) else None
        version = body.get("version") if isinstance(body, dict) else None
        if not isinstance(text, str) or not (version is None or isinstance(version, str)):
            self._send(handler, 400, {"error": 'expected {"text": string, "version": string}'})
            return
        if body.get("check_only"):
            result = self.files.check(name, text)
        else:
            result = self.files.save(name, text, version)
        self._send(handler, 200 if result.ok else 422, result.as_dict())

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        handler.send_response(status, http.HTTPStatus(status).phrase)
        handler.send_header("Content-Type", "application/json; charset=utf-8")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
