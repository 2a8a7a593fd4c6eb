"""Transactions (issue #15) over raw requests, at the versions real clients send: librdkafka (InitProducerId v4,
AddPartitionsToTxn v0, AddOffsetsToTxn v0, EndTxn v1, TxnOffsetCommit v3), kafka-python (v4/v3/v3/v3/v3) and one
flexible version of each (v5/v3/v3/v4/v4), and transaction version 2's (EndTxn v5, AddPartitionsToTxn v4-5,
Produce v12, TxnOffsetCommit v5: the #16 scenarios).

Producer ids differ between brokers (each allocates its own): every id a scenario learns is named in the
transcript (``<P1>``, ``<P2>`` ...) in the order it was handed out; an id never handed out reads ``<other>``.
Answers that depend on markers still being written (CONCURRENT_TRANSACTIONS while a commit completes) are asked
until they settle, as a client retries, and only the settled answer is recorded. Lists of partitions and topics
are recorded sorted (neither broker promises their order).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protocol.errors import ErrorCode
from protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest
from protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)
from protocol.messages.describe_transactions import DescribeTransactionsRequest
from protocol.messages.end_txn import EndTxnRequest
from protocol.messages.find_coordinator import FindCoordinatorRequest
from protocol.messages.init_producer_id import InitProducerIdRequest
from protocol.messages.list_transactions import ListTransactionsRequest
from protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestTopic
from protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from protocol.registry import ApiKey
from tests.differential.normalize import plain
from tests.differential.registry import scenario
from tests.differential.scenarios.group_state import _in_order, ask, make_topic
from tests.differential.session import Conn, Session
from tests.reference.settings import TXN_VERIFICATION_SETTINGS
from tests.support.data_plane import batch, produce_request

#: (InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit) per client.
LIBRDKAFKA = (4, 0, 0, 1, 3)
KAFKA_PYTHON = (4, 3, 3, 3, 3)
FLEXIBLE = (5, 3, 3, 4, 4)
TIMEOUT_MS = 60_000
SETTLE_S = 15.0
#: Answers a client retries: the coordinator is not there yet, or the last transaction's markers are in flight.
NOT_READY = frozenset(
    {ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR}
)
IN_FLIGHT = NOT_READY | {ErrorCode.CONCURRENT_TRANSACTIONS}
ID_KEYS = ("producer_id", "producer_id_filters")


#: Produce answers a producer retries with the same batch (the leader of a new topic is not known yet).
PRODUCE_RETRIABLE = frozenset(
    {ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.LEADER_NOT_AVAILABLE}
)


@dataclass(slots=True)
class Txns:
    """One scenario's view of producer ids: names them in the order learnt and records answers with the names."""

    s: Session
    conn: Conn
    names: dict[int, str] = field(default_factory=dict)

    def learn(self, producer_id: int) -> None:
        if producer_id >= 0 and producer_id not in self.names:
            self.names[producer_id] = f"<P{len(self.names) + 1}>"

    def _named(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            if value.get("error_code"):  # an error's producer id is a placeholder (-1 or 0), not an id handed out
                return {k: v if k in ID_KEYS else self._named(v, k) for k, v in value.items()}
            return {k: self._named(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self._named(v, key) for v in value]
        if key in ID_KEYS and isinstance(value, int) and value >= 0:
            return self.names.get(value, "<other>")
        return value

    def note(self, step: str, response: Any) -> None:
        self.s.note(step, {"closed": True} if response is None else _in_order(self._named(plain(response))))

    async def call(self, api_key: int, version: int, body: Any, step: str) -> Any:
        response = await ask(self.conn, api_key, version, body)
        self.note(step, response)
        return response

    async def settled(self, api_key: int, version: int, body: Any, step: str, again: Callable[[Any], bool]) -> Any:
        """Ask while ``again(answer)`` holds (or until the time is up), as a client retries; record the last."""
        deadline = time.monotonic() + SETTLE_S
        while True:
            response = await ask(self.conn, api_key, version, body)
            if response is None or not again(response) or time.monotonic() > deadline:
                break
            await self.s.sleep_ms(50)
        self.note(step, response)
        return response

    async def coordinator(self, transactional_id: str) -> None:
        """FindCoordinator for a transactional id until it answers (Kafka creates `__transaction_state` then)."""
        body = FindCoordinatorRequest(key_type=1, coordinator_keys=[transactional_id])
        deadline = time.monotonic() + SETTLE_S
        found = False
        while not found and time.monotonic() < deadline:
            answer = await ask(self.conn, ApiKey.FIND_COORDINATOR, 4, body)
            found = answer is not None and answer.coordinators[0].error_code == ErrorCode.NONE
            if not found:
                await self.s.sleep_ms(100)
        self.s.note("the transaction coordinator is found", found)

    async def init(
        self, transactional_id: str | None, step: str, *, version: int = 4, timeout_ms: int = TIMEOUT_MS, **kw: Any
    ) -> Any:
        """InitProducerId, retried while the coordinator loads or a previous transaction completes; the producer
        id it hands out is named."""
        body = InitProducerIdRequest(transactional_id=transactional_id, transaction_timeout_ms=timeout_ms, **kw)
        response = await ask(self.conn, ApiKey.INIT_PRODUCER_ID, version, body)
        deadline = time.monotonic() + SETTLE_S
        while response is not None and response.error_code in IN_FLIGHT and time.monotonic() < deadline:
            await self.s.sleep_ms(50)
            response = await ask(self.conn, ApiKey.INIT_PRODUCER_ID, version, body)
        if response is not None:
            self.learn(response.producer_id)
        self.note(step, response)
        return response

    async def add_partitions(
        self, tid: str, pid: int, epoch: int, topic: str, partitions: list[int], step: str, version: int = 0
    ) -> Any:
        wanted = [AddPartitionsToTxnTopic(name=topic, partitions=partitions)]
        body = AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=tid,
            v3_and_below_producer_id=pid,
            v3_and_below_producer_epoch=epoch,
            v3_and_below_topics=wanted,
        )
        return await self.settled(ApiKey.ADD_PARTITIONS_TO_TXN, version, body, step, _concurrent)

    async def add_offsets(self, tid: str, pid: int, epoch: int, group: str, step: str, version: int = 0) -> Any:
        body = AddOffsetsToTxnRequest(transactional_id=tid, producer_id=pid, producer_epoch=epoch, group_id=group)
        return await self.settled(ApiKey.ADD_OFFSETS_TO_TXN, version, body, step, lambda r: r.error_code in IN_FLIGHT)

    async def end(self, tid: str, pid: int, epoch: int, commit: bool, step: str, version: int = 1) -> Any:
        """EndTxn, asked again while the previous transaction's markers are in flight (CONCURRENT_TRANSACTIONS)."""
        body = EndTxnRequest(transactional_id=tid, producer_id=pid, producer_epoch=epoch, committed=commit)
        return await self.settled(ApiKey.END_TXN, version, body, step, lambda r: r.error_code in IN_FLIGHT)

    async def produce(
        self, tid: str, pid: int, epoch: int, topic: str, partition: int, seq: int, step: str, version: int = 9
    ) -> None:
        """One transactional record (Produce v9 unless told, acks=all); its error code and offset are recorded. A
        retriable answer (Kafka's leader for a topic created a moment ago is not always known yet:
        NOT_LEADER_OR_FOLLOWER) is asked again, as a producer retries the same batch."""
        records = batch(b"txn", producer_id=pid, epoch=epoch, sequence=seq, transactional=True)
        body = produce_request(topic, records, partition=partition, transactional_id=tid)
        deadline = time.monotonic() + SETTLE_S
        while True:
            answer = await ask(self.conn, ApiKey.PRODUCE, version, body)
            if answer is None:
                self.s.note(step, {"closed": True})
                return
            result = answer.responses[0].partition_responses[0]
            if result.error_code not in PRODUCE_RETRIABLE or time.monotonic() > deadline:
                break
            await self.s.sleep_ms(50)
        self.s.note(step, {"error_code": result.error_code, "base_offset": result.base_offset})

    async def offset_commit(
        self,
        tid: str,
        pid: int,
        epoch: int,
        group: str,
        topic: str,
        offset: int,
        step: str,
        version: int = 3,
        topic_id: uuid.UUID | None = None,
    ) -> Any:
        """TxnOffsetCommit of one partition; v6+ names the topic by ``topic_id``."""
        part = TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=offset, committed_metadata="m")
        wanted = TxnOffsetCommitRequestTopic(name=topic, topic_id=topic_id or uuid.UUID(int=0), partitions=[part])
        body = TxnOffsetCommitRequest(
            transactional_id=tid, group_id=group, producer_id=pid, producer_epoch=epoch, topics=[wanted]
        )
        return await self.call(ApiKey.TXN_OFFSET_COMMIT, version, body, step)

    async def describe(self, tids: list[str], step: str) -> Any:
        answer = await ask(
            self.conn, ApiKey.DESCRIBE_TRANSACTIONS, 0, DescribeTransactionsRequest(transactional_ids=tids)
        )
        if answer is not None:
            for state in answer.transaction_states:  # Kafka keeps a transaction's partitions in a hash set
                state.topics.sort(key=lambda t: t.topic)
                for topic in state.topics:
                    topic.partitions.sort()
        self.note(step, answer)
        return answer

    async def list(self, step: str, version: int = 1, **kw: Any) -> None:
        """ListTransactions, keeping only this run's transactional ids (the broker lists every run's), sorted."""
        answer = await ask(self.conn, ApiKey.LIST_TRANSACTIONS, version, ListTransactionsRequest(**kw))
        if answer is not None:
            mine = [t for t in answer.transaction_states if self.s.token in t.transactional_id]
            answer.transaction_states = sorted(mine, key=lambda t: t.transactional_id)
        self.note(step, answer)


