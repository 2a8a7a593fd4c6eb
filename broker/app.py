"""The broker process: listeners, connections, storage, the coordinator and the timer driver, and shutdown.

Shutdown follows uvicorn and mini-redis: stop accepting, let in-flight requests finish (bounded), flush storage,
close. Connection handling is capped by `max.connections` with a semaphore.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import structlog

from broker.clock import BrokerClock
from broker.cluster import ClusterView, Node
from broker.compaction import Compaction
from broker.config import BrokerConfig, parse_control_listener
from broker.connection import Connection
from broker.controls import BrokerControls
from broker.dispatch import Dispatcher
from broker.fetch_purgatory import FetchPurgatory
from broker.handlers.cluster import ClusterHandlers
from broker.handlers.groups import GroupHandlers
from broker.handlers.records import RecordHandlers
from broker.idle_connections import IdleConnections
from broker.maintenance import Maintenance
from broker.metrics import BrokerMetrics
from broker.offsets_log import OFFSETS_TOPIC, OffsetsLog
from broker.scheduler import TimerDriver
from broker.slices import run_in_slices
from broker.startup import StartupError, check_data_dir, is_wildcard_host, listen_error, os_cause
from broker.timeline import EventTap, Timeline
from coordinator.config import KAFKA_PROPERTIES, CoordinatorConfig
from coordinator.coordinator import GroupCoordinator
from coordinator.events import Events
from protocol.consumer_protocol import decode_subscription
from protocol.errors import ErrorCode
from storage.cleaner import CleanerConfig
from storage.config import COMPACT, LogConfig
from storage.errors import LogDirError
from storage.log_manager import LogManager
from storage.topics import TopicInfo

if TYPE_CHECKING:
    from broker.control_api import ControlApi

log = structlog.get_logger("broker.app")
SHUTDOWN_GRACE_S = 5.0


class Broker:
    OFFSETS_TOPIC = OFFSETS_TOPIC

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.dispatcher = Dispatcher(lambda: self.clock.wall_ms() if self.clock is not None else 0)
        self.fetches = FetchPurgatory()
        self.controls = BrokerControls(self)
        self._servers: list[asyncio.Server] = []
        self._connections: set[Connection] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(config["max.connections"])
        self.clock: BrokerClock | None = None
        self.real_clock: BrokerClock | None = None
        self.driver: TimerDriver | None = None
        self.fetch_driver: TimerDriver | None = None
        self.on_stop: list[Callable[[], None]] = []
        self.stopped = asyncio.Event()
        # Always on and cheap (bounded): the rebalance timeline and the metrics, fed by the dispatcher's observer
        # hook and by the coordinator's events (EventTap, in `start`); served by the control API when configured.
        self.timeline = Timeline(
            lambda: self.clock.monotonic_ms() if self.clock is not None else 0,
            max_groups=config["timeline.max.groups"],
            events_per_group=config["timeline.events.per.group"],
        )
        self.metrics = BrokerMetrics(self)
        self.dispatcher.observers = (self.timeline, self.metrics)
        self.connections_accepted = 0
        self.control_api: ControlApi | None = None
        self.compaction: Compaction | None = None
        #: Serialises topic creation, deletion and growth (Kafka's controller applies them one at a time).
        self._topic_changes = asyncio.Lock()
        self.idle = IdleConnections(
            config["connections.max.idle.ms"], lambda: self.clock.monotonic_ms() if self.clock is not None else 0
        )
        self.idle.on_first = self.rearm_timers

    @property
    def connections(self) -> set[Connection]:
        return self._connections

    @property
    def ports(self) -> list[int]:
        return [s.sockets[0].getsockname()[1] for s in self._servers]

    @property
    def bootstrap_servers(self) -> str:
        host = self.config.listeners[0][1] or "127.0.0.1"
        return f"{host}:{self.ports[0]}"

    @property
    def control_url(self) -> str | None:
        """The control API's address (`control.listener` with its port resolved), or None when it is off."""
        return self.control_api.url if self.control_api is not None else None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        clock = self.clock = BrokerClock(loop)
        self.timeline.now_ms = clock.monotonic_ms
        self.real_clock = BrokerClock(loop)  # long-poll Fetch waits follow real time even when tests move `clock`
        config = self.config
        log_config = LogConfig.from_broker_properties(dict(config.items()))
        check_data_dir(config.log_dir)
        try:
            self.logs = LogManager([config.log_dir], log_config, node_id=config.node_id, clock=clock.wall_ms)
        except (OSError, LogDirError) as exc:
            cause = os_cause(exc) if isinstance(exc, OSError) else str(exc)
            raise StartupError(f"data directory {config.log_dir} ('log.dirs') is not usable: {cause}") from None
        self._ensure_offsets_topic()
        self.offsets_log = OffsetsLog(self.logs, clock.wall_ms, loop.call_soon, self._deliver_durability)
        self.offsets_log.on_written = self.after_append
        coordinator_props = {key: str(config[key]) for key in KAFKA_PROPERTIES}
        self.coordinator = GroupCoordinator(
            CoordinatorConfig.from_kafka_props(coordinator_props),
            self.offsets_log,
            decode_subscription=decode_subscription,
            known_partition=lambda topic, partition: self.logs.get(topic, partition) is not None,
            events=Events(
                EventTap(structlog.get_logger("group_coordinator"), (self.timeline.on_event, self.metrics.on_event))
            ),
        )
        await self._start_listeners()
        advertised = config.advertised_listeners[0]
        advertised_port = advertised[2] or self.ports[0]
        local = Node(config.node_id, advertised[1] or "127.0.0.1", advertised_port)
        self.cluster = ClusterView(self.logs.cluster_id, local)
        self.fetch_driver = TimerDriver(loop, self.real_clock, [self.fetches])
        ClusterHandlers(self).register()
        RecordHandlers(self).register()
        GroupHandlers(self).register()
        for partition in range(config["offsets.topic.num.partitions"]):
            self.coordinator.begin_loading(partition)
        self.loaded = asyncio.Event()
        self._spawn(self._load_offsets_partitions())
        self.maintenance = Maintenance(
            self.logs, clock, config["log.retention.check.interval.ms"], config["log.flush.interval.ms"]
        )
        self.driver = TimerDriver(loop, clock, [self.coordinator, self.maintenance, self.idle])
        self.driver.rearm()
        if config["log.cleaner.enable"]:
            cleaner_config = CleanerConfig.from_broker_properties(dict(config.items()))
            self.compaction = Compaction(self.logs, cleaner_config, config["log.cleaner.backoff.ms"], clock.wall_ms)
            self._spawn(self.compaction.run_forever())
        if config["control.listener"]:
            from broker.control_api import ControlApi  # aiohttp costs ~0.2 s of import: only when asked for

            self.control_api = ControlApi(self)
            await self.control_api.start(*parse_control_listener(config["control.listener"]))
        log.info(
            "broker.started",
            listeners=[f"{n}://{h}:{p}" for (n, h, _), p in zip(self.config.listeners, self.ports, strict=True)],
        )

    async def _start_listeners(self) -> None:
        """Bind every listener; a port that cannot be bound is a StartupError (one line), after closing the logs."""
        for name, host, port in self.config.listeners:
            listener = f"{name}://{host}:{port}"
            try:
                server = await asyncio.start_server(self._acceptor(name), host or None, port, reuse_address=True)
            except OSError as exc:
                for started in self._servers:
                    started.close()
                self.logs.close()
                raise listen_error(listener, exc) from None
            self._servers.append(server)
            if is_wildcard_host(host):
                log.warning(
                    "listener.no_authentication",
                    listener=listener,
                    reason="bound to a wildcard address: anyone who can reach the port is served, unauthenticated",
                )

    def _acceptor(
        self, listener: str
    ) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Coroutine[Any, Any, None]]:
        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await self._accept(reader, writer, listener)

        return accept

    # -- topics and the offsets topic --------------------------------------------------------------------------

    def _ensure_offsets_topic(self) -> None:
        if self.logs.topic(OFFSETS_TOPIC) is None:
            self.logs.create_topic(
                OFFSETS_TOPIC,
                self.config["offsets.topic.num.partitions"],
                {"cleanup.policy": COMPACT, "segment.bytes": str(self.config["offsets.topic.segment.bytes"])},
            )

    async def _load_offsets_partitions(self) -> None:
        """Replay every `__consumer_offsets` partition into the coordinator while the listeners already run.

        Until its partition is loaded a group's requests get COORDINATOR_LOAD_IN_PROGRESS (with Kafka's remapping
        for Heartbeat and SyncGroup, rule #4), and clients retry. Reading and decoding happen in a worker thread;
        only the replay into the coordinator runs on the event loop. Damaged batches are skipped by the reader
        (storage reports each damaged range once); a partition whose load fails for any reason is marked failed
        (NOT_COORDINATOR, the reason logged) and the next partition loads regardless.
        """
        clock = self.clock
        assert clock is not None
        started = clock.monotonic_ms()
        records_loaded = 0
        for partition in range(self.config["offsets.topic.num.partitions"]):
            records_loaded += await self._load_offsets_partition(partition)
            self.rearm_timers()
        failed = sorted(self.coordinator.load_failures())
        log.info("offsets.loaded", records=records_loaded, failed=failed, duration_ms=clock.monotonic_ms() - started)
        self.loaded.set()

    async def _load_offsets_partition(self, partition: int) -> int:
        """Load one partition; returns how many records it replayed (0 when it failed)."""
        clock = self.clock
        assert clock is not None
        try:
            records = await asyncio.to_thread(self.offsets_log.read_all, partition)
        except Exception as exc:
            self.coordinator.fail_loading(partition, f"reading the partition failed: {exc!r}", clock.monotonic_ms())
            return 0
        partition_log = self.logs.get(OFFSETS_TOPIC, partition)
        for damage in partition_log.damaged_ranges() if partition_log is not None else []:
            log.error(
                "offsets.load_skipped_damaged_range",
                partition=partition,
                segment=damage.segment,
                start=damage.start,
                end=damage.end,
                reason=damage.reason,
            )
        if not self.coordinator.load_partition(partition, records, clock.monotonic_ms(), clock.wall_ms()):
            return 0
        return len(records)

    def _deliver_durability(self, outcomes: list[tuple[Callable[[ErrorCode], None], ErrorCode]]) -> None:
        """Tell the coordinator its records are durable, after bringing its clock to now (persistence.py)."""
        assert self.clock is not None
        self.coordinator.tick(self.clock.monotonic_ms(), self.clock.wall_ms())
        for callback, error in outcomes:
            callback(error)
        self.rearm_timers()

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("broker.task_failed", error=repr(task.exception()))

    def create_topic(self, name: str, partitions: int, configs: dict[str, str]) -> TopicInfo:
        """Auto-creation (Metadata): -1 partitions means `num.partitions`, as Kafka resolves it; done in one go."""
        return self.logs.create_topic(name, self._partition_count(partitions), configs)

    async def create_topic_in_slices(self, name: str, partitions: int, configs: dict[str, str]) -> TopicInfo:
        """CreateTopics: like `create_topic`, but the loop keeps serving requests while the partitions are made.

        Topic changes are applied one at a time, in arrival order, like Kafka's controller: a request naming a
        topic another request is still creating waits for it and then gets TOPIC_ALREADY_EXISTS. The topic is
        not visible (Metadata, Produce, Fetch) until all of its partitions exist. The name checks run at once.
        """
        steps = self.logs.create_topic_steps(name, self._partition_count(partitions), configs)
        async with self._topic_changes:
            return await run_in_slices(steps)

    def _partition_count(self, partitions: int) -> int:
        return self.config["num.partitions"] if partitions == -1 else partitions

    def validate_new_topic(self, name: str, partitions: int, configs: dict[str, str]) -> TopicInfo:
        """CreateTopics with validate_only: every check `create_topic` makes, nothing created."""
        return self.logs.validate_new_topic(name, self._partition_count(partitions), configs)

    async def delete_topic(self, name: str) -> TopicInfo:
        """DeleteTopics, in slices (see `create_topic_in_slices`); storage.log_manager orders it for a full disk."""
        async with self._topic_changes:
            return await run_in_slices(self.logs.delete_topic_steps(name))

    async def add_partitions(self, name: str, total: int) -> TopicInfo:
        """CreatePartitions, in slices (see `create_topic_in_slices`)."""
        async with self._topic_changes:
            return await run_in_slices(self.logs.add_partitions_steps(name, total))

    def after_append(self, topic: str, partition: int) -> None:
        self.fetches.on_append(topic, partition)

    def rearm_timers(self) -> None:
        for driver in (self.driver, self.fetch_driver):
            if driver is not None:
                driver.rearm()

    def advance_time(self, ms: int) -> None:
        """Virtual time: move the broker clock forward and fire every timer that became due, without sleeping."""
        assert self.clock is not None and self.driver is not None
        self.clock.advance(ms)
        self.driver.fire_now()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, listener: str) -> None:
        async with self._slots:
            self.connections_accepted += 1
            connection = Connection(
                self.dispatcher, reader, writer, self.config["socket.request.max.bytes"], listener, self.idle
            )
            self._connections.add(connection)
            try:
                await connection.run()
            finally:
                self._connections.discard(connection)

    async def stop(self) -> None:
        if self.control_api is not None:
            await self.control_api.stop()
        for server in self._servers:
            server.close()
        # Let requests in flight finish (bounded: a parked JoinGroup may wait much longer), then close.
        for connection in list(self._connections):
            connection.stop_reading()
        in_flight = [c.closed.wait() for c in self._connections]
        if in_flight:
            await asyncio.wait([asyncio.ensure_future(w) for w in in_flight], timeout=SHUTDOWN_GRACE_S)
        for connection in list(self._connections):
            connection.close()
        for server in self._servers:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(server.wait_closed(), SHUTDOWN_GRACE_S)
        if self.compaction is not None:
            await self.compaction.stop()
        for task in list(self._tasks):
            task.cancel()
        for driver in (self.driver, self.fetch_driver):
            if driver is not None:
                driver.close()
        self.offsets_log.flush()
        self.fetches.cancel_all()
        if self.clock is not None:
            self.coordinator.shutdown(self.clock.monotonic_ms(), self.clock.wall_ms())
        for callback in self.on_stop:
            callback()
        # A storage error here (a full disk) is logged by the log manager and does not stop the shutdown; the exit
        # status stays 0, as Kafka's does when its log manager's shutdown fails.
        durable = self.logs.close()
        log.info("broker.stopped", durable=durable)
        self.stopped.set()
