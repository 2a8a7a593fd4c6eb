"""The toolkit's view of one transactional id: what `transaction()` and `GET /transactions/{id}` answer.

The same facts as Kafka's DescribeTransactions (state, producer id and epoch, timeout, start time, partitions) plus
what only the coordinator and the toolkit know: a transition being written (`pending_state`), the markers handed
out and not yet answered (`pending_markers`, per partition), the rounds a delay fault holds back (`held_markers`,
with when they go), and for an Ongoing transaction when its timeout runs out (`timeout_expires_in_ms`) and when the
coordinator next looks for timed-out transactions (`next_timeout_scan_in_ms`, every
`transaction.abort.timed.out.transaction.cleanup.interval.ms`): the first scan after the timeout aborts it.
Times named `*_time_ms` are wall-clock milliseconds as Kafka persists them (None for "no transaction"); `*_in_ms`
are broker-clock durations from now, which `advance` shortens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coordinator.transactions import TransactionState
from coordinator.transactions.housekeeping import ABORT_KEY
from coordinator.transactions.metadata import NO_TIMESTAMP
from toolkit.marker_faults import partition_names

if TYPE_CHECKING:
    from broker.clock import BrokerClock
    from coordinator.transactions import TransactionCoordinator, TransactionMetadata, TxnMarkers
    from toolkit.marker_faults import HeldRound


def _time(timestamp_ms: int) -> int | None:
    return None if timestamp_ms == NO_TIMESTAMP else timestamp_ms


def _markers(markers: TxnMarkers) -> dict[str, Any]:
    return {
        "result": markers.result.name,
        "producer_epoch": markers.producer_epoch,
        "partitions": partition_names(markers),
    }


def transaction_snapshot(
    coordinator: TransactionCoordinator, transactional_id: str, held: list[HeldRound], clock: BrokerClock
) -> dict[str, Any] | None:
    """The id as the coordinator sees it now; None when it has no such id (unknown, expired, not loaded)."""
    txn = coordinator.transaction(transactional_id)
    if txn is None:
        return None
    return _snapshot(coordinator, txn, held, clock)


def _snapshot(
    coordinator: TransactionCoordinator, txn: TransactionMetadata, held: list[HeldRound], clock: BrokerClock
) -> dict[str, Any]:
    transactional_id = txn.transactional_id
    now_ms = clock.monotonic_ms()
    start = _time(txn.start_timestamp_ms)
    expires_in_ms = scan_in_ms = None
    if txn.state is TransactionState.ONGOING and start is not None:
        expires_in_ms = start + txn.timeout_ms - clock.wall_ms()
        scan = coordinator.timer.deadline(ABORT_KEY)
        scan_in_ms = None if scan is None else max(scan - now_ms, 0)
    return {
        "transactional_id": transactional_id,
        "state": txn.state.state_name,
        "pending_state": None if txn.pending_state is None else txn.pending_state.state_name,
        "producer_id": txn.producer_id,
        "producer_epoch": txn.producer_epoch,
        "timeout_ms": txn.timeout_ms,
        "start_time_ms": start,
        "last_update_time_ms": _time(txn.last_update_timestamp_ms),
        "timeout_expires_in_ms": expires_in_ms,
        "next_timeout_scan_in_ms": scan_in_ms,
        "partitions": sorted(f"{topic}-{partition}" for topic, partition in txn.partitions),
        "coordinator_partition": coordinator.partition_for(transactional_id),
        "pending_markers": [
            _markers(m) for m in coordinator.pending_markers() if m.transactional_id == transactional_id
        ],
        "held_markers": [
            {**_markers(h.markers), "release_in_ms": max(h.release_ms - now_ms, 0)}
            for h in held
            if h.markers.transactional_id == transactional_id
        ],
    }


def transaction_snapshots(
    coordinator: TransactionCoordinator, held: list[HeldRound], clock: BrokerClock
) -> list[dict[str, Any]]:
    """Every id of the loaded `__transaction_state` partitions, by transactional id."""
    return [_snapshot(coordinator, txn, held, clock) for txn in coordinator.transactions()]