def _concurrent(response: Any) -> bool:
    """An AddPartitionsToTxn answer a client retries: the last transaction's markers are still being written."""
    codes = [p.partition_error_code for t in response.results_by_topic_v3_and_below for p in t.results_by_partition]
    return ErrorCode.CONCURRENT_TRANSACTIONS in codes


def _ids(response: Any) -> tuple[int, int]:
    return (response.producer_id, response.producer_epoch) if response is not None else (-1, -1)


async def _topic(s: Session, t: Txns, base: str, partitions: int) -> str:
    name = s.name(base)
    await make_topic(s, t.conn, name, partitions)
    return name


@scenario("#15 InitProducerId")
async def txn_init_producer_id(s: Session) -> None:
    """InitProducerId: a new transactional id gets a producer id at epoch 0, a re-init bumps the epoch; a timeout
    above transaction.max.timeout.ms or not positive is INVALID_TRANSACTION_TIMEOUT, an empty transactional id
    INVALID_REQUEST, none an idempotent producer id; KIP-360 (v3+): the right producer id and epoch bump the epoch,
    a wrong one is refused (INVALID_PRODUCER_EPOCH before v4 ... PRODUCER_FENCED)."""
    t = Txns(s, await s.connect("txn-init"))
    tid = s.name("txn-init")
    await t.coordinator(tid)
    pid, _ = _ids(await t.init(tid, "new transactional id"))
    await t.init(tid, "re-init")
    await t.init(tid, "timeout above transaction.max.timeout.ms", timeout_ms=900_001)
    await t.init(tid, "timeout 0", timeout_ms=0)
    await t.init("", "empty transactional id")
    await t.init(None, "no transactional id (idempotent)")
    await t.init(tid, "v3 re-init with its producer id and epoch", version=3, producer_id=pid, producer_epoch=1)
    for version in (3, 4, 5):
        await t.init(tid, f"v{version} with an old epoch", version=version, producer_id=pid, producer_epoch=0)
        await t.init(
            tid, f"v{version} with another producer id", version=version, producer_id=pid + 7, producer_epoch=2
        )
    await t.init(tid, "v5 re-init", version=5)
    other = s.name("txn-init-other")
    await t.init(other, "a new id with a producer id and epoch", producer_id=pid, producer_epoch=2)


