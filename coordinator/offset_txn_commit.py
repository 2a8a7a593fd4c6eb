"""TxnOffsetCommit (T56-T62): a producer's consumed offsets, pending in its transaction until its marker.

Kafka 4.4 (`GroupCoordinatorService.commitTransactionalOffsets`, `OffsetMetadataManager.commitTransactionalOffset`):

* partitions the broker does not have are UNKNOWN_TOPIC_OR_PARTITION (the API layer answers them first);
* an empty group id is INVALID_GROUP_ID, an inactive coordinator COORDINATOR_NOT_AVAILABLE, and the partition
  state NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS (COORDINATOR_NOT_AVAILABLE below v2, KafkaApis' remap);
* the transaction coordinator checks that the producer's transaction includes the group's partition
  (AddOffsetsToTxn; Kafka's transaction verification). That check is a seam (`offset_base.TransactionVerifier`)
  that accepts everything unless the broker wires the transaction coordinator in; its error answers every
  partition;
* the group-level KIP-447 checks (`offset_commit_base.py`, with isTransactional): no REBALANCE_IN_PROGRESS, a
  producer sending no member is accepted, STALE_MEMBER_EPOCH is ILLEGAL_GENERATION below v6, an unknown group
  with a generation is ILLEGAL_GENERATION below v6 (GROUP_ID_NOT_FOUND from v6); the session is not touched;
* oversized metadata fails its partition alone.

The records go to the group's partition as one transactional batch of the producer (T57). Once durable they are
pending in the group's offsets for that producer (T62), invisible to OffsetFetch until the producer's marker
(`offset_txn_marker.py`); while being written, require_stable already answers UNSTABLE_OFFSET_COMMIT for them.
"""

from __future__ import annotations

from coordinator.consumer_group.group import ConsumerGroup
from coordinator.context import RequestContext
from coordinator.errors import GroupError, append_error_to_response
from coordinator.group import ClassicGroup
from coordinator.hashing import partition_for
from coordinator.offset_base import TxnOffsetVerification
from coordinator.offset_commit_base import CommitBase, CommitIdentity, answered_topics
from coordinator.offsets import GroupOffsets
from coordinator.records import TransactionalProducer
from coordinator.result import CoordinatorResult
from protocol.errors import ErrorCode
from protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
)

NEW_ERRORS_VERSION = 6
"""TxnOffsetCommit v6+ gets GROUP_ID_NOT_FOUND and STALE_MEMBER_EPOCH; older versions ILLEGAL_GENERATION."""
LOAD_IN_PROGRESS_VERSION = 2
"""Below v2 KafkaApis answers COORDINATOR_LOAD_IN_PROGRESS as COORDINATOR_NOT_AVAILABLE."""


def _answer(index: int) -> TxnOffsetCommitResponsePartition:
    return TxnOffsetCommitResponsePartition(partition_index=index)


def _topic(name: str) -> TxnOffsetCommitResponseTopic:
    return TxnOffsetCommitResponseTopic(name=name)


def _version_error(error: ErrorCode, api_version: int) -> ErrorCode:
    if api_version < NEW_ERRORS_VERSION and error == ErrorCode.STALE_MEMBER_EPOCH:
        return ErrorCode.ILLEGAL_GENERATION
    if api_version < LOAD_IN_PROGRESS_VERSION and error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    return error


class TxnOffsetCommitMixin(CommitBase):
    """TxnOffsetCommit."""

    def txn_offset_commit(
        self, ctx: RequestContext, request: TxnOffsetCommitRequest
    ) -> CoordinatorResult[TxnOffsetCommitResponse]:
        """Handle a TxnOffsetCommit: the transactional batch to write, and the response once it is durable."""
        slots, rejected = self._request_slots(request.topics, _answer)
        response = TxnOffsetCommitResponse(topics=answered_topics(slots, rejected, _topic))
        if not slots:  # KafkaApis does not ask the coordinator: no group is created or validated
            return CoordinatorResult.of(response)
        who = CommitIdentity(
            request.group_id, request.member_id, request.group_instance_id, request.generation_id_or_member_epoch
        )
        group: ClassicGroup | ConsumerGroup | None = None
        try:
            group = self._txn_commit_group(ctx.api_version, request, who)
        except GroupError as e:
            for slot in slots:
                slot.answer.error_code = _version_error(e.code, ctx.api_version)
            return CoordinatorResult.of(response)

        writes, records = self._prepare_writes(group.group_id, slots)
        if not records:
            return CoordinatorResult.of(response)
        offsets = group.offsets
        for write in writes:
            write.position = offsets.add_pending(write.topic, write.partition)
        producer_id = request.producer_id
        group_id = group.group_id

        def durable(error: ErrorCode) -> None:
            alive = self._holds_offsets(group_id, offsets)
            for write in writes:
                pending = write.value if error == ErrorCode.NONE and alive else None
                offsets.finish_transactional(write.topic, write.partition, write.position, producer_id, pending)
                write.answer.error_code = _version_error(error, ctx.api_version)
            if error == ErrorCode.NONE and alive:
                self._open_transactions.add(group.partition, producer_id, group_id)
                self._events.txn_offsets_pending(
                    group_id, request.transactional_id, producer_id, request.producer_epoch, len(writes)
                )

        producer = TransactionalProducer(producer_id, request.producer_epoch)
        return CoordinatorResult(records, response, group.partition, "txn offset commit", durable, producer=producer)

    def _txn_commit_group(
        self, api_version: int, request: TxnOffsetCommitRequest, who: CommitIdentity
    ) -> ClassicGroup | ConsumerGroup:
        """The service-level checks, the transaction verification, then the group checks; raises GroupError."""
        error = self._gate(request.group_id, allow_empty_id=False)
        if error is None:
            verification = TxnOffsetVerification(
                request.transactional_id,
                request.producer_id,
                request.producer_epoch,
                request.group_id,
                partition_for(request.group_id, self._config.offsets_topic_num_partitions),
                api_version,
            )
            verified = self._verify_transaction(verification)
            if verified != ErrorCode.NONE:
                error = append_error_to_response(verified)
        if error is not None:
            raise GroupError(error)
        return self._commit_group(
            who,
            api_version,
            api="TxnOffsetCommit",
            transactional=True,
            group_id_not_found_version=NEW_ERRORS_VERSION,
        )

    def _holds_offsets(self, group_id: str, offsets: GroupOffsets) -> bool:
        """Whether `offsets` still belong to the live group of that id (it may have been deleted or unloaded since
        the write began; an online migration hands the same offsets to the group of the other type)."""
        holder = self._live_group(group_id)
        return holder is not None and holder.offsets is offsets
