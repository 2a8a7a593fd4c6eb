"""The transaction timeline of each transactional id: the producer's requests, the coordinator's transitions and
the markers, side by side with the partitions they touch.

When a transaction hangs or aborts the questions are "which state is it stuck in, since when, on which
partitions' markers?" and "what did the producer send, and what did it get back?". The timeline keeps, per
transactional id:

* the producer's transaction requests as answered: InitProducerId (the producer id and epoch it got),
  AddPartitionsToTxn, AddOffsetsToTxn, EndTxn (COMMIT or ABORT), TxnOffsetCommit (group and partitions), each with
  the error answered;
* the coordinator's events (`broker.txn_service.TransactionService.events`): every state transition (`txn.state`,
  with the producer id and epoch and the partitions in the transaction at that moment), fencing and timeouts
  (`txn.fenced`, `txn.timed_out`), markers handed out, failed or abandoned (`txn.markers_*`), expiry;
* each round of markers as it was answered (`markers.written`, through the marker channel's observers), and the
  toolkit's own marker faults (`fault.markers_held`, `fault.markers_failed`).

It is always on and bounded like the group timeline: at most `timeline.events.per.group` events per id and
`timeline.max.groups` ids, the id whose last event is oldest dropped first. Times are the broker clock's monotonic
milliseconds. A view (`view`) adds the id's live state (`toolkit/transactions.py`), the state bands the renderers
draw and every partition the id's transactions touched; `text.render_transaction_text` and
`txn_html.render_transaction_html` render it, as the group timeline's renderers render a group's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from broker.context import RequestContext
from broker.responses import error_codes
from coordinator.offsets import TopicPartition
from coordinator.transactions import TransactionMetadata, TxnMarkers
from protocol.errors import ErrorCode
from protocol.registry import ApiKey
from toolkit.timeline.bounded import BoundedLogs, EventLog

TXN_APIS = {
    int(ApiKey.INIT_PRODUCER_ID): "InitProducerId",
    int(ApiKey.ADD_PARTITIONS_TO_TXN): "AddPartitionsToTxn",
    int(ApiKey.ADD_OFFSETS_TO_TXN): "AddOffsetsToTxn",
    int(ApiKey.END_TXN): "EndTxn",
    int(ApiKey.TXN_OFFSET_COMMIT): "TxnOffsetCommit",
}
OFFSETS_APIS = frozenset({"AddOffsetsToTxn", "TxnOffsetCommit"})
"""The requests that tie a transaction to a consumer group."""
NO_RESPONSE = "NO_RESPONSE"
"""The handler raised or was cancelled: the client got no answer."""
SKIPPED_EVENTS = frozenset({"txn.illegal_state"})
"""Coordinator events with a transactional id that are not part of a transaction's story (a bug report)."""


def names(partitions: Iterable[TopicPartition]) -> list[str]:
    """Partitions as Kafka prints a TopicPartition (`topic-partition`), sorted."""
    return [f"{topic}-{partition}" for topic, partition in sorted(partitions)]


@dataclass(slots=True)
class TxnEvent:
    at_ms: int
    kind: str  # a request's API name, a coordinator event name, markers.written or fault.*
    producer_id: int | None = None
    producer_epoch: int | None = None
    client_id: str | None = None
    error: str | None = None
    partitions: list[str] = field(default_factory=list)
    detail: dict[str, Any] | None = None
    principal: str | None = None  # who sent it and on which listener (requests only)
    listener: str | None = None
    node: int | None = None  # the node that served it (a several-node cluster, `cluster.nodes`; requests only)

    def json(self, origin_ms: int) -> dict[str, Any]:
        return {
            "at_ms": self.at_ms,
            "t_ms": self.at_ms - origin_ms,
            "kind": self.kind,
            "producer_id": self.producer_id,
            "producer_epoch": self.producer_epoch,
            "client_id": self.client_id,
            "error": self.error,
            "partitions": self.partitions,
            "detail": self.detail,
            "principal": self.principal,
            "listener": self.listener,
            "node": self.node,
        }


def _error_name(code: int) -> str | None:
    if code == ErrorCode.NONE:
        return None
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)


def _first_error(codes: Iterable[int]) -> str | None:
    return next((name for code in codes if (name := _error_name(code)) is not None), None)


def _topic_partitions(topics: Iterable[Any], partitions_of: Callable[[Any], Iterable[int]]) -> list[str]:
    return names((t.name, p) for t in topics for p in partitions_of(t))


@dataclass(frozen=True, slots=True)
class _Request:
    """What one request says about one transactional id."""

    transactional_id: str
    producer_id: int | None
    producer_epoch: int | None
    error: str | None
    partitions: list[str]
    detail: dict[str, Any] | None


