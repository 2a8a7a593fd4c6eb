"""The text rendering of a timeline view (`?format=text`, what `group-broker groups timeline` prints), and of a
transaction timeline view (what `group-broker transactions timeline` prints)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coordinator.consumer_group.views import show
from toolkit.timeline.labels import (
    REBALANCING_STATES,
    client,
    describe,
    describe_transaction_event,
    rel,
    secs,
    transaction_summary,
    transaction_waits,
    wall,
)

if TYPE_CHECKING:
    pass


def render_text(view: dict[str, Any]) -> str:
    lines = [f"group {view['group_id']}"]
    live = view["live"]
    if live is None:
        lines.append("  (not known to the coordinator now: deleted, unloaded or never created)")
    elif live["group_type"] == "consumer":
        lines.extend(_consumer_lines(view, live))
    else:
        lines.append(
            f"  state={live['state']} generation={live['generation']} protocol={live['protocol_type']}/"
            f"{live['protocol']} leader={live['leader']} members={len(live['members'])}"
        )
        if live["state"] in REBALANCING_STATES:
            timer = (
                f"rebalance timeout fires in {secs(live['rebalance_fires_in_ms'])}"
                if live["rebalance_deadline_ms"] is not None
                else f"sync timeout fires in {secs(live['sync_fires_in_ms'])}"
                if live["sync_deadline_ms"] is not None
                else "no group timer armed"
            )
            lines.append(f"  waiting for {len(live['waiting_for'])} member(s); {timer}")
            lines.extend(
                f"    {m['member_id']} client={client(m['client_id'])} session timer fires at "
                f"{rel(view, m['session_deadline_ms'])} (in {secs(m['session_fires_in_ms'])})"
                for m in live["waiting_for"]
            )
    if view.get("transactions"):
        lines.append(f"  transactions that sent its offsets: {', '.join(view['transactions'])}")
    for p in view["pending"]:
        who = p["member"] or "(new member)"
        lines.append(f"  pending {p['api']} from {who} client={client(p['client_id'])} for {secs(p['waiting_ms'])}")
    if view["dropped_events"]:
        lines.append(f"  ({view['dropped_events']} older events dropped)")
    lines.append(f"  events (+0 = {wall(view, view['origin_ms'])}):")
    lines.extend(
        f"  {rel(view, e['at_ms']):>11}  {e['kind']:<24} {e['member'] or '-':<40} {describe(e)}".rstrip()
        for e in view["events"]
    )
    return "\n".join(lines) + "\n"


def _consumer_lines(view: dict[str, Any], live: dict[str, Any]) -> list[str]:
    """A KIP-848 group: its epochs, each member's epoch, state, current and target partitions (and what it must
    revoke, with its revocation timer), then who waits for whom."""
    lines = [
        f"  state={live['state']} group_epoch={live['group_epoch']} assignment_epoch={live['assignment_epoch']} "
        f"assignor={live['protocol']} members={len(live['members'])}"
    ]
    for m in live["members"]:
        line = (
            f"    {m['member_id']} client={client(m['client_id'])} epoch={m['member_epoch']} {m['member_state']} "
            f"current={show(m['assigned']) or '-'} target={show(m['target']) or '-'}"
        )
        if m["pending_revocation"]:
            line += f" revoking={show(m['pending_revocation'])}"
        if m["revocation_deadline_ms"] is not None:
            line += (
                f" revocation timer fires at {rel(view, m['revocation_deadline_ms'])} "
                f"(in {secs(m['revocation_fires_in_ms'])})"
            )
        lines.append(line)
    lines.extend(f"  {sentence}" for sentence in live["reconciliation"])
    return lines


def render_transaction_text(view: dict[str, Any]) -> str:
    """A transaction timeline view (`/transactions/<id>/timeline?format=text`, `group-broker transactions
    timeline`): the id now, what it waits for, its states over time, then every event."""
    lines = [f"transaction {view['transactional_id']}", f"  {transaction_summary(view['live'])}"]
    lines.extend(f"  {sentence}" for sentence in transaction_waits(view["live"]))
    if view["states"]:
        lines.append("  states: " + ", ".join(f"{b['state']} {rel(view, b['start_ms'])}" for b in view["states"]))
    if view["dropped_events"]:
        lines.append(f"  ({view['dropped_events']} older events dropped)")
    lines.append(f"  events (+0 = {wall(view, view['origin_ms'])}):")
    lines.extend(
        f"  {rel(view, e['at_ms']):>11}  {e['kind']:<24} {describe_transaction_event(e)}".rstrip()
        for e in view["events"]
    )
    return "\n".join(lines) + "\n"
