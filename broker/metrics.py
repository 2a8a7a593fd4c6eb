"""Prometheus metrics of one broker, served as text at `GET /metrics` on the control listener.

Every broker has its own `CollectorRegistry` (never the global one: tests run several brokers in one process).
Nothing on the request path touches prometheus-client: the dispatcher's observer hook bumps plain counters in
dicts (one dict update and one histogram bucket per request) and the coordinator's events (through
`broker.timeline.EventTap`) count rebalances and member changes; the registry's collector turns those into metric
families at scrape time, and reads the group and connection gauges from the coordinator and the broker then, so
they are exact rather than tracked.

    group_broker_groups{state}                          groups by state (every state, 0 included)
    group_broker_group_members{group}                   members per group
    group_broker_members                                members of all groups
    group_broker_rebalances_started_total               rebalances started (PreparingRebalance entered)
    group_broker_rebalances_total                       rebalances completed (a generation every member synced)
    group_broker_rebalance_duration_seconds             histogram: rebalance start to completion
    group_broker_member_events_total{event}             joined, left, expired, fenced, rejected, id_required
    group_broker_offset_commits_total                   OffsetCommit requests the coordinator accepted
    group_broker_requests_total{api,version,error}      requests answered, by API, version and error
    group_broker_request_duration_seconds{api}          histogram: time from decoded request to response
    group_broker_connections{listener}                  open client connections
    group_broker_connections_accepted_total             client connections accepted since start
    group_broker_offsets_partitions{state}              __consumer_offsets partitions: loading, active, failed
    group_broker_offsets_partition_skipped_ranges{partition}  damaged ranges skipped in an offsets partition
    group_broker_log_damaged_ranges_total               damaged byte ranges found in any log (each counted once)
    group_broker_quarantined_files_total                files moved to the quarantine folder (and -stray dirs)

`error` is the response's top-level error code where the API has one (Heartbeat, JoinGroup, Fetch v7+...), else
the first error inside it (per partition, per group), `NONE` when there is none, and `NO_RESPONSE` when the handler
failed and the connection was closed instead.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from broker.context import ConnectionSession, RequestContext
from broker.responses import error_codes
from broker.storage_status import OFFSETS_PARTITION_STATES, offsets_partitions
from coordinator.coordinator import GroupCoordinator
from coordinator.state import GroupState
from protocol.errors import ErrorCode
from protocol.registry import ApiKey
from storage.log_manager import LogManager

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from prometheus_client.metrics_core import Metric

# JoinGroup and long-poll Fetch are parked for seconds, hence the long tail
REQUEST_BUCKETS: tuple[float, ...] = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25)
REQUEST_BUCKETS += (0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
REBALANCE_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
NO_RESPONSE = -1000


def __getattr__(name: str) -> Any:
    """`CONTENT_TYPE`: prometheus-client's exposition content type, imported when first asked for (at a scrape):
    prometheus-client is not imported while the broker starts."""
    if name == "CONTENT_TYPE":
        from prometheus_client.exposition import CONTENT_TYPE_LATEST

        return CONTENT_TYPE_LATEST
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _new_histogram(bounds: tuple[float, ...]) -> list[float]:
    """Per-bucket (not cumulative) counts, one more for +Inf, then the sum."""
    return [0] * (len(bounds) + 1) + [0.0]


def _observe(histogram: list[float], bounds: tuple[float, ...], value: float) -> None:
    histogram[bisect_left(bounds, value)] += 1  # Prometheus buckets are `le`: value <= bound
    histogram[-1] += value


def _histogram_buckets(histogram: list[float], bounds: tuple[float, ...]) -> tuple[list[tuple[str, float]], float]:
    buckets: list[tuple[str, float]] = []
    total = 0.0
    for bound, count in zip((*(repr(b) for b in bounds), "+Inf"), histogram[:-1], strict=True):
        total += count
        buckets.append((bound, total))
    return buckets, histogram[-1]


def _first_error(response: Any) -> int:
    return next((code for code in error_codes(response) if code), 0)


def _api_name(api_key: int) -> str:
    try:
        return "".join(part.capitalize() for part in ApiKey(api_key).name.split("_"))
    except ValueError:
        return str(api_key)


def _error_name(code: int) -> str:
    if code == NO_RESPONSE:
        return "NO_RESPONSE"
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)


class BrokerMetrics:
    """A `RequestObserver`, a sink for coordinator events, and the collector of the broker's own registry."""

    def __init__(
        self,
        coordinator: GroupCoordinator,
        logs: LogManager,
        listeners: Sequence[str],
        sessions: Callable[[], Collection[ConnectionSession]],
        accepted: Callable[[], int],
    ) -> None:
        """`listeners` names every listener; `sessions` and `accepted` read the open connections and the count
        of accepted ones when scraped."""
        self._coordinator = coordinator
        self._logs = logs
        self._listeners = listeners
        self._sessions = sessions
        self._accepted = accepted
        # (api key, version, error code) -> latency histogram; its bucket counts sum to the requests answered
        self._requests: dict[tuple[int, int, int], list[float]] = {}
        self._rebalance = _new_histogram(REBALANCE_BUCKETS)
        self.rebalances_started = 0
        self.rebalances_completed = 0
        self.offset_commits = 0
        self.member_events: Counter[str] = Counter()
        self._registry: CollectorRegistry | None = None

    # -- the dispatcher's observer hook ----------------------------------------------------------------------

    def observes(self, api_key: int) -> tuple[bool, bool]:
        """Every answer (its latency and error code), never a start."""
        return False, True

    def request_started(self, ctx: RequestContext, api_key: int, request: Any) -> None:
        return

    def request_finished(
        self, ctx: RequestContext, api_key: int, request: Any, response: Any, elapsed_s: float
    ) -> None:
        code: int
        if response is None:
            code = NO_RESPONSE
        else:
            top = getattr(response, "error_code", None)
            code = top if top is not None else _first_error(response)
        key = (api_key, ctx.api_version, code)
        histogram = self._requests.get(key)
        if histogram is None:
            histogram = self._requests[key] = _new_histogram(REQUEST_BUCKETS)
        histogram[bisect_left(REQUEST_BUCKETS, elapsed_s)] += 1
        histogram[-1] += elapsed_s

    # -- the coordinator's events ----------------------------------------------------------------------------

    def on_event(self, event: str, fields: dict[str, Any]) -> None:
        if event == "offsets.committed":
            self.offset_commits += 1
        elif event.startswith("member."):
            self.member_events[event[len("member.") :]] += 1
        elif event == "rebalance.started":
            self.rebalances_started += 1
        elif event == "rebalance.completed":
            self.rebalances_completed += 1
            _observe(self._rebalance, REBALANCE_BUCKETS, fields.get("duration_ms", 0) / 1000)

    # -- scraping --------------------------------------------------------------------------------------------

    @property
    def registry(self) -> CollectorRegistry:
        """This broker's registry, made at the first scrape: prometheus-client stays off the broker's start."""
        if self._registry is None:
            from prometheus_client import CollectorRegistry

            self._registry = CollectorRegistry(auto_describe=False)
            self._registry.register(self)
        return self._registry

    def render(self) -> bytes:
        """The Prometheus text exposition (content type `CONTENT_TYPE`)."""
        from prometheus_client.exposition import generate_latest

        return generate_latest(self.registry)

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

        groups = self._coordinator.groups()
        by_state = GaugeMetricFamily("group_broker_groups", "Consumer groups by state.", labels=["state"])
        states = Counter(group.state.value for group in groups)
        for state in GroupState:
            by_state.add_metric([state.value], states.get(state.value, 0))
        yield by_state
        members = GaugeMetricFamily("group_broker_group_members", "Members of each group.", labels=["group"])
        for group in groups:
            members.add_metric([group.group_id], len(group.members))
        yield members
        yield GaugeMetricFamily(
            "group_broker_members", "Members of all groups.", value=sum(len(g.members) for g in groups)
        )
        yield CounterMetricFamily(
            "group_broker_rebalances_started", "Rebalances started.", value=self.rebalances_started
        )
        yield CounterMetricFamily(
            "group_broker_rebalances", "Rebalances completed (every member synced).", value=self.rebalances_completed
        )
        rebalance = HistogramMetricFamily(
            "group_broker_rebalance_duration_seconds", "Time from a rebalance's start to its completion."
        )
        buckets, total = _histogram_buckets(self._rebalance, REBALANCE_BUCKETS)
        rebalance.add_metric([], buckets, total)
        yield rebalance
        member_events = CounterMetricFamily(
            "group_broker_member_events", "Membership changes by kind.", labels=["event"]
        )
        for name in ("joined", "left", "expired", "fenced", "rejected", "id_required"):
            member_events.add_metric([name], self.member_events.get(name, 0))
        yield member_events
        yield CounterMetricFamily(
            "group_broker_offset_commits", "Offset commits the coordinator accepted.", value=self.offset_commits
        )
        requests = CounterMetricFamily(
            "group_broker_requests", "Requests answered, by API, version and error.", labels=["api", "version", "error"]
        )
        by_api: dict[int, list[float]] = {}
        for (api_key, version, code), histogram in sorted(self._requests.items()):
            requests.add_metric([_api_name(api_key), str(version), _error_name(code)], sum(histogram[:-1]))
            merged = by_api.setdefault(api_key, _new_histogram(REQUEST_BUCKETS))
            for i, count in enumerate(histogram):
                merged[i] += count
        yield requests
        latency = HistogramMetricFamily(
            "group_broker_request_duration_seconds",
            "Time from a decoded request to its response (parked JoinGroup and long-poll Fetch included).",
            labels=["api"],
        )
        for api_key, histogram in by_api.items():
            buckets, total = _histogram_buckets(histogram, REQUEST_BUCKETS)
            latency.add_metric([_api_name(api_key)], buckets, total)
        yield latency
        connections = GaugeMetricFamily("group_broker_connections", "Open client connections.", labels=["listener"])
        open_by_listener = Counter(session.listener for session in self._sessions())
        for name in self._listeners:
            connections.add_metric([name], open_by_listener.get(name, 0))
        yield connections
        yield CounterMetricFamily(
            "group_broker_connections_accepted",
            "Client connections accepted since start.",
            value=self._accepted(),
        )
        yield from self._storage()

    def _storage(self) -> Iterator[Metric]:
        from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily

        partitions = offsets_partitions(self._coordinator, self._logs)
        states = GaugeMetricFamily(
            "group_broker_offsets_partitions", "__consumer_offsets partitions by load state.", labels=["state"]
        )
        for state in OFFSETS_PARTITION_STATES:
            states.add_metric([state], sum(p.state == state for p in partitions))
        yield states
        skipped = GaugeMetricFamily(
            "group_broker_offsets_partition_skipped_ranges",
            "Damaged ranges skipped in each __consumer_offsets partition (only partitions with any).",
            labels=["partition"],
        )
        for p in partitions:
            if p.skipped_ranges:
                skipped.add_metric([str(p.partition)], p.skipped_ranges)
        yield skipped
        logs = self._logs
        yield CounterMetricFamily(
            "group_broker_log_damaged_ranges",
            "Damaged byte ranges found in any partition log, each counted once.",
            value=len(logs.damaged_ranges()),
        )
        yield CounterMetricFamily(
            "group_broker_quarantined_files",
            "Files (and partition directories) recovery moved aside instead of deleting.",
            value=len(logs.quarantined_files()),
        )
