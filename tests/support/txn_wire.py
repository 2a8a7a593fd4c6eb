"""A transactional producer over raw requests, and read_committed / offset readers, for crash tests that must know
exactly which step of a transaction the broker answered before it was killed.

`TxnWire` sends one request per step of a consume-transform-produce transaction, as a transaction version 0/1
client does (KIP-98, KIP-447): InitProducerId, AddPartitionsToTxn, Produce, AddOffsetsToTxn, TxnOffsetCommit,
EndTxn; or, with `transaction_version=2`, as a version 2 client does (KIP-890 part 2): no AddPartitionsToTxn or
AddOffsetsToTxn is sent (those steps answer NONE at once), Produce v12 and TxnOffsetCommit v5 add their partitions
themselves, and EndTxn v5 takes the bumped epoch (or the rotated producer id) from the answer and starts the
sequences again.
Each step returns the broker's error code (what a client would act on); nothing is retried behind the caller's back
except what every client retries while the coordinator loads or completes the previous transaction.

The readers are what a consumer sees: `read_committed` fetches a partition with isolation_level=1 up to its last
stable offset and drops the records of aborted transactions with the Fetch's aborted-transaction list (the
algorithm of Kafka's and librdkafka's consumers), `offsets` is OffsetFetch v7 with or without `require_stable`,
`describe` is DescribeTransactions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

from protocol.control_records import ControlRecordType, decode_end_txn_marker
from protocol.errors import ErrorCode
from protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest
from protocol.messages.add_partitions_to_txn import AddPartitionsToTxnRequest, AddPartitionsToTxnTopic
from protocol.messages.describe_transactions import DescribeTransactionsRequest
from protocol.messages.end_txn import EndTxnRequest
from protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.init_producer_id import InitProducerIdRequest
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestTopic
from protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from protocol.records import RecordBatch, decode_batch
from protocol.registry import ApiKey
from tests.broker.wire import WireClient
from tests.support.data_plane import PRODUCE_VERSION, batch, produce

#: What every transactional client retries: the coordinator is loading or elsewhere, or the previous transaction of
#: the id is still completing (InitProducerId, AddPartitionsToTxn after an EndTxn).
RETRIABLE = frozenset(
    {
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.CONCURRENT_TRANSACTIONS,
    }
)
END_TXN_V2 = 5
"""EndTxn v5: transaction version 2, the epoch bumped by every transaction."""
PRODUCE_V2 = 12
TXN_OFFSET_COMMIT_V2 = 5
"""The first Produce and TxnOffsetCommit versions that add their partitions to the transaction themselves."""
RETRY_S = 0.02
RETRIES = 1000  # 20 s
READ_COMMITTED = 1


@dataclass
class TxnWire:
    """One transactional id's producer on one connection; `producer_id`/`epoch` once `init` succeeded."""

    client: WireClient
    transactional_id: str
    timeout_ms: int
    producer_id: int = -1
    epoch: int = -1
    sequences: dict[tuple[str, int], int] = field(default_factory=dict)
    transaction_version: int = 0
    """2: the requests of a transaction version 2 client (see the module docstring)."""

    @property
    def v2(self) -> bool:
        return self.transaction_version >= 2

    async def _retrying(self, call: Callable[[], Awaitable[int]]) -> ErrorCode:
        """Run `call()` until it answers an error code that is not retriable."""
        error = ErrorCode.NONE
        for _ in range(RETRIES):
            error = ErrorCode(await call())
            if error not in RETRIABLE:
                return error
            await asyncio.sleep(RETRY_S)
        raise AssertionError(f"{self.transactional_id}: still {error.name} after {RETRIES} tries")

    async def init(self) -> ErrorCode:
        """InitProducerId (v4, KIP-360: a producer that had an id and epoch presents them)."""

        async def call() -> int:
            request = InitProducerIdRequest(
                transactional_id=self.transactional_id,
                transaction_timeout_ms=self.timeout_ms,
                producer_id=self.producer_id,
                producer_epoch=self.epoch,
            )
            response = await self.client.call(ApiKey.INIT_PRODUCER_ID, 4, request)
            if response.error_code == ErrorCode.NONE:
                self.producer_id, self.epoch = response.producer_id, response.producer_epoch
                self.sequences.clear()
            return int(response.error_code)

        return await self._retrying(call)

    async def add_partitions(self, topic: str, partitions: Iterable[int]) -> ErrorCode:
        """AddPartitionsToTxn v3 (one transaction); the worst per-partition error (NONE when all were added). A
        version 2 client sends none (its Produce adds the partition)."""
        if self.v2:
            return ErrorCode.NONE

        async def call() -> int:
            request = AddPartitionsToTxnRequest(
                v3_and_below_transactional_id=self.transactional_id,
                v3_and_below_producer_id=self.producer_id,
                v3_and_below_producer_epoch=self.epoch,
                v3_and_below_topics=[AddPartitionsToTxnTopic(name=topic, partitions=sorted(partitions))],
            )
            response = await self.client.call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, request)
            return _worst(
                p.partition_error_code for t in response.results_by_topic_v3_and_below for p in t.results_by_partition
            )

        return await self._retrying(call)

    async def produce(
        self, topic: str, partition: int, *values: bytes, version: int | None = None
    ) -> tuple[ErrorCode, int]:
        """One transactional batch (acks=-1; Produce v12 for a version 2 client unless told); (error, base offset).
        The sequence advances only when acknowledged."""
        if version is None:
            version = PRODUCE_V2 if self.v2 else PRODUCE_VERSION
        sequence = self.sequences.get((topic, partition), 0)
        records = batch(*values, producer_id=self.producer_id, epoch=self.epoch, sequence=sequence, transactional=True)
        result = await produce(
            self.client, topic, records, partition=partition, version=version, transactional_id=self.transactional_id
        )
        if result.error_code == ErrorCode.NONE:
            self.sequences[(topic, partition)] = sequence + len(values)
        return ErrorCode(result.error_code), int(result.base_offset)

    async def add_offsets(self, group: str) -> ErrorCode:
        """AddOffsetsToTxn v3: the group's `__consumer_offsets` partition joins the transaction (a version 2
        client sends none: its TxnOffsetCommit adds it)."""
        if self.v2:
            return ErrorCode.NONE

        async def call() -> int:
            request = AddOffsetsToTxnRequest(
                transactional_id=self.transactional_id,
                producer_id=self.producer_id,
                producer_epoch=self.epoch,
                group_id=group,
            )
            return int((await self.client.call(ApiKey.ADD_OFFSETS_TO_TXN, 3, request)).error_code)

        return await self._retrying(call)

    async def commit_offsets(
        self, group: str, topic: str, offsets: dict[int, int], version: int | None = None
    ) -> ErrorCode:
        """TxnOffsetCommit (v3, v5 for a version 2 client, unless told) without group metadata (what
        `send_offsets_to_transaction` of a simple consumer sends); the worst per-partition error."""
        if version is None:
            version = TXN_OFFSET_COMMIT_V2 if self.v2 else 3

        async def call() -> int:
            request = TxnOffsetCommitRequest(
                transactional_id=self.transactional_id,
                group_id=group,
                producer_id=self.producer_id,
                producer_epoch=self.epoch,
                topics=[
                    TxnOffsetCommitRequestTopic(
                        name=topic,
                        partitions=[
                            TxnOffsetCommitRequestPartition(partition_index=p, committed_offset=o)
                            for p, o in sorted(offsets.items())
                        ],
                    )
                ],
            )
            response = await self.client.call(ApiKey.TXN_OFFSET_COMMIT, version, request)
            return _worst(p.error_code for t in response.topics for p in t.partitions)

        return await self._retrying(call)

    async def end(self, commit: bool, version: int | None = None) -> ErrorCode:
        """EndTxn (v3, v5 for a version 2 client, unless told): answered once PrepareCommit/PrepareAbort is durable
        (the markers come after); retried while the same outcome is still being completed
        (CONCURRENT_TRANSACTIONS), as clients retry it. From v5 (transaction version 2) the answer's producer id
        and epoch are the ones to use next."""
        if version is None:
            version = END_TXN_V2 if self.v2 else 3

        async def call() -> int:
            assert version is not None
            request = EndTxnRequest(
                transactional_id=self.transactional_id,
                producer_id=self.producer_id,
                producer_epoch=self.epoch,
                committed=commit,
            )
            response = await self.client.call(ApiKey.END_TXN, version, request)
            if version >= END_TXN_V2 and response.error_code == ErrorCode.NONE:
                self.producer_id, self.epoch = response.producer_id, response.producer_epoch
                self.sequences.clear()
            return int(response.error_code)

        return await self._retrying(call)


