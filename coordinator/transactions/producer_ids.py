"""Where producer ids come from: one small interface for idempotent and transactional producers alike.

Kafka allocates producer ids in blocks (KRaft's AllocateProducerIds); the broker's `ProducerIdAllocator`
(broker/producer_state.py) reserves blocks of `ID_BLOCK_SIZE` on disk so ids stay unique across restarts, and it
already has the one method this interface asks for, so the same instance serves InitProducerId with and without a
transactional id. The coordinator only depends on the protocol; tests use `InMemoryProducerIdAllocator`.

An allocator that cannot hand out an id right now raises `ProducerIdsUnavailableError` with the error the request
answers (Kafka's RPC manager answers COORDINATOR_LOAD_IN_PROGRESS while its next block is on its way).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from protocol.errors import ErrorCode


class ProducerIdsUnavailableError(Exception):
    """No producer id can be allocated now; `code` is what InitProducerId answers."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(message or code.name)
        self.code = code


@runtime_checkable
class ProducerIdAllocator(Protocol):
    """Hands out producer ids, each once, ever."""

    def allocate(self) -> int:
        """A fresh producer id; raises `ProducerIdsUnavailableError` when none can be given now."""
        ...


class InMemoryProducerIdAllocator:
    """Consecutive ids from `first`, for tests and the simulator; `fail_next` makes the next allocation fail."""

    def __init__(self, first: int = 0) -> None:
        self._next = first
        self._failures: list[ErrorCode] = []

    def allocate(self) -> int:
        if self._failures:
            raise ProducerIdsUnavailableError(self._failures.pop(0))
        producer_id = self._next
        self._next += 1
        return producer_id

    def fail_next(self, code: ErrorCode, count: int = 1) -> None:
        self._failures.extend([code] * count)
