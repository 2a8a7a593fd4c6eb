"""AddPartitionsToTxn as a request: the client form (v0-3, one transaction) and the batched form (v4+, several
transactions, `VerifyOnly`), with KafkaApis' per-partition pre-checks (T23, T24).

Before the coordinator is asked, every partition is checked: in the client form an internal topic
(`__consumer_offsets`, `__transaction_state`, `__share_group_state`) counts as not authorised,
TOPIC_AUTHORIZATION_FAILED (the batched form comes from brokers and may name them); a partition the broker does not
know is UNKNOWN_TOPIC_OR_PARTITION. If any partition fails, the others answer OPERATION_NOT_ATTEMPTED and the
coordinator is not called. Otherwise the transaction's partitions are added (one error for all of them, with the
version's PRODUCER_FENCED remapping) or, with `VerifyOnly`, verified per partition. ACLs are not implemented, so
the authorisation checks Kafka makes on the transactional id and the cluster always pass.

In a several-node cluster the asking node's `serves` goes with every transaction: a transaction whose
`__transaction_state` partition that node does not lead answers NOT_COORDINATOR for each of its partitions (the
client form's only transaction, or that one transaction of a batch).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from coordinator.offset_base import KnownPartition
from coordinator.offsets import TopicPartition
from coordinator.partitions import Serves
from coordinator.reply import Reply
from coordinator.transactions.add_partitions import add_partitions, verify_partitions
from coordinator.transactions.parts import TxnParts
from coordinator.transactions.versions import for_version, transaction_version_for
from protocol.errors import ErrorCode
from protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnResult,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTopicResult,
    AddPartitionsToTxnTransaction,
)
from protocol.messages.api_table import ApiKey

#: Kafka's `Topic.isInternal` (Kafka 4.4's `Topic.INTERNAL_TOPICS`).
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
BATCHED_SINCE = 4


def _partitions(topics: list[AddPartitionsToTxnTopic]) -> list[TopicPartition]:
    """The request's partitions in request order, each once."""
    return list(dict.fromkeys((t.name, p) for t in topics for p in t.partitions))


def _result(transactional_id: str, errors: dict[TopicPartition, ErrorCode]) -> AddPartitionsToTxnResult:
    topics: dict[str, list[AddPartitionsToTxnPartitionResult]] = {}
    for (topic, partition), error in errors.items():
        topics.setdefault(topic, []).append(
            AddPartitionsToTxnPartitionResult(partition_index=partition, partition_error_code=error)
        )
    return AddPartitionsToTxnResult(
        transactional_id=transactional_id,
        topic_results=[AddPartitionsToTxnTopicResult(name=t, results_by_partition=ps) for t, ps in topics.items()],
    )


def _precheck(
    partitions: list[TopicPartition], version: int, known_partition: KnownPartition | None
) -> dict[TopicPartition, ErrorCode] | None:
    """T23: per-partition errors if any partition fails its pre-check (the rest not attempted), else None."""
    errors: dict[TopicPartition, ErrorCode] = {}
    for topic, partition in partitions:
        if version < BATCHED_SINCE and topic in INTERNAL_TOPICS:
            errors[(topic, partition)] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif known_partition is not None and not known_partition(topic, partition):
            errors[(topic, partition)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if not errors:
        return None
    return {tp: errors.get(tp, ErrorCode.OPERATION_NOT_ATTEMPTED) for tp in partitions}


def _one_transaction(
    parts: TxnParts,
    known_partition: KnownPartition | None,
    version: int,
    txn: AddPartitionsToTxnTransaction,
    done: Callable[[AddPartitionsToTxnResult], None],
    serves: Serves | None,
) -> None:
    partitions = _partitions(txn.topics)
    failed = _precheck(partitions, version, known_partition)
    if failed is not None:
        done(_result(txn.transactional_id, failed))
    elif txn.verify_only:
        verified = verify_partitions(
            parts, txn.transactional_id, txn.producer_id, txn.producer_epoch, partitions, serves
        )
        done(_result(txn.transactional_id, verified))
    else:

        def added(error: ErrorCode) -> None:
            error = for_version(ApiKey.ADD_PARTITIONS_TO_TXN, version, error)
            done(_result(txn.transactional_id, dict.fromkeys(partitions, error)))

        add_partitions(
            parts,
            txn.transactional_id,
            txn.producer_id,
            txn.producer_epoch,
            partitions,
            added,
            client_transaction_version=transaction_version_for(ApiKey.ADD_PARTITIONS_TO_TXN, version),
            serves=serves,
        )


def handle(
    parts: TxnParts,
    known_partition: KnownPartition | None,
    version: int,
    request: AddPartitionsToTxnRequest,
    serves: Serves | None = None,
) -> Reply[AddPartitionsToTxnResponse]:
    """The response, completed once every transaction's partitions are added (or refused); `serves`: the asking
    node's."""
    reply: Reply[AddPartitionsToTxnResponse] = Reply()
    if version < BATCHED_SINCE:
        client = AddPartitionsToTxnTransaction(
            transactional_id=request.v3_and_below_transactional_id,
            producer_id=request.v3_and_below_producer_id,
            producer_epoch=request.v3_and_below_producer_epoch,
            topics=request.v3_and_below_topics,
        )

        def single(result: AddPartitionsToTxnResult) -> None:
            reply.complete(AddPartitionsToTxnResponse(results_by_topic_v3_and_below=result.topic_results))

        _one_transaction(parts, known_partition, version, client, single, serves)
        return reply
    results: list[AddPartitionsToTxnResult | None] = [None] * len(request.transactions)

    def one_done(index: int, result: AddPartitionsToTxnResult) -> None:
        results[index] = result
        if all(r is not None for r in results):
            reply.complete(AddPartitionsToTxnResponse(results_by_transaction=[r for r in results if r is not None]))

    if not request.transactions:
        reply.complete(AddPartitionsToTxnResponse())
    for index, txn in enumerate(request.transactions):
        _one_transaction(parts, known_partition, version, txn, partial(one_done, index), serves)
    return reply
