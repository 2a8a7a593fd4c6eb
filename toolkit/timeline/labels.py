"""Labels both timeline renderers share: severities, relative and wall-clock times, an event's details."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass


REBALANCING_STATES = ("PreparingRebalance", "CompletingRebalance")
RECONCILING_STATES = ("Assigning", "Reconciling")
"""A consumer group's (KIP-848) states between a group epoch bump and every member reconciled at it."""
QUIET_ERRORS = frozenset({None, "NONE", "MEMBER_ID_REQUIRED"})  # MEMBER_ID_REQUIRED is step one of every join
SIGNAL_ERRORS = frozenset({"REBALANCE_IN_PROGRESS"})  # how members learn of a rebalance: worth a mark, not an alarm


def severity(error: str | None) -> str:
    return "" if error in QUIET_ERRORS else "signal" if error in SIGNAL_ERRORS else "error"


def client(client_id: str | None) -> str:
    """A client id for display: ``-`` when unknown, as kafka-consumer-groups.sh shows a missing value."""
    return "-" if client_id is None else client_id


def secs(ms: int | None) -> str:
    return "-" if ms is None else f"{ms / 1000:.3f}s"


def rel(view: dict[str, Any], at_ms: int | None) -> str:
    return "-" if at_ms is None else f"+{(at_ms - view['origin_ms']) / 1000:.3f}s"


def wall(view: dict[str, Any], at_ms: int) -> str:
    stamp = datetime.fromtimestamp((at_ms + view["wall_offset_ms"]) / 1000, tz=UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def describe(e: dict[str, Any]) -> str:
    parts = []
    if e["client_id"] is not None:
        parts.append(f"client={e['client_id']}")
    if e["generation"] is not None:
        parts.append(f"gen={e['generation']}")
    if e["error"] is not None:
        parts.append(f"-> {e['error']}")
    if e["parked_ms"]:
        parts.append(f"(after {secs(e['parked_ms'])})")
    if e["reason"]:
        parts.append(f"reason={json.dumps(e['reason'])}")
    parts.extend(f"{key}={value}" for key, value in (e["detail"] or {}).items() if value is not None)
    return " ".join(parts)