def _requests(api_key: int, request: Any, response: Any) -> list[_Request]:
    """The transactional ids a transaction request is about, each with what it asked and was answered."""
    answered = response is not None
    top = _first_error(error_codes(response)) if answered else NO_RESPONSE
    if api_key == ApiKey.INIT_PRODUCER_ID:
        if request.transactional_id is None:  # an idempotent producer: no transaction
            return []
        ok = answered and response.error_code == ErrorCode.NONE
        return [
            _Request(
                request.transactional_id,
                response.producer_id if ok else None,
                response.producer_epoch if ok else None,
                top,
                [],
                {"transaction_timeout_ms": request.transaction_timeout_ms},
            )
        ]
    if api_key == ApiKey.ADD_PARTITIONS_TO_TXN:
        return _add_partitions(request, response, top)
    if api_key == ApiKey.ADD_OFFSETS_TO_TXN:
        detail: dict[str, Any] = {"group_id": request.group_id}
    elif api_key == ApiKey.END_TXN:
        detail = {"result": "COMMIT" if request.committed else "ABORT"}
    else:  # TxnOffsetCommit
        detail = {"group_id": request.group_id}
    partitions = (
        _topic_partitions(request.topics, lambda t: (p.partition_index for p in t.partitions))
        if api_key == ApiKey.TXN_OFFSET_COMMIT
        else []
    )
    return [_Request(request.transactional_id, request.producer_id, request.producer_epoch, top, partitions, detail)]


def _add_partitions(request: Any, response: Any, top: str | None) -> list[_Request]:
    """AddPartitionsToTxn: v0-3 name one transaction, v4+ a batch (each with its own results, maybe VerifyOnly)."""

    def partition_error(results: Iterable[Any]) -> str | None:
        return _first_error(p.partition_error_code for t in results for p in t.results_by_partition)

    if request.v3_and_below_transactional_id:
        error = top or (partition_error(response.results_by_topic_v3_and_below) if response is not None else None)
        return [
            _Request(
                request.v3_and_below_transactional_id,
                request.v3_and_below_producer_id,
                request.v3_and_below_producer_epoch,
                error,
                _topic_partitions(request.v3_and_below_topics, lambda t: t.partitions),
                None,
            )
        ]
    results = {r.transactional_id: r for r in response.results_by_transaction} if response is not None else {}
    found = []
    for txn in request.transactions:
        result = results.get(txn.transactional_id)
        error = top or (partition_error(result.topic_results) if result is not None else None)
        found.append(
            _Request(
                txn.transactional_id,
                txn.producer_id,
                txn.producer_epoch,
                error,
                _topic_partitions(txn.topics, lambda t: t.partitions),
                {"verify_only": True} if txn.verify_only else None,
            )
        )
    return found


