"""Turn decoded responses into plain data and normalise what legitimately differs between two brokers.

What differs and is not behaviour: member ids (``client-id`` + a random UUID; each scenario names the ones it
learns, e.g. ``<A>``), cluster ids, topic ids (``<topic-id>``, or the name a scenario gave one with ``alias``),
listener ports, timestamps and throttle times, and the run token both brokers share in group and topic names
(``<run>``, so pinned differences stay stable across runs). Everything else is compared as the broker sent it,
error messages included. Lists of members are sorted by their (normalised) member id, since neither broker promises
an order.
"""

from __future__ import annotations

import dataclasses
import enum
import re
import uuid
from collections.abc import Mapping
from typing import Any

MEMBER_ID = re.compile(r"[\w.\-]*-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
DROPPED = frozenset({"throttle_time_ms", "unknown_tagged_fields"})
OPAQUE = {"cluster_id": "<cluster-id>", "port": "<port>", "topic_id": "<topic-id>"}
ZERO_UUID = str(uuid.UUID(int=0))
MEMBER_KEYS = ("member_id", "memberid")


def plain(value: Any) -> Any:
    """A decoded message as dicts, lists, ints and strings (bytes as their ``repr``, so names inside stay legible)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if out.get("unknown_tagged_fields") == {}:
            del out["unknown_tagged_fields"]
        return out
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, bytes | bytearray | memoryview):
        return repr(bytes(value))
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value


def _is_time(key: str) -> bool:
    return "timestamp" in key or key.endswith("_time_ms") or key == "time_ms"


class Normalizer:
    """Replaces a scenario's real member ids by the names it gave them, then the rules in the module docstring."""

    def __init__(self, token: str, aliases: Mapping[str, str]) -> None:
        self.token = token
        # Longest first, so an id that contains another (a static member's instance id) is replaced whole.
        self.aliases = sorted(aliases.items(), key=lambda item: -len(item[0]))
        self.named = {real: f"<{name}>" for real, name in aliases.items() if real}

    def text(self, value: str) -> str:
        for real, name in self.aliases:
            if real:
                value = value.replace(real, f"<{name}>")
        value = MEMBER_ID.sub("<member-id>", value)
        return value.replace(self.token, "<run>")

    def __call__(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: self(v, k) for k, v in value.items() if k not in DROPPED}
        if isinstance(value, list):
            items = [self(v, key) for v in value]
            if items and all(isinstance(v, dict) and "member_id" in v for v in items):
                items.sort(key=lambda v: str(v["member_id"]))
            return items
        if isinstance(value, str) and value in self.named:
            return self.named[value]  # a named id (a topic id the scenario learnt) wins over the opaque rule below
        if key in OPAQUE and value not in (None, -1, ZERO_UUID, ""):
            return OPAQUE[key]
        if _is_time(key) and isinstance(value, int) and value >= 0:
            return "<time>"
        if isinstance(value, str):
            return self.text(value)
        return value