def _worst(codes: Iterable[int]) -> int:
    """The answer for a request with per-partition errors: the first error, NONE when there is none."""
    return next((code for code in codes if code != ErrorCode.NONE), ErrorCode.NONE)


# -- readers -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CommittedView:
    """What a read_committed consumer of one partition gets: the data records below the last stable offset that
    are not in an aborted transaction, as (offset, value), and the offsets it stopped at."""

    records: list[tuple[int, bytes]]
    last_stable_offset: int
    high_watermark: int


def _fetch_request(topic: str, partition: int, offset: int) -> FetchRequest:
    wanted = FetchTopic(
        topic=topic, partitions=[FetchPartition(partition=partition, fetch_offset=offset, partition_max_bytes=1 << 20)]
    )
    return FetchRequest(max_wait_ms=0, min_bytes=1, max_bytes=1 << 22, isolation_level=READ_COMMITTED, topics=[wanted])


def _visible(batches: list[RecordBatch], aborted: list[tuple[int, int]], start: int) -> list[tuple[int, bytes]]:
    """A consumer's filter: a transactional batch is dropped while its producer has an aborted transaction that
    started at or before it and whose ABORT marker has not been passed yet (Kafka's Fetcher, librdkafka)."""
    pending = sorted(aborted, key=lambda a: a[1])  # (producer id, first offset)
    aborting: set[int] = set()
    out: list[tuple[int, bytes]] = []
    for one in batches:
        while pending and pending[0][1] <= one.base_offset + one.last_offset_delta:
            aborting.add(pending.pop(0)[0])
        if one.is_control:
            marker = decode_end_txn_marker(one.records[0])
            if marker.control_type is ControlRecordType.ABORT:
                aborting.discard(one.producer_id)
            continue
        if one.is_transactional and one.producer_id in aborting:
            continue
        out += [(offset, record.value or b"") for offset, _, record in one.absolute() if offset >= start]
    return out


