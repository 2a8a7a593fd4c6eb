"""The transaction coordinator (KIP-98, KIP-360, KIP-447's coordinator side): a synchronous, sans-IO state
machine over `__transaction_state`, the group coordinator's sibling on the same runtime (Decision 7).

Rules T1-T77 are in the transaction research notes (Kafka 4.4 is the spec); tests name the rule they check.
Both transaction versions (KIP-890): each request is handled by the rules of the version its API version implies
(EndTxn v5 and AddPartitionsToTxn v4+ are version 2, `versions.transaction_version_for`), the coordinator's own
aborts (timeouts, fencing) by the server's level (`TransactionConfig.transaction_version`, the finalized
`transaction.version` the broker advertises). Under version 2 every EndTxn bumps the producer epoch at prepare (the
markers carry the bumped epoch) and an exhausted epoch moves to a pre-allocated next producer id at completion.

How the broker drives it
------------------------

Build it with its settings, the `__transaction_state` record log, the producer id allocator (the same
`broker.producer_state.ProducerIdAllocator` that serves idempotent producers satisfies `ProducerIdAllocator`) and
a marker sink::

    coordinator = TransactionCoordinator(config, txn_log, producer_ids, sink, known_partition=exists)

* Requests: `init_producer_id`, `add_partitions_to_txn`, `add_offsets_to_txn`, `end_txn` take the request
  context, the decoded request and `now_ms`, and return a `Reply` completed once the write behind it is durable
  (at once when there is none). `describe_transactions`, `list_transactions` answer at once. Responses are
  version-exact (PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH for old versions; `versions.for_version` has the
  table for responses the broker builds itself). EndTxn v5 answers the producer id and epoch to use next.
* KIP-890 part 2's implicit add (Produce v12+, TxnOffsetCommit v5+): `add_partitions(transactional_id,
  producer_id, producer_epoch, partitions, now_ms)`, AddPartitionsToTxn's checks and write for a version 2
  transaction (from Empty or Complete* it begins one); `group_partition(group_id)` names the group's
  `__consumer_offsets` partition.
* The data plane, before appending a transactional batch to a partition that has not seen the transaction yet:
  `verify_partitions(transactional_id, producer_id, producer_epoch, [(topic, partition)])` -> per partition NONE
  or the error (TRANSACTION_ABORTABLE when the partition was not added; Kafka's AddPartitionsToTxn VerifyOnly).
* Time: after every call (and after delivering a durability notice or a markers answer) read
  `next_deadline_ms()` and call `tick(now_ms, wall_ms)` then; it runs the timeout-abort and id-expiration scans,
  marker retries and write timeouts.
* Ownership: `begin_loading(p)`, then `load_partition(p, records, now_ms, wall_ms, coordinator_epoch)` with the
  partition's records decoded by `decode_record` (a record that does not decode is passed as the
  `DamagedTxnRecord` it returns: quarantined and reported, `quarantined_records()`); `unload_partition`,
  `shutdown`. The log writes records encoded by `encode_record` (a `RecordLog[TxnRecord]`).
* Several nodes sharing the coordinator (`cluster.nodes`): `serves=` at construction says whether the node a
  client's request came to leads a `__transaction_state` partition; the client-facing APIs answer NOT_COORDINATOR
  for the others' ids (ListTransactions lists the node's own). `verify_partitions`, `add_partitions`, markers and
  timers are the broker's own calls and never consult it. A partition moving between nodes is `unload_partition`
  then `begin_loading`/`load_partition` with the new leader epoch as coordinator epoch.

The markers contract (Kafka's TransactionMarkerChannelManager minus the network)
--------------------------------------------------------------------------------

When a transaction's outcome is durable (PrepareCommit/PrepareAbort, after EndTxn, a fence, a timeout, or found
in the log at load) the coordinator calls `sink.send(TxnMarkers(...))` with::

    TxnMarkers(transactional_id: str, producer_id: int, producer_epoch: int, coordinator_epoch: int,
               result: TransactionResult (ABORT=0 / COMMIT=1, the control record types),
               partitions: tuple[(topic, partition), ...], transaction_version: int = 0)

(under transaction version 2 `producer_epoch` is the bumped one, above the epoch of the transaction's data).

`send` runs inside a coordinator call and must only queue the work. The broker then writes one control batch per
partition (producer id/epoch, COMMIT or ABORT, `coordinator_epoch` in the marker value), tells the group
coordinator about `__consumer_offsets` partitions, and answers once per `TxnMarkers`::

    coordinator.markers_written(markers, now_ms, wall_ms, errors={(topic, partition): ErrorCode, ...})

naming only the partitions that failed (a partition of a deleted topic counts as written). Retriable errors are
sent again after `retry_backoff_ms` as a new `TxnMarkers` with those partitions only; INVALID_PRODUCER_EPOCH and
TRANSACTION_COORDINATOR_FENCED stop the markers of that transaction; UNSUPPORTED_VERSION and
UNSUPPORTED_FOR_MESSAGE_FORMAT drop the partition. When every partition is written the coordinator writes
CompleteCommit/CompleteAbort (retried until it lands). `pending_markers()` lists what is outstanding.
"""

from coordinator.transactions.coordinator import TransactionCoordinator
from coordinator.transactions.events import TransactionEvents
from coordinator.transactions.markers import MarkerSink, TransactionResult, TxnMarkers
from coordinator.transactions.metadata import TransactionMetadata
from coordinator.transactions.producer_ids import (
    InMemoryProducerIdAllocator,
    ProducerIdAllocator,
    ProducerIdsUnavailableError,
)
from coordinator.transactions.records import DamagedTxnRecord, TxnRecord, decode_record, encode_record
from coordinator.transactions.state import TransactionState

__all__ = [
    "DamagedTxnRecord",
    "InMemoryProducerIdAllocator",
    "MarkerSink",
    "ProducerIdAllocator",
    "ProducerIdsUnavailableError",
    "TransactionCoordinator",
    "TransactionEvents",
    "TransactionMetadata",
    "TransactionResult",
    "TransactionState",
    "TxnMarkers",
    "TxnRecord",
    "decode_record",
    "encode_record",
]
