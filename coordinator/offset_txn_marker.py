"""The end of a transaction on a `__consumer_offsets` partition (T64): Kafka's `completeTransaction` followed by
`OffsetMetadataManager.replayEndTransactionMarker`.

When the transaction coordinator ends a transaction that committed offsets, the broker must write the COMMIT or
ABORT marker to the group's partition (WriteTxnMarkers); in Kafka the group coordinator's runtime writes it. Here
too: the marker is appended as a control batch of the producer, and once it is durable every group of the
partition the producer wrote offsets to (an index kept per partition, rebuilt when it is loaded) settles them:
COMMIT makes each the committed offset unless one written later in log order is committed already, ABORT drops
them. A producer with nothing pending still gets its marker (the
partition's log must show where the transaction ended). A failed write changes nothing, so the transaction
coordinator's retry finds the offsets still pending.

The answer is NONE, or what the partition's state or the write answers: NOT_COORDINATOR (not owned, or lost),
COORDINATOR_LOAD_IN_PROGRESS (loading), COORDINATOR_NOT_AVAILABLE (shut down, or the write timed out); Kafka's
WriteTxnMarkers handler answers the first three as NOT_LEADER_OR_FOLLOWER so that the marker is retried (T35).
Errors of the log's producer-state checks (INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED) pass through.
"""

from __future__ import annotations

from collections.abc import Iterable

from coordinator.consumer_group.group import ConsumerGroup
from coordinator.group import ClassicGroup
from coordinator.offset_base import OffsetManagerBase
from coordinator.records import TransactionMarker
from coordinator.reply import Reply
from coordinator.result import CoordinatorResult
from protocol.errors import ErrorCode


class TxnMarkerMixin(OffsetManagerBase):
    """Transaction markers on the coordinator's partitions."""

    def complete_transaction(
        self, partition: int, marker: TransactionMarker, partition_error: ErrorCode | None
    ) -> CoordinatorResult[ErrorCode]:
        """Write `marker` to `partition` (unless the partition's state refuses it with `partition_error`) and settle
        the producer's pending offsets once it is durable."""
        if partition_error is not None:
            return CoordinatorResult.of(partition_error)
        reply: Reply[ErrorCode] = Reply()

        def durable(error: ErrorCode) -> None:
            if error == ErrorCode.NONE:
                self.replay_marker(partition, marker)
            reply.complete(error)

        return CoordinatorResult((), reply, partition, "transaction marker", durable, marker=marker)

    def replay_marker(self, partition: int, marker: TransactionMarker) -> None:
        """Settle `marker.producer_id`'s pending offsets in the groups of `partition` it wrote to."""
        settled = 0
        for group_id in self._open_transactions.take(partition, marker.producer_id):
            group = self._live_group(group_id)
            if group is None or not group.offsets.transactional.has_producer(marker.producer_id):
                continue
            outcome = group.offsets.complete_transaction(marker.producer_id, marker.commit)
            settled += 1
            self._events.txn_offsets_completed(
                group_id,
                marker.producer_id,
                marker.result,
                len(outcome.committed),
                len(outcome.superseded),
                len(outcome.dropped),
            )
        if not settled:
            self._events.txn_marker_without_offsets(partition, marker.producer_id, marker.result)

    def index_transactions(self, partition: int, groups: Iterable[ClassicGroup | ConsumerGroup]) -> None:
        """A loaded partition's groups may hold offsets of transactions whose markers come later (T66)."""
        for group in groups:
            for producer_id in group.offsets.transactional.producers():
                self._open_transactions.add(partition, producer_id, group.group_id)

    def forget_transactions(self, partition: int) -> None:
        """The partition was unloaded: its groups, and so their pending offsets, are gone."""
        self._open_transactions.forget_partition(partition)