async def read_committed(client: WireClient, topic: str, partition: int) -> CommittedView:
    """Everything a read_committed consumer reads from the log start to the last stable offset."""
    records: list[tuple[int, bytes]] = []
    offset = 0
    while True:
        response = await client.call(ApiKey.FETCH, 12, _fetch_request(topic, partition, offset))
        [answer] = response.responses[0].partitions
        assert answer.error_code == ErrorCode.NONE, f"{topic}-{partition}: {ErrorCode(answer.error_code).name}"
        data, pos, batches = answer.records or b"", 0, []
        while pos < len(data):
            one, pos = decode_batch(data, pos)
            batches.append(one)
        aborted = [(a.producer_id, a.first_offset) for a in answer.aborted_transactions or []]
        records += _visible(batches, aborted, offset)
        if not batches:
            assert offset >= answer.last_stable_offset, f"{topic}-{partition}: no progress at {offset}"
            return CommittedView(records, answer.last_stable_offset, answer.high_watermark)
        offset = batches[-1].base_offset + batches[-1].last_offset_delta + 1


async def offsets(
    client: WireClient, group: str, topic: str, partitions: list[int], *, require_stable: bool
) -> dict[int, tuple[int, ErrorCode]]:
    """(committed offset, error) per partition from OffsetFetch v7, retried while the group coordinator loads."""
    request = OffsetFetchRequest(
        group_id=group,
        topics=[OffsetFetchRequestTopic(name=topic, partition_indexes=partitions)],
        require_stable=require_stable,
    )
    for _ in range(RETRIES):
        response = await client.call(ApiKey.OFFSET_FETCH, 7, request)
        if response.error_code not in RETRIABLE:
            assert response.error_code == ErrorCode.NONE, ErrorCode(response.error_code).name
            return {
                p.partition_index: (p.committed_offset, ErrorCode(p.error_code)) for p in response.topics[0].partitions
            }
        await asyncio.sleep(RETRY_S)
    raise AssertionError(f"{group}: the group coordinator never finished loading")


@dataclass(frozen=True)
class Described:
    state: str
    producer_id: int
    producer_epoch: int
    partitions: frozenset[tuple[str, int]]


async def describe(client: WireClient, transactional_id: str) -> Described:
    """DescribeTransactions v0 for one id, retried while the transaction coordinator loads."""
    request = DescribeTransactionsRequest(transactional_ids=[transactional_id])
    for _ in range(RETRIES):
        [state] = (await client.call(ApiKey.DESCRIBE_TRANSACTIONS, 0, request)).transaction_states
        if state.error_code not in RETRIABLE:
            assert state.error_code == ErrorCode.NONE, f"{transactional_id}: {ErrorCode(state.error_code).name}"
            partitions = frozenset((t.topic, p) for t in state.topics for p in t.partitions)
            return Described(state.transaction_state, state.producer_id, state.producer_epoch, partitions)
        await asyncio.sleep(RETRY_S)
    raise AssertionError(f"{transactional_id}: the transaction coordinator never finished loading")