class TransactionTimeline:
    """The per-id event logs: a request observer for the dispatcher, a sink for the transaction coordinator's
    `EventTap`, an observer of the marker channel and the listener of the marker faults."""

    def __init__(
        self,
        now_ms: Callable[[], int],
        lookup: Callable[[str], TransactionMetadata | None],
        *,
        max_transactions: int = 1000,
        events_per_transaction: int = 500,
    ) -> None:
        self._now_ms = now_ms
        self._lookup = lookup
        self._logs: BoundedLogs[EventLog[TxnEvent]] = BoundedLogs(
            max_transactions, lambda: EventLog(events_per_transaction)
        )

    @property
    def dropped_transactions(self) -> int:
        return self._logs.dropped_keys

    def _append(self, transactional_id: str, event: TxnEvent) -> None:
        self._logs.touch(transactional_id).append(event)

    # -- the dispatcher's observer hook ----------------------------------------------------------------------

    def observes(self, api_key: int) -> tuple[bool, bool]:
        """Only the transaction APIs' answers."""
        return False, api_key in TXN_APIS

    def request_started(self, ctx: RequestContext, api_key: int, request: Any) -> None:
        return

    def request_finished(
        self, ctx: RequestContext, api_key: int, request: Any, response: Any, elapsed_s: float
    ) -> None:
        kind = TXN_APIS.get(api_key)
        if kind is None:
            return
        now = self._now_ms()
        session = ctx.session
        for r in _requests(api_key, request, response):
            event = TxnEvent(now, kind, r.producer_id, r.producer_epoch, ctx.client_id, r.error, r.partitions, r.detail)
            event.principal, event.listener, event.node = session.principal, session.listener, session.node_id
            self._append(r.transactional_id, event)

    # -- the transaction coordinator's events (via its EventTap) ----------------------------------------------

    def on_event(self, event: str, fields: dict[str, Any]) -> None:
        transactional_id = fields.get("transactional_id")
        if transactional_id is None or event in SKIPPED_EVENTS:
            return
        partitions = fields.get("partitions")
        if event == "txn.state":  # the event counts them; the timeline wants their names
            txn = self._lookup(transactional_id)
            partitions = names(txn.partitions) if txn is not None else []
        elif partitions is not None:
            partitions = names(partitions)
        detail = {
            k: v
            for k, v in fields.items()
            if k not in ("transactional_id", "producer_id", "producer_epoch", "partitions", "error")
        }
        self._append(
            transactional_id,
            TxnEvent(
                self._now_ms(),
                event,
                fields.get("producer_id"),
                fields.get("producer_epoch"),
                None,
                fields.get("error"),
                partitions or [],
                detail or None,
            ),
        )

    # -- markers -----------------------------------------------------------------------------------------------

    def on_markers(self, markers: TxnMarkers, errors: Mapping[TopicPartition, ErrorCode]) -> None:
        """A round of markers was answered: record the partitions written (failures are the coordinator's
        `txn.markers_failed` / `txn.markers_abandoned`)."""
        written = [tp for tp in markers.partitions if tp not in errors]
        if written:
            self._append(
                markers.transactional_id,
                TxnEvent(
                    self._now_ms(),
                    "markers.written",
                    markers.producer_id,
                    markers.producer_epoch,
                    partitions=names(written),
                    detail={"result": markers.result.name},
                ),
            )

    def on_fault(self, kind: str, markers: TxnMarkers, detail: dict[str, Any]) -> None:
        """A marker fault was applied to a round (`fault.markers_held`, `fault.markers_failed`)."""
        self._append(
            markers.transactional_id,
            TxnEvent(
                self._now_ms(),
                kind,
                markers.producer_id,
                markers.producer_epoch,
                error=detail.get("error"),
                partitions=names(markers.partitions),
                detail={"result": markers.result.name, **{k: v for k, v in detail.items() if k != "error"}},
            ),
        )

    # -- reading -----------------------------------------------------------------------------------------------

    def transactional_ids(self) -> list[str]:
        return self._logs.keys()

    def transactional_ids_for_group(self, group_id: str) -> list[str]:
        """The ids that sent offsets of this group in a transaction (AddOffsetsToTxn, TxnOffsetCommit): what the
        group's timeline lists beside it (a consume-transform-produce pipeline's transactions)."""
        return sorted(
            transactional_id
            for transactional_id, log in self._logs.items()
            if any(e.kind in OFFSETS_APIS and (e.detail or {}).get("group_id") == group_id for e in log.events)
        )

    def events(self, transactional_id: str) -> list[TxnEvent]:
        log = self._logs.get(transactional_id)
        return list(log.events) if log is not None else []

    def view(
        self, transactional_id: str, live: dict[str, Any] | None, now_ms: int, wall_offset_ms: int
    ) -> dict[str, Any] | None:
        """The JSON view both renderers work from; None when neither the timeline nor the coordinator knows the id.
        `live` is the id's snapshot now (`toolkit/transactions.py`), None when the coordinator has no such id."""
        log = self._logs.get(transactional_id)
        if log is None and live is None:
            return None
        events = list(log.events) if log is not None else []
        origin = min((e.at_ms for e in events), default=now_ms)
        return {
            "transactional_id": transactional_id,
            "now_ms": now_ms,
            "origin_ms": origin,
            "wall_offset_ms": wall_offset_ms,
            "dropped_events": log.dropped if log is not None else 0,
            "live": live,
            "states": state_bands(events, live, origin, now_ms),
            "partitions": sorted(
                {p for e in events for p in e.partitions} | set(live["partitions"] if live is not None else [])
            ),
            "events": [e.json(origin) for e in events],
        }


def state_bands(
    events: list[TxnEvent], live: dict[str, Any] | None, origin_ms: int, now_ms: int
) -> list[dict[str, Any]]:
    """The id's states over time, from its `txn.state` transitions: [{state, start_ms, end_ms, producer_epoch}]
    (the last band ends now)."""
    changes = [e for e in events if e.kind == "txn.state" and e.detail]
    bands: list[dict[str, Any]] = []
    if changes:
        first = changes[0]
        assert first.detail is not None
        bands.append({"state": first.detail.get("old_state"), "start_ms": origin_ms, "producer_epoch": None})
    elif live is not None:
        bands.append({"state": live["state"], "start_ms": origin_ms, "producer_epoch": live["producer_epoch"]})
    for change in changes:
        assert change.detail is not None
        bands.append(
            {"state": change.detail.get("new_state"), "start_ms": change.at_ms, "producer_epoch": change.producer_epoch}
        )
    if not bands:  # no transition recorded and the coordinator does not know the id
        return []
    ends = [b["start_ms"] for b in bands[1:]] + [now_ms]
    for band, end_ms in zip(bands, ends, strict=True):
        band["end_ms"] = end_ms
    return bands  # a state that lasted no time (written and completed within a millisecond) still counts
