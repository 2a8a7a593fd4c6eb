"""What every transaction operation is built with (the transaction coordinator's counterpart of `ManagerParts`)."""

from __future__ import annotations

from dataclasses import dataclass

from coordinator.config import TransactionConfig
from coordinator.partitions import Serves
from coordinator.time_register import TimeRegister
from coordinator.timer import Timer
from coordinator.transactions.cache import TransactionCache
from coordinator.transactions.events import TransactionEvents
from coordinator.transactions.log import TransactionLog
from coordinator.transactions.markers import MarkerChannel
from coordinator.transactions.metadata import TransactionMetadata
from coordinator.transactions.producer_ids import ProducerIdAllocator
from protocol.errors import ErrorCode


@dataclass(frozen=True, slots=True)
class TxnParts:
    """The shared pieces: settings, events, the purgatory, the caller's clocks, the cache, the log, the markers."""

    config: TransactionConfig
    events: TransactionEvents
    timer: Timer
    time: TimeRegister
    cache: TransactionCache
    log: TransactionLog
    markers: MarkerChannel
    producer_ids: ProducerIdAllocator


def find_producer(
    parts: TxnParts, transactional_id: str, producer_id: int, serves: Serves | None = None
) -> TransactionMetadata | ErrorCode:
    """The first checks of every request naming a producer (AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, verify):
    an empty id is INVALID_REQUEST, then the coordinator's lookup error (asked of the node `serves` describes: a
    client's request; None for the broker's own calls), then an unknown id or another producer id is
    INVALID_PRODUCER_ID_MAPPING. The epoch check differs per request and is the caller's."""
    if not transactional_id:
        return ErrorCode.INVALID_REQUEST
    found = parts.cache.lookup(transactional_id, serves)
    if isinstance(found, ErrorCode):
        return found
    if found is None or found.producer_id != producer_id:
        return ErrorCode.INVALID_PRODUCER_ID_MAPPING
    return found
