"""The broker process: listeners, connections, storage, the coordinator and the timer driver, and shutdown.

Everything is built in the constructor (inside the event loop that will run it), so a `Broker` is whole before
`start()`, which only binds the listeners and starts the background work. Each handler is given exactly what it
uses. The server offers extension points and never imports what uses them (the test toolkit, the CLI): the
dispatcher's middleware chain and request observers, `events.subscribe` for the coordinator's events, a wrapper
around the coordinator's record log (`wrap_record_log`, the only one that must exist before the coordinator), and
the clock (`advance_time`, `clock.freeze`).

Shutdown follows uvicorn and mini-redis: stop accepting, let in-flight requests finish (bounded), flush storage,
close. Connection handling is capped by `max.connections` (`broker.connection_slots`).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import Callable, Coroutine
from typing import Any

import structlog

from broker.auth_gate import OPEN_GATE, AuthGate
from broker.authorization import Authorization
from broker.clock import BrokerClock
from broker.cluster import NodesCluster
from broker.compaction import Compaction
from broker.config import BrokerConfig
from broker.config_layers import BrokerLayers
from broker.connection import Connection, ListenerSecurity
from broker.connection_slots import ConnectionSlots
from broker.dispatch import Dispatcher
from broker.dynamic_config import DynamicConfigs
from broker.events import EventTap
from broker.features import FeatureLevels
from broker.fetch_purgatory import FetchPurgatory
from broker.group_topics import LogTopicCatalog
from broker.handlers.acls import AclHandlers
from broker.handlers.cluster import ClusterHandlers
from broker.handlers.configs import ConfigHandlers
from broker.handlers.controller import ControllerHandlers
from broker.handlers.describe import DescribeHandlers
from broker.handlers.groups import GroupHandlers
from broker.handlers.log_admin import LogAdminHandlers
from broker.handlers.offsets_by_id import TopicIds
from broker.handlers.records import RecordHandlers
from broker.handlers.security import SecurityHandlers
from broker.handlers.telemetry import TelemetryHandlers
from broker.handlers.transactions import TransactionHandlers
from broker.idle_connections import IdleConnections
from broker.leader_logs import LeaderLogs
from broker.leadership import Leadership
from broker.listeners import AdvertisedListeners
from broker.maintenance import Maintenance
from broker.metrics import BrokerMetrics
from broker.node_control import NodeControl
from broker.offsets_log import OFFSETS_TOPIC, OffsetsLog
from broker.partition_loads import read_for_load
from broker.producer_state import ProducerIdAllocator
from broker.sasl_listeners import sasl_settings
from broker.scheduler import TimerDriver
from broker.security.credential_store import ScramCredentialStore
from broker.security.scram import ScramCredential, ScramMechanism
from broker.startup import StartupError, bind_listener, is_wildcard_host, lock_data_dir, os_cause
from broker.tls import principal_mappers, tls_contexts
from broker.tls_server import TlsServer
from broker.topics import TopicChanges
from broker.transaction_state_log import TRANSACTION_STATE_TOPIC
from broker.txn_markers import TxnMarkerWriter
from broker.txn_service import TransactionService
from coordinator.config import CoordinatorConfig, TransactionConfig
from coordinator.coordinator import GroupCoordinator
from coordinator.events import Events
from coordinator.persistence import RecordLog
from coordinator.routing import GROUP_KEY_TYPE, TRANSACTION_KEY_TYPE, CoordinatorTopic
from protocol.consumer_protocol import decode_subscription
from protocol.errors import ErrorCode
from storage.broker_configs import BrokerConfigFile
from storage.cleaner import CleanerConfig
from storage.config import COMPACT, MIN_SEGMENT_BYTES
from storage.errors import LogDirError, StorageError
from storage.log_manager import LogManager, Steps
from storage.topics import TopicInfo

log = structlog.get_logger("broker.app")
SHUTDOWN_GRACE_S = 5.0
RecordLogWrapper = Callable[[RecordLog], RecordLog]


def _coordinator_topic_configs(segment_bytes: int) -> dict[str, str]:
    """A coordinator topic's overrides, as Kafka gives them: compacted, with the configured segment size. A size
    below segment.bytes' 1 MiB floor (tests use tiny ones) goes in Kafka's internal.segment.bytes instead."""
    size_key = "segment.bytes" if segment_bytes >= MIN_SEGMENT_BYTES else "internal.segment.bytes"
    return {"cleanup.policy": COMPACT, size_key: str(segment_bytes)}


class Broker:
    OFFSETS_TOPIC = OFFSETS_TOPIC

    def __init__(self, config: BrokerConfig, *, wrap_record_log: RecordLogWrapper | None = None) -> None:
        """Build the whole broker; call it inside the event loop that will run it. A data directory that cannot
        be used is a `StartupError` (one line)."""
        loop = asyncio.get_running_loop()
        self.config = config
        clock = self.clock = BrokerClock(loop)
        self.real_clock = BrokerClock(loop)  # long-poll Fetch waits follow real time even when tests move `clock`
        # ApiVersions v5 (KIP-1242) checks the client meant this cluster and node; asked only once requests arrive.
        self.dispatcher = Dispatcher(lambda: (self.cluster.cluster_id, self.cluster.local.node_id))
        self.fetches = FetchPurgatory()
        #: Per node index (0 is `node.id`), the servers of its listeners, in `listeners` order.
        self._servers: dict[int, list[asyncio.Server | TlsServer]] = {}
        self._node_ids = config.node_ids
        self._connections: set[Connection] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._slots = ConnectionSlots(config["max.connections"], self._admit)
        self.on_stop: list[Callable[[], None]] = []
        self.stopped = asyncio.Event()
        self.loaded = asyncio.Event()
        #: Coordinator topics a fresh `log.dirs` is still creating (`_begin_coordinator_topics`).
        self._creating: dict[str, Steps[TopicInfo]] = {}
        self.connections_accepted = 0
        #: Asked before each TLS handshake (and, with SASL, each authentication): the toolkit's faults set it.
        self.auth_gate: AuthGate = OPEN_GATE
        self.idle = IdleConnections(config["connections.max.idle.ms"], clock.monotonic_ms)
        self.idle.on_first = self.rearm_timers

        # Nothing is written before the checks that can refuse the start: TLS settings, bind, then lock, then open.
        self._tls = tls_contexts(config)
        #: Per listener (upper-cased): SASL settings and TLS principal mapping, checked before anything is written.
        self.credentials: ScramCredentialStore | None = None
        self._security = self._listener_security(config, clock)
        #: Per node index, its listeners' sockets, bound before anything is written (a busy port refuses the start),
        #: and the ports they got (a stopped node binds them again when it starts).
        self._sockets: dict[int, list[socket.socket]] = {}
        self._bound_ports: dict[int, list[int]] = {}
        try:
            for index in range(len(self._node_ids)):
                self._sockets[index] = self._bind_node(index, [0] * len(config.listeners))
        except StartupError:
            self._close_sockets()
            raise
        try:
            self.dir_lock = lock_data_dir(config.log_dir)
        except StartupError:
            self._close_sockets()
            raise
        try:
            self.logs = self._open_logs()
        except StartupError:
            self._close_sockets()
            self.dir_lock.release()
            raise
        #: SCRAM credentials (AlterUserScramCredentials), read live by SCRAM logins.
        self.credentials = ScramCredentialStore(config.log_dir, clock.wall_ms)
        for moved in self.credentials.quarantined:
            self.logs.note_quarantined(moved)
        self.offsets_log = OffsetsLog(self.logs, clock.wall_ms, loop.call_soon, self._deliver_durability)
        self.offsets_log.on_written = self.fetches.on_append
        #: What the coordinator writes to: the offsets log, or a wrapper around it (fault injection).
        self.record_log: RecordLog = wrap_record_log(self.offsets_log) if wrap_record_log else self.offsets_log
        self.events = EventTap(structlog.get_logger("group_coordinator"))
        self.coordinator = GroupCoordinator(
            CoordinatorConfig.from_kafka_props(config.coordinator_properties()),
            self.record_log,
            decode_subscription=decode_subscription,
            known_partition=lambda topic, partition: self.logs.get(topic, partition) is not None,
            events=Events(self.events),
            topics=LogTopicCatalog(self.logs),
            verify_transaction=lambda request: self.transactions.verify_offsets(request),
            serves=self._serves_offsets_partition if len(self._node_ids) > 1 else None,
        )
        self.advertised = AdvertisedListeners(config.listeners, config.advertised_listeners, self.node_ports)
        self.cluster = NodesCluster(
            self.logs.cluster_id,
            self._node_ids,
            self.advertised.address,
            Leadership(self._node_ids),
            self._replication_factor,
        )
        self.topics = TopicChanges(
            self.logs, config["num.partitions"], self._capped_factor(config["default.replication.factor"])
        )
        self.metrics = BrokerMetrics(
            self.coordinator,
            self.logs,
            [name for name, _, _ in config.listeners],
            lambda: [c.session for c in self._connections],
            lambda: self.connections_accepted,
        )
        self.dispatcher.observe(self.metrics)
        #: The authorizer and its ACLs (none without `authorizer.class.name`).
        self.authorization = Authorization(config, config.log_dir)
        AclHandlers(self.authorization).register(self.dispatcher)
        if self.authorization.authorizer is not None:  # no authorizer: no check, requests cost what they did
            from broker.access import AccessGuards, LogTopics  # only where ACLs are checked

            topics = LogTopics(self.logs, config["auto.create.topics.enable"])
            self.dispatcher.use(AccessGuards(self.authorization.authorizer, topics))
        self.events.subscribe(self.metrics.on_event)
        ClusterHandlers(config, self.logs, self.cluster, self.topics, self.dynamic_configs).register(self.dispatcher)
        ConfigHandlers(self.dynamic_configs, self.logs, self.topics, self.cluster).register(self.dispatcher)
        DescribeHandlers(self.logs, self.cluster).register(self.dispatcher)
        ControllerHandlers(self.logs, self.cluster, clock, config.advertised_listeners[0][0]).register(self.dispatcher)
        self.telemetry = TelemetryHandlers(clock, lambda: {c.session.conn_id for c in self._connections})
        self.telemetry.register(self.dispatcher)
        #: The data plane; the transaction coordinator installs its Produce verifier as `records.verifier`.
        leader_logs = LeaderLogs(self.logs, self.cluster)
        self.records = RecordHandlers(
            config, self.logs, clock, self.real_clock, self.fetches, self.rearm_timers, leader_logs
        )
        self.records.register(self.dispatcher)
        LogAdminHandlers(self.logs, leader_logs).register(self.dispatcher)
        SecurityHandlers(self.credentials).register(self.dispatcher)
        #: Where the transaction coordinator writes its COMMIT/ABORT markers (broker.txn_markers).
        self.txn_markers = TxnMarkerWriter(self.logs, self.fetches, clock.wall_ms)
        self.transactions = TransactionService(
            TransactionConfig.from_kafka_props(config.coordinator_properties()),
            loop,
            clock,
            self.logs,
            self.coordinator,
            self.txn_markers,
            ProducerIdAllocator(config.log_dir / "producer-id-block"),
            self.rearm_timers,
            verification=config["transaction.partition.verification.enable"],
            serves=self._serves_transaction_partition if len(self._node_ids) > 1 else None,
        )
        self.records.verifier = self.transactions.verify_produce
        self.records.adder = self.transactions.add_for_produce
        self.dispatcher.features = FeatureLevels.for_transactions(self.transactions.config.transaction_version)
        GroupHandlers(
            self.coordinator,
            self.cluster,
            clock,
            self.rearm_timers,
            self._coordinator_topics(),
            TopicIds(self.logs),
            self.transactions.add_for_offsets,
        ).register(self.dispatcher)
        TransactionHandlers(self.transactions.coordinator, clock, self.rearm_timers).register(self.dispatcher)
        self.maintenance = Maintenance(
            self.logs, clock, config["log.retention.check.interval.ms"], config["log.flush.interval.ms"]
        )
        #: Stopping and starting nodes, moving leaders (a several-node cluster: `cluster.nodes`).
        self.nodes = NodeControl(
            self.cluster,
            self.logs,
            self,
            {
                OFFSETS_TOPIC: (self.coordinator, self._load_moved_offsets_partition),
                TRANSACTION_STATE_TOPIC: (self.transactions.coordinator, self.transactions.load_partition),
            },
            lambda: (clock.monotonic_ms(), clock.wall_ms()),
            self._spawn,
            config["cluster.coordinator.load.ms"],
        )
        self.driver = TimerDriver(
            loop, clock, [self.coordinator, self.transactions.coordinator, self.maintenance, self.idle, self.nodes]
        )
        self.driver.after_tick.append(self._start_reloads)
        self.fetch_driver = TimerDriver(loop, self.real_clock, [self.fetches])
        self.compaction: Compaction | None = None
        if config["log.cleaner.enable"]:
            cleaner_config = CleanerConfig.from_broker_properties(self.dynamic_configs.layers.values())
            backoff_ms = self.dynamic_configs.value("log.cleaner.backoff.ms")
            self.compaction = Compaction(self.logs, cleaner_config, backoff_ms, clock.wall_ms)
        self.dynamic_configs.on_change(self._configs_changed)

    def _listener_security(self, config: BrokerConfig, clock: BrokerClock) -> dict[str, ListenerSecurity]:
        """How each listener authenticates: its SASL settings (SCRAM reads `self.credentials` live) and its TLS
        principal mapping rules; a bad setting is a one-line `StartupError`."""

        def scram_lookup(user: str, mechanism: ScramMechanism) -> ScramCredential | None:
            return self.credentials.get(user, mechanism) if self.credentials is not None else None

        sasl = sasl_settings(config, scram_lookup, clock.wall_ms)
        mappers = principal_mappers(config)
        return {
            name.upper(): ListenerSecurity(sasl.get(name.upper()), mappers.get(name.upper()), clock.monotonic_ms)
            for name, _, _ in config.listeners
        }

    def _configs_changed(self, layers: BrokerLayers) -> None:
        """A dynamic broker config changed: the logs, the cleaner and the transaction verification follow it."""
        self.logs.set_defaults(self.dynamic_configs.log_defaults(), self.dynamic_configs.topic_defaults())
        values = layers.values()
        if self.compaction is not None:
            self.compaction.reconfigure(CleanerConfig.from_broker_properties(values), values["log.cleaner.backoff.ms"])
        self.transactions.verification = values["transaction.partition.verification.enable"]

    def _bind_node(self, index: int, given_ports: list[int]) -> list[socket.socket]:
        """Node `index`'s listener sockets: each configured port plus the index (0 stays "any"), or the ports it
        had before (`given_ports`, non-zero when a stopped node starts again, so its clients find it)."""
        sockets: list[socket.socket] = []
        try:
            for (name, host, port), given in zip(self.config.listeners, given_ports, strict=True):
                wanted = given or (port + index if port else 0)
                sockets.append(bind_listener(f"{name}://{host}:{wanted}", host, wanted))
        except StartupError:
            for sock in sockets:
                sock.close()
            raise
        self._bound_ports[index] = [sock.getsockname()[1] for sock in sockets]
        return sockets

    def _close_sockets(self) -> None:
        for sockets in self._sockets.values():
            for sock in sockets:
                sock.close()

    def _replication_factor(self, topic: str) -> int:
        info = self.logs.topic(topic)
        return info.replication_factor if info is not None else 1

    def _capped_factor(self, factor: int) -> int:
        """A configured replication factor within the nodes there are (Kafka's internal topics default to 3, which
        one node could not hold; README, "Differences from Kafka")."""
        return min(factor, len(self._node_ids))

    def _open_logs(self) -> LogManager:
        """The log directory with the dynamic broker configs recorded in it (they set the logs' defaults)."""
        config = self.config
        try:
            #: The broker keys AlterConfigs changed at runtime, over the static configuration.
            self.dynamic_configs = DynamicConfigs(config, BrokerConfigFile(config.log_dir))
            return LogManager(
                [config.log_dir],
                self.dynamic_configs.log_defaults(),
                node_id=config.node_id,
                clock=self.clock.wall_ms,
                default_properties=self.dynamic_configs.topic_defaults(),
            )
        except (OSError, LogDirError) as exc:
            cause = os_cause(exc) if isinstance(exc, OSError) else str(exc)
            raise StartupError(f"data directory {config.log_dir} ('log.dirs') is not usable: {cause}") from None

    @property
    def connections(self) -> set[Connection]:
        return self._connections

    @property
    def ports(self) -> list[int]:
        """The first node's listener ports, in `listeners` order."""
        return self.node_ports(0)

    def node_ports(self, index: int) -> list[int]:
        """Node `index`'s listener ports (kept while the node is stopped: it serves them again when it starts)."""
        return self._bound_ports[index]

    def serve_node(self, index: int) -> None:
        """Start a stopped node's listeners again, on the ports it had (`broker.node_control`): bound now, so a
        client connecting at once waits in the backlog until they serve, a moment later."""
        if index not in self._sockets:
            self._sockets[index] = self._bind_node(index, self._bound_ports[index])
        self._spawn(self._serve_node(index))

    def close_node(self, index: int) -> None:
        """Stop a node's listeners and drop its connections (`broker.node_control`)."""
        for server in self._servers.pop(index, []):
            server.close()
        for sock in self._sockets.pop(index, []):
            sock.close()
        node_id = self._node_ids[index]
        for connection in [*self._connections, *self._slots.waiting]:
            if connection.session.node_id == node_id:
                connection.close()

    @property
    def bootstrap_servers(self) -> str:
        """Every node's first listener, comma-separated (one address on one node)."""
        host = self.config.listeners[0][1] or "127.0.0.1"
        return ",".join(f"{host}:{self.node_ports(index)[0]}" for index in range(len(self._node_ids)))

    async def start(self) -> None:
        """Serve the listeners bound in the constructor, then create (on a fresh `log.dirs`) and load the coordinator
        topics, and run the timers and cleaner."""
        for partition in range(self.config["offsets.topic.num.partitions"]):
            self.coordinator.begin_loading(partition)
        self.transactions.begin_loading()
        self._begin_coordinator_topics()
        await self._start_listeners()
        self._spawn(self._load_coordinator_topics())
        self.driver.rearm()
        if self.compaction is not None:
            self._spawn(self.compaction.run_forever())
        log.info(
            "broker.started",
            listeners=[f"{n}://{h}:{p}" for (n, h, _), p in zip(self.config.listeners, self.ports, strict=True)],
        )

    async def _start_listeners(self) -> None:
        """Serve every node's listeners bound in the constructor (where a busy port already refused the start)."""
        for index in self._sockets:
            await self._serve_node(index)
        for name, host, port in self.config.listeners:
            context = self._tls.get(name.upper())
            mutual_tls = context is not None and context.verify_mode == ssl.CERT_REQUIRED
            authenticated = mutual_tls or self._security[name.upper()].sasl is not None
            if is_wildcard_host(host) and not authenticated:
                log.warning(
                    "listener.no_authentication",
                    listener=f"{name}://{host}:{port}",
                    reason="bound to a wildcard address: anyone who can reach the port is served, unauthenticated",
                )

    async def _serve_node(self, index: int) -> None:
        """Serve node `index`'s bound listener sockets."""
        servers = self._servers[index] = []
        for (name, _, _), sock in zip(self.config.listeners, self._sockets[index], strict=True):
            context = self._tls.get(name.upper())
            factory = self._connection_factory(name, self._node_ids[index] if self.cluster.several else None)
            if context is None:
                servers.append(await asyncio.get_running_loop().create_server(factory, sock=sock))
            else:
                timeout_s = self.config["connections.max.idle.ms"] / 1000
                servers.append(TlsServer(sock, context, name, factory, timeout_s, self.auth_gate))

    def _connection_factory(self, listener: str, node_id: int | None) -> Callable[[], Connection]:
        """The protocol factory of a listener (of node `node_id` in a several-node cluster): each accepted socket
        becomes a `Connection`, served once it has one of the `max.connections` slots."""
        max_frame_bytes = self.config["socket.request.max.bytes"]
        security = self._security.get(listener.upper())

        def connection() -> Connection:
            return Connection(
                self.dispatcher,
                max_frame_bytes,
                listener,
                self.idle,
                security,
                self.auth_gate,
                opened=self._accept,
                lost=self._connection_lost,
                node_id=node_id,
            )

        return connection

    # -- topics and the offsets topic --------------------------------------------------------------------------

    def _begin_coordinator_topics(self) -> None:
        """`__consumer_offsets` and `__transaction_state` exist from the first start (compacted, Kafka's sizes).

        On a fresh `log.dirs` their names are taken here, before the listeners serve, and their partitions (100 by
        default) are made by `_load_coordinator_topics` while the listeners already answer: until then the
        coordinators are loading (COORDINATOR_LOAD_IN_PROGRESS for their requests) and Metadata does not list the
        topics, as Kafka answers before it has created them."""
        for topic, key in ((OFFSETS_TOPIC, "offsets.topic"), (TRANSACTION_STATE_TOPIC, "transaction.state.log")):
            if self.logs.topic(topic) is None:
                configs = _coordinator_topic_configs(self.config[f"{key}.segment.bytes"])
                factor = self._capped_factor(self.config[f"{key}.replication.factor"])
                partitions = self.config[f"{key}.num.partitions"]
                self._creating[topic] = self.topics.begin_creating(topic, partitions, configs, factor)

    def _coordinator_topics(self) -> dict[int, CoordinatorTopic]:
        """Where FindCoordinator looks: groups on `__consumer_offsets`, transactional ids on `__transaction_state`."""
        cluster = self.cluster
        return {
            GROUP_KEY_TYPE: CoordinatorTopic(
                self.config["offsets.topic.num.partitions"], True, lambda p: cluster.leader_of(OFFSETS_TOPIC, p)
            ),
            TRANSACTION_KEY_TYPE: CoordinatorTopic(
                self.config["transaction.state.log.num.partitions"],
                True,
                lambda p: cluster.leader_of(TRANSACTION_STATE_TOPIC, p),
            ),
        }

    async def _created(self, topic: str) -> str | None:
        """Finish creating a coordinator topic (when it was missing); what went wrong, or None."""
        creation = self._creating.get(topic)
        if creation is None:
            return None
        try:
            await self.topics.in_turn(creation)
        except (StorageError, OSError) as exc:
            log.error("coordinator_topic.create_failed", topic=topic, error=str(exc))  # noqa: TRY400 (one line)
            return f"creating {topic} failed: {exc}"
        finally:
            del self._creating[topic]
        return None

    async def _load_coordinator_topics(self) -> None:
        """Create the coordinator topics that are missing, then load `__consumer_offsets` and `__transaction_state`
        (both exist once `offsets.loaded` is logged, as when they were made before the listeners served); then
        `loaded` is set."""
        offsets_failure = await self._created(OFFSETS_TOPIC)
        transactions_failure = await self._created(TRANSACTION_STATE_TOPIC)
        await self._load_offsets_partitions(offsets_failure)
        await self._load_transaction_partitions(transactions_failure)
        self.loaded.set()

    async def _load_offsets_partitions(self, failed_creation: str | None) -> None:
        """Replay every `__consumer_offsets` partition into the coordinator while the listeners already run.

        Until its partition is loaded a group's requests get COORDINATOR_LOAD_IN_PROGRESS (with Kafka's remapping
        for Heartbeat and SyncGroup, rule #4), and clients retry. Reading and decoding happen in a worker thread;
        only the replay into the coordinator runs on the event loop. Damaged batches are skipped by the reader
        (storage reports each damaged range once); a partition whose load fails for any reason is marked failed
        (NOT_COORDINATOR, the reason logged) and the next partition loads regardless; when the topic could not be
        created (`failed_creation` says why) every partition fails so.
        """
        clock = self.clock
        started = clock.monotonic_ms()
        records_loaded = 0
        for partition in range(self.config["offsets.topic.num.partitions"]):
            if failed_creation is None:
                records_loaded += await self._load_offsets_partition(partition)
            else:
                self.coordinator.fail_loading(partition, failed_creation, clock.monotonic_ms())
            self.rearm_timers()
        failed = sorted(self.coordinator.load_failures())
        log.info("offsets.loaded", records=records_loaded, failed=failed, duration_ms=clock.monotonic_ms() - started)

    async def _load_transaction_partitions(self, failed_creation: str | None) -> None:
        """Replay every `__transaction_state` partition into the transaction coordinator (`TransactionService.load`);
        when the topic could not be created (`failed_creation` says why) every partition fails instead."""
        clock = self.clock
        started = clock.monotonic_ms()
        records_loaded = 0
        if failed_creation is None:
            records_loaded = await self.transactions.load()
        else:
            for partition in self.transactions.partitions:
                self.transactions.coordinator.fail_loading(partition, failed_creation, clock.monotonic_ms())
        failed = sorted(self.transactions.coordinator.load_failures())
        log.info(
            "transactions.loaded", records=records_loaded, failed=failed, duration_ms=clock.monotonic_ms() - started
        )

    async def _load_offsets_partition(self, partition: int) -> int:
        """Load one partition; returns how many records it replayed (0 when it failed). A partition that is no
        longer loading once its records are read (its leadership moved again meanwhile, and it was unloaded or a
        later load finished first) is left as it is."""
        clock = self.clock
        records = await read_for_load(self.coordinator, partition, self.offsets_log.read_all, clock.monotonic_ms)
        if records is None:
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
        self.coordinator.tick(self.clock.monotonic_ms(), self.clock.wall_ms())
        for callback, error in outcomes:
            callback(error)
        self._start_reloads()
        self.rearm_timers()

    def _start_reloads(self) -> None:
        """Load again, from the log, the partitions the coordinator had to unload after a failed write."""
        for partition in self.coordinator.take_reloads():
            self._spawn(self._reload_offsets_partition(partition))

    def _serves_offsets_partition(self, partition: int) -> bool:
        """Whether the node a group request came to leads the group's partition (several nodes only)."""
        return self.cluster.leads_here(OFFSETS_TOPIC, partition)

    def _serves_transaction_partition(self, partition: int) -> bool:
        """Whether the node a transaction request came to leads the id's partition (several nodes only)."""
        return self.cluster.leads_here(TRANSACTION_STATE_TOPIC, partition)

    async def _load_moved_offsets_partition(self, partition: int) -> int:
        """Load a partition whose leadership moved (`broker.node_control`)."""
        loaded = await self._load_offsets_partition(partition)
        self.rearm_timers()
        return loaded

    async def _reload_offsets_partition(self, partition: int) -> None:
        await self._load_offsets_partition(partition)
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
        """Create a topic at once (-1 partitions: `num.partitions`), as Metadata's auto-creation does."""
        return self.topics.create_topic(name, partitions, configs)

    def rearm_timers(self) -> None:
        self.driver.rearm()
        self.fetch_driver.rearm()

    def advance_time(self, ms: int) -> None:
        """Virtual time: move the broker clock forward and fire every timer that became due, without sleeping."""
        self.clock.advance(ms)
        self.driver.fire_now()

    def _accept(self, connection: Connection) -> None:
        if not self._slots.request(connection):
            connection.wait_for_slot()

    def _admit(self, connection: Connection) -> None:
        self.connections_accepted += 1
        self._connections.add(connection)
        connection.start()

    def _connection_lost(self, connection: Connection) -> None:
        admitted = connection in self._connections
        self._connections.discard(connection)
        self._slots.leave(connection, admitted)

    def _all_servers(self) -> list[asyncio.Server | TlsServer]:
        return [server for servers in self._servers.values() for server in servers]

    async def stop(self) -> None:
        for server in self._all_servers():
            server.close()
        # Let requests in flight finish (bounded: a parked JoinGroup may wait much longer), then close.
        for connection in list(self._connections):
            connection.stop_reading()
        in_flight = [c.closed.wait() for c in self._connections]
        if in_flight:
            await asyncio.wait([asyncio.ensure_future(w) for w in in_flight], timeout=SHUTDOWN_GRACE_S)
        for connection in [*self._connections, *self._slots.waiting]:
            connection.close()
        for server in self._all_servers():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(server.wait_closed(), SHUTDOWN_GRACE_S)
        if self.compaction is not None:
            await self.compaction.stop()
        for task in list(self._tasks):
            task.cancel()
        for creation in self._creating.values():
            creation.close()  # rolled back now, before the logs close; a restart creates the topic again
        self.driver.close()
        self.fetch_driver.close()
        self.offsets_log.flush()
        self.fetches.cancel_all()
        self.coordinator.shutdown(self.clock.monotonic_ms(), self.clock.wall_ms())
        self.transactions.log.flush()
        self.transactions.coordinator.shutdown(self.clock.monotonic_ms())
        for callback in self.on_stop:
            callback()
        # A storage error here (a full disk) is logged by the log manager and does not stop the shutdown; the exit
        # status stays 0, as Kafka's does when its log manager's shutdown fails.
        durable = self.logs.close()
        self.dir_lock.release()
        log.info("broker.stopped", durable=durable)
        self.stopped.set()
