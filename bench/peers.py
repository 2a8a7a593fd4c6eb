"""The brokers `bench_broker` measures side by side, and the table that shows one column per broker.

Four peers, in column order: our broker, librdkafka's mock cluster, the reference Apache Kafka broker
(tests/reference/kafka.py's `ReferenceKafka`, run by `bench.kafka_peer`) and franz-go's kfake (a tiny Go main under
bench/kfake/, built by `make bench-kfake`). A peer that cannot run on this machine (no mock_cluster.py, no Java or
no fetched Kafka, no Go-built kfake binary) stays in the table with "n/a (why)" in its column, so `make bench`
prints the same tables everywhere and never fails because a peer is missing. Nothing here imports the tests
package: the Kafka peer is imported only when it is started.

Every table prints which settings each peer runs with (`Peer.settings`), since the figures mean little without them.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import shutil
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from bench.wire_load import ROOT, Connection, ServerProcess, create_topic, fmt, ratio, run_async, topic_partitions

KFAKE_DIR = ROOT / "bench" / "kfake"
KFAKE_BIN = KFAKE_DIR / "kfake-bin"
#: Consumer-protocol members are handed a 100 ms heartbeat interval (what the benchmark's members probe at).
CONSUMER_HEARTBEAT_SETTINGS = {
    "group.consumer.min.heartbeat.interval.ms": "100",
    "group.consumer.heartbeat.interval.ms": "100",
}
OURS_SETTINGS = {"group.initial.rebalance.delay.ms": "0", **CONSUMER_HEARTBEAT_SETTINGS}
OURS_READY_EVENT = '"offsets.loaded"'
#: Partitions of a topic kfake auto-creates; the benchmarks create theirs explicitly where CreateTopics exists.
KFAKE_PARTITIONS = 6
#: Per peer and measurement: a peer that stops answering fails after this long instead of hanging the benchmark.
PEER_BUDGET_S = 300.0
NOT_SERVED = "not served"
NOTE_LOAD = "one run on a shared 2-core machine: compare within a run, not across runs"
T = TypeVar("T")


class NotServed(Exception):
    """The peer does not serve what the measurement needs (an API missing from ApiVersions, or refused); its column
    says "not served" and the notes say why."""


class Broker(Protocol):
    """What the benchmarks need of a running peer: where it listens, its process (for CPU figures), stop()."""

    host: str
    port: int

    @property
    def pid(self) -> int: ...

    def start(self, timeout_s: float = ...) -> tuple[str, int]: ...

    def stop(self, timeout_s: float = ...) -> None: ...


@dataclass(frozen=True)
class Peer:
    """One column: how to make the broker, what it runs with, and why it cannot run here (None when it can)."""

    name: str
    settings: str
    make: Callable[[Path], Broker]
    unavailable: str | None = None
    #: Short form of `unavailable` for a table cell ("n/a (no Java)"); the long form goes into the table's notes.
    unavailable_short: str | None = None
    creates_topics: bool = True
    #: Blocks until a started broker serves groups (our broker loads __consumer_offsets after it answers); None when
    #: it serves them as soon as it answers (or, as Kafka's start(), only returns once it does).
    wait_ready: Callable[[Broker], None] | None = None
    #: For a peer without CreateTopics: make it with these topics (name -> partitions) created at start.
    seeded: Callable[[Path, Mapping[str, int]], Broker] | None = None
    #: The `bench_targets` rows it takes part in (None: every row); a floor (bench/floors.py) serves only some.
    rows: frozenset[str] | None = None

    @property
    def available(self) -> bool:
        return self.unavailable is None

    @property
    def na(self) -> str:
        """The cell text of this peer when it did not run."""
        return f"n/a ({self.unavailable_short or self.unavailable})"


def _ours(data_dir: Path) -> Broker:
    return ServerProcess.ours(data_dir, OURS_SETTINGS)


def ours_loaded(server: Broker, timeout_s: float = 60.0) -> None:
    """Until our broker logged `offsets.loaded` (before, group requests answer COORDINATOR_LOAD_IN_PROGRESS)."""
    assert isinstance(server, ServerProcess)
    server.wait_for_line(OURS_READY_EVENT, timeout_s)


def _mock(_: Path) -> Broker:
    return ServerProcess.mock(0)


def _seeded_mock(_: Path, topics: Mapping[str, int]) -> Broker:
    return ServerProcess.mock(0, topics)


def _kfake(_: Path) -> Broker:
    return ServerProcess([str(KFAKE_BIN), "-port", "0", "-partitions", str(KFAKE_PARTITIONS)], "kfake")


def _kafka(work_dir: Path) -> Broker:
    from bench.kafka_peer import KafkaServer  # imports the tests package (ReferenceKafka): only when Kafka runs

    return KafkaServer(work_dir)


def kafka_unavailable() -> tuple[str, str] | None:
    """(why, short why) the reference Kafka broker cannot run here, or None when it can."""
    try:
        from bench.kafka_peer import unavailable_reason
    except ImportError as exc:  # a checkout without the tests package
        return f"tests/reference/kafka.py cannot be imported ({exc})", "no tests/reference"
    reason = unavailable_reason()
    if reason is None:
        return None
    if shutil.which("java") is None:
        return reason, "no Java"
    return reason, "Kafka not fetched"


def kfake_unavailable() -> tuple[str, str] | None:
    if KFAKE_BIN.is_file():
        return None
    why = "go" if shutil.which("go") is None else "make bench-kfake"
    return (
        f"{KFAKE_BIN.relative_to(ROOT)} is not built (`make bench-kfake` builds it with Go, from the module proxy)",
        f"not built: {why}",
    )


def peers() -> list[Peer]:
    """The four columns, in order, each with its availability on this machine."""
    kafka_why = kafka_unavailable()
    kfake_why = kfake_unavailable()
    return [
        Peer("ours", ", ".join(f"{k}={v}" for k, v in OURS_SETTINGS.items()), _ours, wait_ready=ours_loaded),
        Peer(
            "mock",
            "--rebalance-delay-ms 0 (no CreateTopics: auto-creates 4 partitions; the consumer-protocol topics are"
            " created at start with --topic; hands out a 3000 ms consumer heartbeat interval, not configurable)",
            _mock,
            unavailable=None if ServerProcess.mock_available() else "/work/shared/tools/mock_cluster.py is not present",
            unavailable_short="no mock_cluster.py",
            creates_topics=False,
            seeded=_seeded_mock,
        ),
        Peer(
            "kafka",
            _kafka_settings() if kafka_why is None else "-",
            _kafka,
            unavailable=kafka_why[0] if kafka_why else None,
            unavailable_short=kafka_why[1] if kafka_why else None,
        ),
        Peer(
            "kfake",
            "-port 0 (no initial rebalance delay exists; group session 6 s..30 min; auto-create on;"
            " group.consumer.heartbeat.interval.ms=100)",
            _kfake,
            unavailable=kfake_why[0] if kfake_why else None,
            unavailable_short=kfake_why[1] if kfake_why else None,
        ),
    ]


def _kafka_settings() -> str:
    from bench.kafka_peer import describe_settings

    return describe_settings()


# -- tables --------------------------------------------------------------------------------------------------------

#: A cell: a figure, a text (e.g. "n/a (did not form in 120 s)"), or None for "not measured" (prints "n/a").
Cell = float | str | None


@dataclass
class Measure:
    """One table row: a figure per peer name, and optionally the issue's target for our broker.

    `spec` formats this row's figures (the table's when None); `compare` False leaves the ratio cells empty, for
    rows that are not speeds (CPU shares, counts).
    """

    label: str
    values: Mapping[str, Cell]
    target: str = ""
    spec: str | None = None
    compare: bool = True


def cell(value: Cell, spec: str) -> str:
    if isinstance(value, str):
        return value
    if value is None or math.isnan(value):
        return "n/a"
    return fmt(value, spec)


def _figure(value: Cell) -> float | None:
    return value if isinstance(value, int | float) and not math.isnan(value) else None


def comparison_table(
    measures: Sequence[Measure],
    columns: Sequence[Peer],
    spec: str = ",.0f",
    ratios: Sequence[str] = ("mock", "kafka"),
    with_target: bool = False,
) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """(header, rows): one column per peer, then `ours/<peer>` ratios, then the target column if asked.

    A peer that is not available shows its `na` text in every row, whatever the measure says.
    """
    header = ("measure", *(p.name for p in columns), *(f"ours/{name}" for name in ratios))
    if with_target:
        header += ("issue target",)
    rows = []
    for measure in measures:
        row_spec = measure.spec or spec
        cells = [cell(measure.values.get(p.name), row_spec) if p.available else p.na for p in columns]
        ours = _figure(measure.values.get("ours"))
        cells += [ratio(ours, _figure(measure.values.get(name))) if measure.compare else "" for name in ratios]
        if with_target:
            cells.append(measure.target)
        rows.append((measure.label, *cells))
    return header, rows


def settings_notes(columns: Sequence[Peer]) -> list[str]:
    """One note line per peer: its settings, or why it did not run."""
    return [f"{p.name}: {p.settings}" if p.available else f"{p.name}: not run: {p.unavailable}" for p in columns]


# -- running a measurement on each peer ----------------------------------------------------------------------------


def each_peer(columns: Sequence[Peer], measure: Callable[[Peer], T], failures: dict[str, str]) -> dict[str, T]:
    """`measure(peer)` for every available peer; a peer that fails is noted in `failures` (the others still run).

    Benchmarks never fail on a peer's account: its column then says why.
    """
    results: dict[str, T] = {}
    for peer in columns:
        if not peer.available:
            continue
        try:
            results[peer.name] = measure(peer)
        except NotServed as exc:
            failures[peer.name] = f"{NOT_SERVED}: {exc}"
            print(f"  ({peer.name}: {failures[peer.name]})", flush=True)
        except Exception as exc:
            failures[peer.name] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            print(f"  ({peer.name} failed: {failures[peer.name]})", flush=True)
    return results


async def within(measurement: Awaitable[T], seconds: float) -> T:
    """The measurement, or a TimeoutError that says so: a peer that stops answering must not hang the benchmark."""
    try:
        return await asyncio.wait_for(measurement, seconds)
    except TimeoutError:
        raise TimeoutError(f"no result within {seconds:g} s (a request was not answered)") from None


def with_failures(values: dict[str, Cell], failures: Mapping[str, str]) -> dict[str, Cell]:
    """`values` with "n/a (failed)" for each peer that failed (its reason is in the notes), or "not served"."""
    return {
        **values,
        **{name: NOT_SERVED if why.startswith(NOT_SERVED) else "n/a (failed)" for name, why in failures.items()},
    }


def peer_notes(columns: Sequence[Peer], failures: Mapping[str, str], *extra: str) -> list[str]:
    """A table's notes: `extra`, each peer's settings, why a peer failed or was not served, and the load caveat."""
    return [
        *extra,
        *settings_notes(columns),
        *(
            f"{name}: {why}" if why.startswith(NOT_SERVED) else f"{name} failed: {why}"
            for name, why in failures.items()
        ),
        NOTE_LOAD,
    ]


@contextlib.contextmanager
def started(
    peer: Peer, work_dir: Path, topics: Mapping[str, int] | None = None, budget_s: float = PEER_BUDGET_S
) -> Iterator[Broker]:
    """A started peer that serves groups and has `topics` (name -> partitions), stopped on the way out whatever
    happened. A peer without CreateTopics is started with them (`Peer.seeded`)."""
    seed = bool(topics) and not peer.creates_topics
    server = peer.seeded(work_dir, topics or {}) if seed and peer.seeded is not None else peer.make(work_dir)
    try:
        server.start()
        if peer.wait_ready is not None:
            peer.wait_ready(server)
        if topics:
            run_async(within(ensure_topics(server, topics, create=not seed), budget_s))
        yield server
    finally:
        server.stop()


async def ensure_topics(server: Broker, topics: Mapping[str, int], create: bool) -> None:
    """Create `topics` (where the peer has CreateTopics) and wait until Metadata shows them whole."""
    conn = await Connection.open(server.host, server.port)
    try:
        for name, partitions in topics.items():
            if create:
                await create_topic(conn, name, partitions)
            deadline = time.monotonic() + 60
            while (shown := await topic_partitions(conn, name, 60)) < partitions:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{name}: {shown} partitions, wanted {partitions}")
                await asyncio.sleep(0.05)
    finally:
        conn.close()
