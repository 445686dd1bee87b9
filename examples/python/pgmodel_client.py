"""A PGModel line-protocol client in Python's standard library alone.

It speaks only what docs/PROTOCOL.md says: one JSON object per line over TCP (or TLS), requests
answered in order, events pushed on subscribed connections. Nothing here knows PGModel's Swift code.

    client = PGModelClient.connect("127.0.0.1", 7432)
    client.login("alice", "secret")
    rows = client.fetch("Trip", where={"eq": [{"key": "destination"}, {"value": "Oslo"}]})
    client.close()
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import os
import random
import socket
import ssl
import time
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Optional


class PGModelError(Exception):
    """An error answer (PROTOCOL §7): match on ``code``, never on ``message``."""

    def __init__(self, code: str, message: str, detail: Optional[dict] = None):
        detail = detail or {}
        request_id = detail.get("requestID")
        # The server's name for the failed request (PROTOCOL §7, ``requestID``): quote it in a report and
        # the operator finds the request's line in the service's log.
        self.request_id: Optional[str] = request_id if isinstance(request_id, str) else None
        suffix = f" (request {self.request_id})" if self.request_id else ""
        super().__init__(f"{code}: {message}{suffix}")
        self.code = code
        self.message = message
        self.detail = detail

    @property
    def conflicts(self) -> list:
        """For ``save_conflict``: each row someone else changed or deleted, with ``entity``, ``id``,
        ``kind`` and ``attributes`` (``name``, ``mine``, ``theirs``, ``ancestor``; values as PROTOCOL §5)."""
        return list(self.detail.get("conflicts", []))


def uuid7() -> uuid.UUID:
    """A UUIDv7 (time-ordered), as PROTOCOL §4 recommends for the ids a client chooses."""
    millis = time.time_ns() // 1_000_000
    value = (millis & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= (int.from_bytes(os.urandom(2), "big") & 0x0FFF) << 64
    value |= 0b10 << 62
    value |= int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    return uuid.UUID(int=value)


# -- Values (PROTOCOL §5) -------------------------------------------------------------------------


def encode_value(value: Any) -> Any:
    """A Python value in the wire's value form."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        # An integral double is tagged so it is not read as an integer.
        return {"double": value} if value.is_integer() else value
    if isinstance(value, Decimal):
        return {"decimal": str(value)}
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            raise ValueError("dates must be timezone-aware")
        utc = value.astimezone(_dt.timezone.utc)
        # Microseconds are PostgreSQL's precision and travel whole.
        return {"date": utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond:06d}Z"}
    if isinstance(value, uuid.UUID):
        return {"uuid": str(value)}
    if isinstance(value, (bytes, bytearray)):
        return {"data": base64.b64encode(bytes(value)).decode("ascii")}
    raise TypeError(f"no wire form for {type(value).__name__}")


def decode_value(value: Any) -> Any:
    """A wire value as a Python value (one-key objects become dates, UUIDs, bytes, …)."""
    if isinstance(value, dict) and len(value) == 1:
        (tag, inner), = value.items()
        if tag == "date":
            return parse_date(inner)
        if tag == "double":
            return float(inner)
        if tag == "decimal":
            return Decimal(inner)
        if tag == "uuid":
            return uuid.UUID(inner)
        if tag == "data":
            return base64.b64decode(inner)
    return value


def parse_date(text: str) -> _dt.datetime:
    """ISO 8601 in UTC with zero to nine fractional digits."""
    base, _, rest = text.rstrip("Z").partition(".")
    moment = _dt.datetime.strptime(base, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=_dt.timezone.utc)
    digits = (rest + "000000")[:6] if rest else "0"
    return moment.replace(microsecond=int(digits))


@dataclass
class Row:
    """One fetched row: its concrete class, id and values by Swift property name."""

    entity: str
    id: uuid.UUID
    values: dict = field(default_factory=dict)


@dataclass
class HistoryPage:
    transactions: list
    last_token: Optional[int]


