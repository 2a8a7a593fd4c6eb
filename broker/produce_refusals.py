"""The refusals of a Produce request as a whole, which Kafka makes before it looks at any partition's append.

Two of them, in Kafka's order:

* transactional records without a transactional id (they need WRITE on one): TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
  KafkaApis.handleProduceRequest;
* transactional batches of more than one producer, counted as (producer id, epoch) pairs over the partitions that
  passed KafkaApis' own checks (a known topic and partition, one readable v2 batch): INVALID_PRODUCER_ID_MAPPING
  "Transactional records contained more than one producer ID", ReplicaManager.handleProduceAppend. Kafka throws it
  before the transaction is verified, before the acks are checked and before anything is written.

Either way every partition the request names is answered with the error (ProduceRequest.getErrorResponse: offsets
and times -1, the message where Kafka keeps one), and an acks=0 request, which gets no answer, loses its connection.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from broker.connection import CloseConnection
from protocol.errors import DecodeError, ErrorCode
from protocol.messages.produce import PartitionProduceResponse, ProduceRequest, ProduceResponse, TopicProduceResponse
from protocol.records import NO_PRODUCER_ID, BatchHeader, peek_batch_header

__all__ = ["TWO_PRODUCERS_MESSAGE", "Refusal", "first_batch", "refusal_of", "refused"]

TWO_PRODUCERS_MESSAGE = "Transactional records contained more than one producer ID"
NO_OFFSET = -1


@dataclass(frozen=True, slots=True)
class Refusal:
    """The error every partition of a refused request is answered with."""

    error_code: ErrorCode
    message: str | None = None


def first_batch(records: bytes | None) -> BatchHeader | None:
    """The header of a partition's record set, None when there is none or it is unreadable (the append answers)."""
    if not records:
        return None
    try:
        return peek_batch_header(records, 0)
    except DecodeError:
        return None


def refusal_of(request: ProduceRequest, known: Callable[[str, int], bool]) -> Refusal | None:
    """The refusal of ``request`` as a whole, or None to go on partition by partition. Topic names are already
    resolved (v13's ids); ``known(topic, partition)`` says whether the partition exists."""
    headers = [
        (topic.name, data.index, first_batch(data.records), len(data.records or b""))
        for topic in request.topic_data
        for data in topic.partition_data
    ]
    if request.transactional_id is None and any(h is not None and h.is_transactional for _, _, h, _ in headers):
        return Refusal(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    producers = {
        (header.producer_id, header.producer_epoch)
        for topic, partition, header, size in headers
        if header is not None
        and header.size == size  # ProduceRequest.validateRecords: exactly one batch, else the partition is refused
        and header.is_transactional
        and header.producer_id > NO_PRODUCER_ID  # RecordBatch.hasProducerId
        and topic
        and known(topic, partition)
    }
    if len(producers) > 1:
        return Refusal(ErrorCode.INVALID_PRODUCER_ID_MAPPING, TWO_PRODUCERS_MESSAGE)
    return None


def refused(request: ProduceRequest, refusal: Refusal, *, by_id: bool) -> ProduceResponse:
    """Every partition of ``request`` answered with ``refusal`` (topics by id from v13, named before); raises
    CloseConnection for acks=0, which Kafka answers by closing the connection."""
    if request.acks == 0:
        raise CloseConnection(f"acks=0 produce refused: {refusal.error_code.name}")
    return ProduceResponse(
        responses=[
            TopicProduceResponse(
                name="" if by_id else topic.name,
                topic_id=topic.topic_id,
                partition_responses=[
                    PartitionProduceResponse(
                        index=data.index,
                        error_code=refusal.error_code,
                        base_offset=NO_OFFSET,
                        log_append_time_ms=NO_OFFSET,
                        log_start_offset=NO_OFFSET,
                        error_message=refusal.message,
                    )
                    for data in topic.partition_data
                ],
            )
            for topic in request.topic_data
        ]
    )
