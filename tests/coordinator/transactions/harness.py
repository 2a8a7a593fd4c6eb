"""A test context for the transaction coordinator, the sibling of `tests/coordinator/harness.py`.

* a manual clock; `sleep(ms)` advances it and fires due timers at their own deadlines (the abort scan, id
  expiration, marker retries, write timeouts), `tick()` fires what is due now;
* an in-memory `__transaction_state` (`store`), durable at once unless `auto_durable=False`;
* a recording marker sink (`sink.sent`) and `write_markers()`, which plays the broker: it answers every
  outstanding `TxnMarkers` (all written, or with the errors given), as the data plane will;
* an in-memory producer id allocator starting at 1000;
* request senders returning decoded outcomes (`init`, `add_partitions`, `add_offsets`, `end`, ...) and compound
  steps (`begin`: InitProducerId + AddPartitionsToTxn);
* `restart()`: a new coordinator loading the same log, as after kill -9;
* `seed()`: write a TransactionLogValue straight into the log and reload, for states a client cannot reach quickly
  (an exhausted epoch).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from coordinator.clock import ManualClock
from coordinator.config import TransactionConfig
from coordinator.context import RequestContext
from coordinator.persistence import InMemoryRecordStore
from coordinator.reply import Reply
from coordinator.transactions import (
    InMemoryProducerIdAllocator,
    TransactionCoordinator,
    TransactionEvents,
    TransactionMetadata,
    TransactionState,
    TxnMarkers,
    TxnRecord,
)
from protocol.errors import ErrorCode
from protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest
from protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)
from protocol.messages.describe_transactions import DescribeTransactionsRequest
from protocol.messages.describe_transactions import TransactionState as Described
from protocol.messages.end_txn import EndTxnRequest
from protocol.messages.init_producer_id import InitProducerIdRequest, InitProducerIdResponse
from protocol.messages.list_transactions import ListTransactionsRequest, ListTransactionsResponse
from protocol.messages.transaction_log_value import PartitionsSchema, TransactionLogValue
from tests.coordinator.harness import CoordinatorTestContext, EventRecorder

Partitions = Mapping[str, Iterable[int]]
TopicPartition = tuple[str, int]

LATEST = {"init": 5, "add_partitions": 3, "add_offsets": 4, "end": 4}


@dataclass
class RecordingMarkerSink:
    """The broker side of the markers contract: remembers every `TxnMarkers` it was handed, in order."""

    sent: list[TxnMarkers] = field(default_factory=list)
    outstanding: list[TxnMarkers] = field(default_factory=list)

    def send(self, markers: TxnMarkers) -> None:
        self.sent.append(markers)
        self.outstanding.append(markers)


def topics(partitions: Partitions) -> list[AddPartitionsToTxnTopic]:
    return [AddPartitionsToTxnTopic(name=t, partitions=list(ps)) for t, ps in partitions.items()]


class TxnTestContext:
    """A transaction coordinator on a manual clock with an in-memory log, plus senders and assertions."""

    def __init__(
        self,
        *,
        partitions: Iterable[int] | None = None,
        auto_durable: bool = True,
        start_ms: int = 0,
        store: InMemoryRecordStore[TxnRecord] | None = None,
        known_partition: Any = None,
        first_producer_id: int = 1000,
        serves: Any = None,
        **config: Any,
    ) -> None:
        config.setdefault("transaction_state_log_num_partitions", 4)
        # The server's transaction.version decides only the coordinator's own aborts; most tests pin the version 0/1
        # rules (T1-T69), the version 2 tests ask for 2.
        config.setdefault("transaction_version", 0)
        self.config = TransactionConfig(**config)
        self.clock = ManualClock(start_ms)
        self.store: InMemoryRecordStore[TxnRecord] = (
            store if store is not None else InMemoryRecordStore(auto_durable=auto_durable)
        )
        self.events = EventRecorder()
        self.sink = RecordingMarkerSink()
        self.producer_ids = InMemoryProducerIdAllocator(first_producer_id)
        self.known_partition = known_partition
        self.serves = serves
        self.owned = list(range(self.config.transaction_state_log_num_partitions) if partitions is None else partitions)
        self.coordinator = self._new_coordinator()
        self.load_all()
        self.events.clear()

    def _new_coordinator(self) -> TransactionCoordinator:
        return TransactionCoordinator(
            self.config,
            self.store,
            self.producer_ids,
            self.sink,
            events=TransactionEvents(self.events),
            known_partition=self.known_partition,
            serves=self.serves,
        )

    def load_all(self, coordinator_epoch: int = 0) -> None:
        for partition in self.owned:
            self.coordinator.begin_loading(partition)
            self.coordinator.load_partition(
                partition, self.store.records(partition), self.now_ms, self.wall_ms, coordinator_epoch
            )

    def restart(self, coordinator_epoch: int = 1) -> None:
        """A new coordinator over the same log (kill -9 and restart): in-flight work is lost, the log is not."""
        self.sink.outstanding.clear()
        self.coordinator = self._new_coordinator()
        self.load_all(coordinator_epoch)

    # -- time ------------------------------------------------------------------------------------------------

    # The group harness's clock handling, which only needs `clock`, `coordinator.tick` and `next_deadline_ms`:
    # `sleep(ms)` fires every timer at its own deadline on the way.
    now_ms = CoordinatorTestContext.now_ms
    wall_ms = CoordinatorTestContext.wall_ms
    tick = CoordinatorTestContext.tick
    sleep = CoordinatorTestContext.sleep

    def ctx(self, api_version: int) -> RequestContext:
        return RequestContext(api_version=api_version, client_id="producer", wall_ms=self.wall_ms)

    # -- senders ---------------------------------------------------------------------------------------------

    def init_reply(
        self,
        transactional_id: str | None = "txn",
        timeout_ms: int = 60_000,
        producer_id: int = -1,
        producer_epoch: int = -1,
        *,
        version: int = LATEST["init"],
    ) -> Reply[InitProducerIdResponse]:
        request = InitProducerIdRequest(
            transactional_id=transactional_id,
            transaction_timeout_ms=timeout_ms,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
        )
        return self.coordinator.init_producer_id(self.ctx(version), request, self.now_ms)

    def init(self, *args: Any, **kw: Any) -> InitProducerIdResponse:
        return self.init_reply(*args, **kw).value

    def init_ok(self, transactional_id: str = "txn", **kw: Any) -> tuple[int, int]:
        response = self.init(transactional_id, **kw)
        assert response.error_code == ErrorCode.NONE, ErrorCode(response.error_code)
        return response.producer_id, response.producer_epoch

    def add_partitions_reply(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Partitions,
        *,
        version: int = LATEST["add_partitions"],
    ) -> Reply[AddPartitionsToTxnResponse]:
        if version >= 4:
            request = AddPartitionsToTxnRequest(
                transactions=[
                    AddPartitionsToTxnTransaction(
                        transactional_id=transactional_id,
                        producer_id=producer_id,
                        producer_epoch=producer_epoch,
                        topics=topics(partitions),
                    )
                ]
            )
        else:
            request = AddPartitionsToTxnRequest(
                v3_and_below_transactional_id=transactional_id,
                v3_and_below_producer_id=producer_id,
                v3_and_below_producer_epoch=producer_epoch,
                v3_and_below_topics=topics(partitions),
            )
        return self.coordinator.add_partitions_to_txn(self.ctx(version), request, self.now_ms)

    def add_partitions(self, *args: Any, **kw: Any) -> dict[TopicPartition, ErrorCode]:
        """(topic, partition) -> error of a v0-3 (or single-transaction v4+) AddPartitionsToTxn."""
        response = self.add_partitions_reply(*args, **kw).value
        results = (
            response.results_by_topic_v3_and_below
            if not response.results_by_transaction
            else response.results_by_transaction[0].topic_results
        )
        return {
            (t.name, p.partition_index): ErrorCode(p.partition_error_code)
            for t in results
            for p in t.results_by_partition
        }

    def add_offsets(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        group_id: str = "group",
        *,
        version: int = LATEST["add_offsets"],
    ) -> ErrorCode:
        request = AddOffsetsToTxnRequest(
            transactional_id=transactional_id, producer_id=producer_id, producer_epoch=producer_epoch, group_id=group_id
        )
        return ErrorCode(self.coordinator.add_offsets_to_txn(self.ctx(version), request, self.now_ms).value.error_code)

    def end_reply(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        *,
        version: int = LATEST["end"],
    ) -> Reply[Any]:
        request = EndTxnRequest(
            transactional_id=transactional_id, producer_id=producer_id, producer_epoch=producer_epoch, committed=commit
        )
        return self.coordinator.end_txn(self.ctx(version), request, self.now_ms)

    def end(self, *args: Any, **kw: Any) -> ErrorCode:
        return ErrorCode(self.end_reply(*args, **kw).value.error_code)

    def describe(self, *transactional_ids: str) -> list[Described]:
        request = DescribeTransactionsRequest(transactional_ids=list(transactional_ids))
        return self.coordinator.describe_transactions(self.ctx(0), request, self.now_ms).transaction_states

    def list(
        self,
        states: Iterable[str] = (),
        producer_ids: Iterable[int] = (),
        duration_ms: int = -1,
        *,
        pattern: str | None = None,
        version: int = 2,
    ) -> ListTransactionsResponse:
        request = ListTransactionsRequest(
            state_filters=list(states),
            producer_id_filters=list(producer_ids),
            duration_filter=duration_ms,
            transactional_id_pattern=pattern,
        )
        return self.coordinator.list_transactions(self.ctx(version), request, self.now_ms)

    # -- compound steps --------------------------------------------------------------------------------------

    def begin(self, transactional_id: str = "txn", partitions: Partitions | None = None, **kw: Any) -> tuple[int, int]:
        """InitProducerId then AddPartitionsToTxn: an Ongoing transaction; returns (producer id, epoch)."""
        producer_id, epoch = self.init_ok(transactional_id, **kw)
        added = self.add_partitions(transactional_id, producer_id, epoch, partitions or {"topic": [0]})
        assert set(added.values()) == {ErrorCode.NONE}, added
        return producer_id, epoch

    def write_markers(self, errors: Mapping[TopicPartition, ErrorCode] | None = None) -> list[TxnMarkers]:
        """Answer every outstanding TxnMarkers (as the broker will, once their control batches are written)."""
        answered = list(self.sink.outstanding)
        self.sink.outstanding.clear()
        for markers in answered:
            self.coordinator.markers_written(markers, self.now_ms, self.wall_ms, errors=errors)
        return answered

    def seed(self, transactional_id: str, **value: Any) -> None:
        """Append a TransactionLogValue for `transactional_id` to the log and reload its partition."""
        partitions = value.pop("partitions", None)
        if partitions is not None:
            value["transaction_partitions"] = [PartitionsSchema(topic=t, partition_ids=list(p)) for t, p in partitions]
        value.setdefault("transaction_timeout_ms", 60_000)
        value.setdefault("transaction_last_update_timestamp_ms", self.wall_ms)
        value.setdefault("transaction_start_timestamp_ms", -1)
        partition = self.coordinator.partition_for(transactional_id)
        self.store.append(partition, [TxnRecord(transactional_id, TransactionLogValue(**value))], lambda _e: None)
        self.store.flush()
        self.coordinator.unload_partition(partition, self.now_ms, self.wall_ms)
        self.coordinator.begin_loading(partition)
        self.coordinator.load_partition(partition, self.store.records(partition), self.now_ms, self.wall_ms)

    # -- inspection ------------------------------------------------------------------------------------------

    def txn(self, transactional_id: str = "txn") -> TransactionMetadata:
        metadata = self.coordinator.transaction(transactional_id)
        assert metadata is not None, f"no transactional id {transactional_id!r}"
        return metadata

    def state(self, transactional_id: str = "txn") -> TransactionState | None:
        metadata = self.coordinator.transaction(transactional_id)
        return None if metadata is None else metadata.state

    def log(self, transactional_id: str = "txn") -> list[TransactionLogValue | None]:
        """Every value written for `transactional_id`, in log order (None = tombstone)."""
        partition = self.coordinator.partition_for(transactional_id)
        return [r.value for r in self.store.records(partition) if r.transactional_id == transactional_id]

    def logged_states(self, transactional_id: str = "txn") -> list[str]:
        return [
            "tombstone" if v is None else TransactionState(v.transaction_status).state_name
            for v in self.log(transactional_id)
        ]
