"""Labels both timeline renderers share: severities, relative and wall-clock times, an event's details."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass


ANONYMOUS = "User:ANONYMOUS"
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


def sender(e: dict[str, Any]) -> list[str]:
    """`node=...` of a request event served by one node of several, and `principal=... listener=...` of one sent by
    an authenticated client (nothing for anonymous ones, which most are, nor for the coordinator's own events)."""
    node = [] if e.get("node") is None else [f"node={e['node']}"]
    principal = e.get("principal")
    if principal is None or principal == ANONYMOUS:
        return node
    return [*node, f"principal={principal}", f"listener={e.get('listener')}"]


def describe(e: dict[str, Any]) -> str:
    parts = []
    if e["client_id"] is not None:
        parts.append(f"client={e['client_id']}")
    parts.extend(sender(e))
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


def describe_transaction_event(e: dict[str, Any]) -> str:
    """A transaction timeline event's details: producer id/epoch, client, partitions, the error, the rest."""
    parts = []
    if e["producer_id"] is not None:
        epoch = "" if e["producer_epoch"] is None else f"/{e['producer_epoch']}"
        parts.append(f"producer={e['producer_id']}{epoch}")
    if e["client_id"] is not None:
        parts.append(f"client={e['client_id']}")
    parts.extend(sender(e))
    if e["partitions"]:
        parts.append(f"partitions={','.join(e['partitions'])}")
    if e["error"] is not None:
        parts.append(f"-> {e['error']}")
    parts.extend(f"{key}={value}" for key, value in (e["detail"] or {}).items() if value is not None)
    return " ".join(parts)


def transaction_summary(live: dict[str, Any] | None) -> str:
    """One line on a transactional id as the coordinator sees it now (both renderers print it)."""
    if live is None:
        return "not known to the coordinator now (expired, unloaded or never initialised)"
    pending = f" ({live['pending_state']} being written)" if live["pending_state"] else ""
    return (
        f"state={live['state']}{pending} producer_id={live['producer_id']} epoch={live['producer_epoch']} "
        f"timeout_ms={live['timeout_ms']} partitions={','.join(live['partitions']) or '-'}"
    )


def transaction_waits(live: dict[str, Any] | None) -> list[str]:
    """What the transaction waits for now, in sentences: its timeout, markers not yet written, markers held."""
    if live is None:
        return []
    lines = []
    if live["timeout_expires_in_ms"] is not None:
        scan = live["next_timeout_scan_in_ms"]
        lines.append(
            f"its timeout runs out in {secs(live['timeout_expires_in_ms'])}; the coordinator aborts timed-out "
            f"transactions at its next scan (in {secs(scan)})"
        )
    lines.extend(
        f"{m['result']} markers (epoch {m['producer_epoch']}) not yet written to {','.join(m['partitions'])}"
        for m in live["pending_markers"]
    )
    lines.extend(
        f"{m['result']} markers to {','.join(m['partitions'])} held back by a fault for {secs(m['release_in_ms'])} more"
        for m in live["held_markers"]
    )
    return lines