@scenario("#15 AddPartitionsToTxn AddOffsetsToTxn")
async def txn_add_partitions_and_offsets(s: Session) -> None:
    """AddPartitionsToTxn and AddOffsetsToTxn refuse an unknown partition, a wrong epoch, a wrong producer id and
    an unknown transactional id, then add, at librdkafka's, kafka-python's and a flexible version."""
    t = Txns(s, await s.connect("txn-add"))
    topic = await _topic(s, t, "txn-add-t", 2)
    tid, group = s.name("txn-add"), s.name("txn-add-g")
    await t.coordinator(tid)
    pid, epoch = _ids(await t.init(tid, "init"))
    for version in (0, 3):
        await t.add_partitions(tid, pid, epoch, s.name("txn-nowhere"), [0], f"v{version} unknown topic", version)
        await t.add_partitions(tid, pid, epoch, topic, [0, 5], f"v{version} unknown partition", version)
        await t.add_partitions(tid, pid, epoch + 1, topic, [0], f"v{version} wrong epoch", version)
        await t.add_partitions(tid, pid + 7, epoch, topic, [0], f"v{version} wrong producer id", version)
        await t.add_partitions(s.name("txn-ghost"), pid, epoch, topic, [0], f"v{version} unknown id", version)
    await t.add_partitions(tid, pid, epoch, topic, [0], "v0 good add")
    await t.add_partitions(tid, pid, epoch, topic, [0, 1], "v3 good add, one already in", 3)
    for version in (0, 3):
        await t.add_offsets(tid, pid, epoch + 1, group, f"AddOffsets v{version} wrong epoch", version)
        await t.add_offsets(tid, pid + 7, epoch, group, f"AddOffsets v{version} wrong producer id", version)
        await t.add_offsets(s.name("txn-ghost"), pid, epoch, group, f"AddOffsets v{version} unknown id", version)
        await t.add_offsets(tid, pid, epoch, "", f"AddOffsets v{version} empty group", version)
    await t.add_offsets(tid, pid, epoch, group, "AddOffsets v0 good")
    await t.add_offsets(tid, pid, epoch, group, "AddOffsets v3 again", 3)
    await t.describe([tid], "described")
    await t.end(tid, pid, epoch, False, "abort")