class PGModelClient:
    """One connection to ``pgmodel serve``. Requests are answered in order (PROTOCOL §3)."""

    def __init__(self, sock: socket.socket, timeout: float = 30.0):
        self._sock = sock
        self._sock.settimeout(timeout)
        self._buffer = b""
        self._next_id = 1
        self.events: list[dict] = []
        self.user_id: Optional[uuid.UUID] = None

    @classmethod
    def connect(cls, host: str, port: int, tls: bool = False, ca_file: Optional[str] = None,
                timeout: float = 30.0) -> "PGModelClient":
        sock = socket.create_connection((host, port), timeout=timeout)
        if tls:
            context = ssl.create_default_context(cafile=ca_file)
            sock = context.wrap_socket(sock, server_hostname=host)
        return cls(sock, timeout)

    # -- framing --

    def _read_line(self) -> dict:
        while b"\n" not in self._buffer:
            chunk = self._sock.recv(65536)
            if not chunk:
                raise PGModelError("connection_failed", "the server closed the connection")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line.decode("utf-8"))

    def request(self, op: str, **fields: Any) -> dict:
        """Sends one request and returns its successful answer, keeping events that arrive first."""
        request_id = self._next_id
        self._next_id += 1
        message = {"id": request_id, "op": op, **fields}
        self._sock.sendall(json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n")
        while True:
            answer = self._read_line()
            if "event" in answer and "ok" not in answer:
                self.events.append(answer)
                continue
            if answer.get("id") is None and answer.get("ok") is False:
                error = answer.get("error", {})
                raise PGModelError(error.get("code", "internal_error"), error.get("message", ""), error)
            if answer.get("id") != request_id:
                continue
            if not answer.get("ok"):
                error = answer.get("error", {})
                raise PGModelError(error.get("code", "internal_error"), error.get("message", ""), error)
            return answer

    def wait_for_event(self, timeout: float) -> Optional[dict]:
        """The next pushed event, or None when none arrives within ``timeout`` seconds."""
        if self.events:
            return self.events.pop(0)
        deadline = time.monotonic() + timeout
        previous = self._sock.gettimeout()
        try:
            while time.monotonic() < deadline:
                self._sock.settimeout(max(0.01, deadline - time.monotonic()))
                try:
                    message = self._read_line()
                except socket.timeout:
                    return None
                if "event" in message and "ok" not in message:
                    return message
        finally:
            self._sock.settimeout(previous)
        return None

    # -- operations (PROTOCOL §4) --

    def login(self, user: str, password: str, patience: float = 30.0) -> dict:
        """Logs in; a server busy with other logins (``server_busy``) is asked again after a random pause
        that doubles each time, for at most ``patience`` seconds."""
        deadline = time.monotonic() + patience
        pause = 0.05
        while True:
            try:
                answer = self.request("hello", user=user, password=password, protocol=1)
                break
            except PGModelError as error:
                wait = random.uniform(pause / 2, pause)
                if error.code != "server_busy" or time.monotonic() + wait >= deadline:
                    raise
                time.sleep(wait)
                pause = min(pause * 2, 1.0)
        self.user_id = uuid.UUID(answer["userID"])
        return answer

    def ping(self) -> bool:
        return bool(self.request("ping").get("pong"))

    def fetch(self, entity: str, where: Optional[dict] = None, sort: Optional[list] = None,
              limit: Optional[int] = None, table: bool = True) -> list[Row]:
        fields: dict[str, Any] = {"entity": entity}
        if where is not None:
            fields["where"] = where
        if sort is not None:
            fields["sort"] = sort
        if limit is not None:
            fields["limit"] = limit
        if table:
            fields["format"] = "table"
        answer = self.request("fetch", **fields)
        if "table" in answer:
            return _rows_of_table(answer["table"])
        return [Row(r["entity"], uuid.UUID(r["id"]), {k: decode_value(v) for k, v in r["values"].items()})
                for r in answer.get("rows", [])]

    def count(self, entity: str, where: Optional[dict] = None) -> int:
        fields: dict[str, Any] = {"entity": entity}
        if where is not None:
            fields["where"] = where
        return int(self.request("count", **fields)["count"])

    def save(self, inserts=(), updates=(), deletes=(), author: Optional[str] = None,
             merge_policy: Optional[str] = None) -> dict:
        """One transaction. ``inserts`` are (entity, id, values) triples; ``updates`` (entity, id, values)
        or (entity, id, values, ancestor), where ``ancestor`` holds the values this client had read of the
        attributes it changes; ``deletes`` (entity, id) or (entity, id, ancestor). Values are Python values.
        With ancestors, a row someone else changed since is a ``save_conflict`` under the default policy
        (PROTOCOL §4, Concurrent edits); ``merge_policy`` is ``"error"``, ``"context"``, ``"store"`` or
        ``"overwrite"``."""
        def encoded(values: dict) -> dict:
            return {k: encode_value(v) for k, v in values.items()}

        def update(entry: tuple) -> dict:
            row = {"entity": entry[0], "id": str(entry[1]), "values": encoded(entry[2])}
            if len(entry) > 3 and entry[3] is not None:
                row["ancestor"] = encoded(entry[3])
            return row

        def delete(entry: tuple) -> dict:
            reference = {"entity": entry[0], "id": str(entry[1])}
            if len(entry) > 2 and entry[2] is not None:
                reference["ancestor"] = encoded(entry[2])
            return reference

        fields: dict[str, Any] = {
            "inserts": [{"entity": e, "id": str(i), "values": encoded(vals)} for e, i, vals in inserts],
            "updates": [update(entry) for entry in updates],
            "deletes": [delete(entry) for entry in deletes],
        }
        if author is not None:
            fields["author"] = author
        if merge_policy is not None:
            fields["mergePolicy"] = merge_policy
        return self.request("save", **fields)

    def subscribe(self, entities: Optional[list] = None) -> int:
        fields: dict[str, Any] = {}
        if entities:
            fields["entities"] = entities
        return int(self.request("subscribe", **fields)["subscription"])

    def history_after(self, token: Optional[int], limit: int = 100) -> HistoryPage:
        """Every transaction after ``token`` (all of them for None), oldest first, page by page."""
        transactions: list = []
        while True:
            query: dict[str, Any] = {"limit": limit}
            if token is not None:
                query["where"] = {"token": {"op": "gt", "value": token}}
            page = self.request("history", history=query)["history"]
            batch = page.get("transactions", [])
            transactions.extend(batch)
            if batch:
                token = batch[-1]["token"]
            if len(batch) < limit:
                return HistoryPage(transactions, token)

    def close(self) -> None:
        try:
            self.request("bye")
        except (PGModelError, OSError):
            pass
        finally:
            self._sock.close()


def _rows_of_table(table: dict) -> list[Row]:
    """Decodes a ``"format":"table"`` answer (PROTOCOL §4), checking every row against its shape."""
    shapes = table.get("shapes", [])
    has_via = bool(table.get("via"))
    rows = []
    for raw in table.get("rows", []):
        index = raw[0]
        if not isinstance(index, int) or not 0 <= index < len(shapes):
            raise PGModelError("internal_error", "a table row names a shape that does not exist")
        keys = shapes[index]["keys"]
        if len(raw) != 2 + len(keys) + (1 if has_via else 0):
            raise PGModelError("internal_error", "a table row's length does not match its shape")
        values = {key: decode_value(value) for key, value in zip(keys, raw[2:2 + len(keys)])}
        rows.append(Row(shapes[index]["entity"], uuid.UUID(raw[1]), values))
    return rows
