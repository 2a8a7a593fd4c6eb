"""Transaction marker faults: the marker channel's `intercept`, applying the marker rules of `Faults`.

Kafka's transaction coordinator sends WriteTxnMarkers to the partition leaders once a PrepareCommit/PrepareAbort
is durable, and what happens to those requests decides when a transaction completes: a leader that answers
NOT_LEADER_OR_FOLLOWER is retried after a backoff, one that answers INVALID_PRODUCER_EPOCH makes the coordinator
give up on that transaction's markers, a slow one leaves the transaction in PrepareCommit (and read_committed
readers at the last stable offset) until it answers. group-broker writes its markers itself, through
`broker.txn_service.MarkerChannel`; its `intercept` hook sees each round (one `TxnMarkers`) before it is written:

* a round with a delay rule is held back on the broker clock (`Sleeper`): with time flowing it goes `delay_ms`
  later, with a frozen clock only once `advance` moves the clock past its deadline, as injected latency does;
* a round (once released) with an error rule fails whole with that error and writes nothing; the coordinator then
  treats it as Kafka's marker completion handler does (retry after `retry_backoff_ms`, or stop for a fatal error).

Retries are rounds too: "fail the next 2 marker writes" fails the first round and its first retry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

from broker.clock import BrokerClock
from coordinator.transactions import TxnMarkers
from protocol.errors import ErrorCode
from toolkit.faults import Faults, Sleeper

log = structlog.get_logger("toolkit.marker_faults")
Go = Callable[[ErrorCode | None], None]
FaultListener = Callable[[str, TxnMarkers, dict[str, Any]], None]
"""Told of each fault applied: ("fault.markers_held" | "fault.markers_failed", the round, details)."""


def _nobody(kind: str, markers: TxnMarkers, detail: dict[str, Any]) -> None:
    """The default listener."""


@dataclass(slots=True)
class HeldRound:
    """A round of markers held back by a delay rule until the broker clock reaches `release_ms`."""

    markers: TxnMarkers
    release_ms: int


def partition_names(markers: TxnMarkers) -> list[str]:
    """The round's partitions as Kafka prints a TopicPartition: `topic-partition`."""
    return [f"{topic}-{partition}" for topic, partition in markers.partitions]


class MarkerFaults:
    """Applies the marker rules of `faults` to each round the channel is about to write (see the module doc)."""

    def __init__(self, faults: Faults, sleeper: Sleeper, clock: BrokerClock) -> None:
        self._faults = faults
        self._sleeper = sleeper
        self._clock = clock
        self._held: list[HeldRound] = []
        self.listener: FaultListener = _nobody

    def intercept(self, markers: TxnMarkers, go: Go) -> None:
        """`MarkerChannel.intercept`: hold the round back, fail it, or let it be written."""
        delay_ms = self._faults.take_marker_delay_ms(markers.transactional_id) if self._faults.marker_delays else 0
        if not delay_ms:
            self._release(markers, go)
            return
        held = HeldRound(markers, self._clock.monotonic_ms() + delay_ms)
        self._held.append(held)
        log.info(
            "faults.markers_held",
            transactional_id=markers.transactional_id,
            partitions=partition_names(markers),
            delay_ms=delay_ms,
        )
        self.listener("fault.markers_held", markers, {"delay_ms": delay_ms})

        def release() -> None:
            self._held.remove(held)
            self._release(markers, go)

        self._sleeper.call_later_ms(delay_ms, release)

    def _release(self, markers: TxnMarkers, go: Go) -> None:
        error = self._faults.take_marker_error(markers.transactional_id) if self._faults.marker_errors else None
        if error is not None:
            log.info(
                "faults.markers_failed",
                transactional_id=markers.transactional_id,
                partitions=partition_names(markers),
                error=error.name,
            )
            self.listener("fault.markers_failed", markers, {"error": error.name})
        go(error)

    def held(self, transactional_id: str | None = None) -> list[HeldRound]:
        """The rounds held back now (of one transactional id, or all), oldest first."""
        return [h for h in self._held if transactional_id is None or h.markers.transactional_id == transactional_id]