@scenario("#15 EndTxn")
async def txn_end(s: Session) -> None:
    """EndTxn: committing nothing is INVALID_TXN_STATE; a commit after a transactional record succeeds, its retry
    too; an abort after the commit is INVALID_TXN_STATE; a re-init while a transaction is Ongoing aborts it
    (CONCURRENT_TRANSACTIONS until then, then a bumped epoch) and fences the old epoch; the flexible version."""
    t = Txns(s, await s.connect("txn-end"))
    topic = await _topic(s, t, "txn-end-t", 2)
    tid = s.name("txn-end")
    await t.coordinator(tid)
    pid, epoch = _ids(await t.init(tid, "init"))
    await t.end(tid, pid, epoch, True, "commit with nothing added")
    await t.end(tid, pid, epoch, False, "abort with nothing added")
    await t.add_partitions(tid, pid, epoch, topic, [0], "add partition 0")
    await t.produce(tid, pid, epoch, topic, 0, 0, "produce to partition 0")
    await t.end(tid, pid, epoch, True, "commit")
    await t.end(tid, pid, epoch, True, "the commit again")
    await t.end(tid, pid, epoch, False, "abort after the commit")
    await t.add_partitions(tid, pid, epoch, topic, [1], "add partition 1")
    await t.produce(tid, pid, epoch, topic, 1, 0, "produce to partition 1")
    first = await ask(
        t.conn,
        ApiKey.INIT_PRODUCER_ID,
        4,
        InitProducerIdRequest(transactional_id=tid, transaction_timeout_ms=TIMEOUT_MS),
    )
    s.note("re-init while Ongoing", None if first is None else first.error_code)
    _, bumped = _ids(await t.init(tid, "re-init again, once aborted"))
    await t.end(tid, pid, epoch, True, "commit at the fenced epoch")
    await t.describe([tid], "described")
    await t.add_partitions(tid, pid, bumped, topic, [0], "v3 add at the new epoch", 3)
    await t.produce(tid, pid, bumped, topic, 0, 0, "produce at the new epoch")
    await t.end(tid, pid, bumped, True, "v4 commit", 4)
    await t.end(tid, pid, bumped, True, "v4 commit again", 4)
    await t.end(tid, pid, bumped, False, "v3 abort after the commit", 3)


@scenario("#15 DescribeTransactions ListTransactions")
async def txn_describe_and_list(s: Session) -> None:
    """DescribeTransactions and ListTransactions of transactions Empty, Ongoing (with partitions), CompleteCommit
    and CompleteAbort, and of an unknown id; ListTransactions filtered by state, by producer id and (v2) by an id
    pattern, valid or not."""
    t = Txns(s, await s.connect("txn-list"))
    topic = await _topic(s, t, "txn-list-t", 2)
    empty, ongoing, committed, aborted = (
        s.name(f"txn-list-{n}") for n in ("a-empty", "b-ongoing", "c-commit", "d-abort")
    )
    await t.coordinator(empty)
    await t.init(empty, "init Empty")
    pid, epoch = _ids(await t.init(ongoing, "init Ongoing"))
    await t.add_partitions(ongoing, pid, epoch, topic, [1, 0], "add two partitions")
    for tid, commit, partition in ((committed, True, 0), (aborted, False, 1)):  # apart: markers land late on Kafka
        cpid, cepoch = _ids(await t.init(tid, f"init {'committed' if commit else 'aborted'}"))
        await t.add_partitions(tid, cpid, cepoch, topic, [partition], "add a partition")
        await t.produce(tid, cpid, cepoch, topic, partition, 0, "produce")
        await t.end(tid, cpid, cepoch, commit, "end")
    await t.settled(
        ApiKey.DESCRIBE_TRANSACTIONS,
        0,
        DescribeTransactionsRequest(transactional_ids=[committed, aborted]),
        "the ended ones, once complete",
        lambda r: any(state.transaction_state.startswith("Prepare") for state in r.transaction_states),
    )
    await t.describe([empty, ongoing, committed, aborted, s.name("txn-list-ghost")], "describe all")
    await t.list("list all", version=0)
    await t.list("list Ongoing", state_filters=["Ongoing"])
    await t.list("list CompleteCommit and an unknown state", state_filters=["CompleteCommit", "Nonsense"])
    await t.list("list by producer id", producer_id_filters=[pid])
    await t.list("v2 list by id pattern", 2, transactional_id_pattern=f"txn-list-[a-c]-.*{s.token}.*")
    await t.list("v2 list by a pattern matching part of the ids", 2, transactional_id_pattern="txn-list")
    await t.list("v2 list with an empty pattern", 2, transactional_id_pattern="", state_filters=["Ongoing"])
    await t.list("v2 list by an invalid pattern", 2, transactional_id_pattern="txn-list-[")
    await t.end(ongoing, pid, epoch, False, "abort the Ongoing one")


def _unstable(response: Any) -> bool:
    """An OffsetFetch answer that still has a pending transactional offset (the commit marker is not written)."""
    codes = [response.error_code] + [p.error_code for topic in response.topics for p in topic.partitions]
    return ErrorCode.UNSTABLE_OFFSET_COMMIT in codes


def _fetch(group: str, topic: str, require_stable: bool) -> OffsetFetchRequest:
    wanted = [OffsetFetchRequestTopic(name=topic, partition_indexes=[0])]
    return OffsetFetchRequest(group_id=group, topics=wanted, require_stable=require_stable)


@scenario("#15 TxnOffsetCommit")
async def txn_offset_commit(s: Session) -> None:
    """TxnOffsetCommit without AddOffsetsToTxn (what verification answers) and with it; OffsetFetch v7 with and
    without require_stable while the offsets are pending, and after the commit; then aborted offsets (flexible)."""
    t = Txns(s, await s.connect("txn-offsets"))
    topic = await _topic(s, t, "txn-offsets-t", 1)
    tid, group = s.name("txn-offsets"), s.name("txn-offsets-g")
    await t.coordinator(tid)
    pid, epoch = _ids(await t.init(tid, "init"))
    await t.offset_commit(tid, pid, epoch, group, topic, 5, "TxnOffsetCommit v3 before AddOffsetsToTxn")
    await t.add_offsets(tid, pid, epoch, group, "AddOffsetsToTxn v0")
    await t.offset_commit(tid, pid, epoch, group, topic, 5, "TxnOffsetCommit v3")
    await t.offset_commit(tid, pid, epoch + 1, group, topic, 5, "TxnOffsetCommit v3 at a wrong epoch")
    await t.call(ApiKey.OFFSET_FETCH, 7, _fetch(group, topic, True), "OffsetFetch require_stable while pending")
    await t.call(ApiKey.OFFSET_FETCH, 7, _fetch(group, topic, False), "OffsetFetch while pending")
    await t.end(tid, pid, epoch, True, "commit")
    stable = _fetch(group, topic, True)
    await t.settled(ApiKey.OFFSET_FETCH, 7, stable, "OffsetFetch require_stable once committed", _unstable)
    await t.add_offsets(tid, pid, epoch, group, "AddOffsetsToTxn v3", 3)
    await t.offset_commit(tid, pid, epoch, group, topic, 9, "TxnOffsetCommit v4", 4)
    await t.offset_commit(tid, pid, epoch + 1, group, topic, 9, "TxnOffsetCommit v4 at a wrong epoch", 4)
    await t.end(tid, pid, epoch, False, "abort", 4)
    await t.settled(ApiKey.OFFSET_FETCH, 7, stable, "OffsetFetch require_stable once aborted", _unstable)


@scenario("#16 Produce v12 KIP-890", settings=TXN_VERIFICATION_SETTINGS)
async def txn_produce_v12_adds_the_partition_itself(s: Session) -> None:
    """KIP-890 part 2: a transactional Produce v12+ adds its partition to the producer's transaction itself (no
    AddPartitionsToTxn), where v11 is refused; an old epoch and an unknown producer id are refused; the transaction
    then ends with an EndTxn of transaction version 0/1 and its records are committed. On brokers of its own: Kafka
    answers the v11 refusal in the mode of whichever Produce opened its batch of verifications
    (`TXN_VERIFICATION_SETTINGS`)."""
    t = Txns(s, await s.connect("txn-v12"))
    topic = await _topic(s, t, "txn-v12-t", 3)
    tid = s.name("txn-v12")
    await t.coordinator(tid)
    pid, epoch = _ids(await t.init(tid, "init"))
    await t.produce(tid, pid, epoch, topic, 0, 0, "v11 produce to a partition never added", version=11)
    await t.produce(tid, pid, epoch, topic, 0, 0, "v12 produce to a partition never added", version=12)
    await t.produce(tid, pid, epoch, topic, 1, 0, "v13-less: v12 produce to another partition", version=12)
    await t.produce(tid, pid, epoch - 1, topic, 2, 0, "v12 produce at an old epoch", version=12)
    await t.produce(tid, pid + 1000, epoch, topic, 2, 0, "v12 produce by an unknown producer id", version=12)
    await t.describe([tid], "described: Ongoing with both partitions")
    await t.end(tid, pid, epoch, True, "v4 commit", 4)
    await t.settled(
        ApiKey.DESCRIBE_TRANSACTIONS,
        0,
        DescribeTransactionsRequest(transactional_ids=[tid]),
        "once complete",
        lambda r: any(state.transaction_state.startswith("Prepare") for state in r.transaction_states),
    )


async def _topic_id(t: Txns, topic: str) -> uuid.UUID:
    described = await ask(t.conn, ApiKey.METADATA, 12, MetadataRequest(topics=[MetadataRequestTopic(name=topic)]))
    return described.topics[0].topic_id if described is not None else uuid.UUID(int=0)


@scenario("#16 TxnOffsetCommit v4-6 KIP-890")
async def txn_offset_commit_newest_versions(s: Session) -> None:
    """TxnOffsetCommit v4 before AddOffsetsToTxn (KIP-890 part 1's generic error); v5 adds the group's offsets
    partition to the transaction itself (part 2), then v6 names topics by id (an unknown id is UNKNOWN_TOPIC_ID); a
    wrong epoch; the transaction commits with an EndTxn of transaction version 0/1 and the offsets become stable."""
    t = Txns(s, await s.connect("txn-offsets-new"))
    topic = await _topic(s, t, "txn-offsets-new-t", 1)
    topic_id = await _topic_id(t, topic)
    tid, group = s.name("txn-offsets-new"), s.name("txn-offsets-new-g")
    await t.coordinator(tid)
    pid, epoch = _ids(await t.init(tid, "init"))
    await t.offset_commit(tid, pid, epoch, group, topic, 5, "v4 before AddOffsetsToTxn", 4)
    await t.offset_commit(tid, pid, epoch, group, topic, 5, "v5 before AddOffsetsToTxn", 5)
    await t.describe([tid], "described: Ongoing with the group's offsets partition")
    await t.offset_commit(tid, pid, epoch, group, topic, 6, "v6 by topic id", 6, topic_id)
    await t.offset_commit(tid, pid, epoch, group, topic, 6, "v6 by an unknown topic id", 6, uuid.uuid4())
    await t.offset_commit(tid, pid, epoch + 1, group, topic, 7, "v5 at a wrong epoch", 5)
    await t.end(tid, pid, epoch, True, "v4 commit", 4)
    await t.settled(ApiKey.OFFSET_FETCH, 7, _fetch(group, topic, True), "OffsetFetch require_stable", _unstable)


async def _complete(t: Txns, tid: str, step: str) -> None:
    """DescribeTransactions until the transaction's markers are written (no Prepare* state left)."""
    await t.settled(
        ApiKey.DESCRIBE_TRANSACTIONS,
        0,
        DescribeTransactionsRequest(transactional_ids=[tid]),
        step,
        lambda r: any(state.transaction_state.startswith("Prepare") for state in r.transaction_states),
    )


def _batched_add(tid: str, pid: int, epoch: int, topic: str, partitions: list[int], verify_only: bool) -> Any:
    """AddPartitionsToTxn v4+ (the brokers' batched form) for one transaction."""
    txn = AddPartitionsToTxnTransaction(
        transactional_id=tid,
        producer_id=pid,
        producer_epoch=epoch,
        verify_only=verify_only,
        topics=[AddPartitionsToTxnTopic(name=topic, partitions=partitions)],
    )
    return AddPartitionsToTxnRequest(transactions=[txn])


@scenario("#16 EndTxn v5 AddPartitionsToTxn v5 KIP-890 transaction version 2")
async def txn_end_v5_bumps_the_epoch(s: Session) -> None:
    """Transaction version 2: EndTxn v5 answers the producer id and the epoch bumped by every outcome (an abort
    with nothing in the transaction too, a commit with nothing is INVALID_TXN_STATE); a retry with the epoch it
    sent is answered again, a stale epoch PRODUCER_FENCED, another producer id INVALID_PRODUCER_ID_MAPPING; the
    markers carry the bumped epoch, so the old epoch's writes are refused and the next transaction starts at the
    new one with sequence 0; AddPartitionsToTxn v4-5 verify (TRANSACTION_ABORTABLE when not added) and add."""
    t = Txns(s, await s.connect("txn-v5"))
    topic = await _topic(s, t, "txn-v5-t", 2)
    tid = s.name("txn-v5")
    await t.coordinator(tid)
    pid, epoch = _ids(await t.init(tid, "init"))
    await t.end(tid, pid, epoch, True, "v5 commit with nothing added", 5)
    await t.end(tid, pid, epoch, False, "v5 abort with nothing added", 5)
    epoch += 1
    await _complete(t, tid, "the empty abort completes")
    await t.end(tid, pid, epoch, True, "v5 commit after the empty abort", 5)
    await t.produce(tid, pid, epoch, topic, 0, 0, "v12 produce", version=12)
    await t.end(tid, pid, epoch - 1, True, "v5 commit at a stale epoch", 5)
    await t.end(tid, pid + 7, epoch, True, "v5 commit by another producer id", 5)
    await t.end(tid, pid, epoch, True, "v5 commit", 5)
    await _complete(t, tid, "the commit completes")
    await t.end(tid, pid, epoch, True, "v5 commit retried", 5)
    await t.end(tid, pid, epoch, False, "v5 abort retried after the commit", 5)
    await t.end(tid, pid, epoch + 1, True, "v5 commit at the new epoch with nothing added", 5)
    await t.produce(tid, pid, epoch, topic, 0, 1, "v12 produce at the old epoch", version=12)
    epoch += 1
    await t.produce(tid, pid, epoch, topic, 0, 0, "v12 produce at the new epoch, sequence 0", version=12)
    await t.describe([tid], "described: Ongoing at the new epoch")
    for version in (4, 5):
        body = _batched_add(tid, pid, epoch, topic, [1], verify_only=True)
        await t.call(ApiKey.ADD_PARTITIONS_TO_TXN, version, body, f"AddPartitionsToTxn v{version} verify-only")
    body = _batched_add(tid, pid, epoch, topic, [1], verify_only=False)
    await t.call(ApiKey.ADD_PARTITIONS_TO_TXN, 5, body, "AddPartitionsToTxn v5 add")
    await t.end(tid, pid, epoch, False, "v5 abort", 5)
    await _complete(t, tid, "the abort completes")
    await t.describe([tid], "described: CompleteAbort two epochs up")
