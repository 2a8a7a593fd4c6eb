"""The toolkit attached to a broker: faults, the recorder, the rebalance and transaction timelines, the controls,
the control API.

`Toolkit.build(config)` makes a broker with the toolkit's record-log wrapper and attaches the rest through the
server's extension points (middlewares, observers, coordinator event sinks, a timer target on the broker clock,
the transaction marker channel's intercept and observers).
The broker itself never imports any of this. Build it inside the event loop that will run it.
"""

from __future__ import annotations

import functools
import ssl
from typing import TYPE_CHECKING, Any

from broker.app import Broker
from broker.config import BrokerConfig, ConfigError, parse_control_listener
from broker.startup import StartupError
from coordinator.persistence import RecordLog
from toolkit.coordinator_moves import CoordinatorMoves
from toolkit.faults import FailingRecordLog, FaultGate, FaultMiddleware, Faults, Sleeper
from toolkit.group_activity import GroupActivity
from toolkit.marker_faults import MarkerFaults
from toolkit.node_partitions import NodePartitions
from toolkit.recorder import Recorder
from toolkit.timeline.coordinator_nodes import CoordinatorNodes
from toolkit.timeline.model import Timeline
from toolkit.timeline.transactions import TransactionTimeline

if TYPE_CHECKING:
    from toolkit.control_api import ControlApi
    from toolkit.controls import BrokerControls


class Toolkit:
    def __init__(self, broker: Broker, faults: Faults) -> None:
        self.broker = broker
        self.faults = faults
        self.recorder = Recorder(broker.clock.wall_ms)
        # Always on and cheap (bounded), served by the control API when it is configured.
        self.timeline = Timeline(
            broker.clock.monotonic_ms,
            max_groups=broker.config["timeline.max.groups"],
            events_per_group=broker.config["timeline.events.per.group"],
        )
        transactions = broker.transactions
        self.transaction_timeline = TransactionTimeline(
            broker.clock.monotonic_ms,
            transactions.coordinator.transaction,
            max_transactions=broker.config["timeline.max.groups"],
            events_per_transaction=broker.config["timeline.events.per.group"],
        )
        moves = CoordinatorMoves(broker)
        activity = GroupActivity()
        sleeper = Sleeper(broker.clock, broker.rearm_timers)
        broker.driver.add(sleeper)
        self.marker_faults = MarkerFaults(faults, sleeper, broker.clock)
        self.marker_faults.listener = self.transaction_timeline.on_fault
        transactions.channel.intercept = self.marker_faults.intercept
        transactions.channel.observers.append(self.transaction_timeline.on_markers)
        transactions.events.subscribe(self.transaction_timeline.on_event)
        self._moves = moves
        self._activity = activity
        #: Nodes cut off from clients (`partition_node`): outermost, so a held request is held before anything else.
        self.node_partitions = NodePartitions(broker.cluster.node_ids[0], broker.dispatcher.refresh)
        broker.dispatcher.use(self.node_partitions)
        broker.dispatcher.use(FaultMiddleware(faults, sleeper))
        broker.auth_gate = FaultGate(faults)
        broker.dispatcher.use(moves)
        faults.on_change = broker.dispatcher.refresh
        broker.dispatcher.observe(self.timeline)
        broker.dispatcher.observe(self.recorder)
        broker.dispatcher.observe(activity)
        broker.dispatcher.observe(self.transaction_timeline)
        broker.events.subscribe(self.timeline.on_event)
        coordinator_nodes = CoordinatorNodes(
            self.timeline,
            self.transaction_timeline,
            broker.coordinator.partition_for,
            transactions.coordinator.partition_for,
        )
        broker.nodes.events.subscribe(coordinator_nodes.on_event)
        self.control_api: ControlApi | None = None
        #: The server context of an `https://` control listener (`build` makes it), None for `http://`.
        self.control_tls: ssl.SSLContext | None = None

    @functools.cached_property
    def controls(self) -> BrokerControls:
        """The controls (the control API's and the embedded handle's), made when first asked: the module and what
        it imports are not needed to serve, so a broker without `control.listener` starts without them."""
        from toolkit.controls import BrokerControls

        return BrokerControls(
            self.broker, self.faults, self._moves, self._activity, self.marker_faults, self.node_partitions
        )

    @classmethod
    def build(cls, config: BrokerConfig) -> Toolkit:
        """The broker and its toolkit; an `https://` control listener's TLS settings are checked first, as the
        broker's own are, so a refused start writes nothing."""
        faults = Faults()
        listener = config["control.listener"]
        tls = control_tls(config) if listener and listener.startswith("https://") else None

        def wrap(record_log: RecordLog) -> RecordLog:
            return FailingRecordLog(record_log, faults)

        kit = cls(Broker(config, wrap_record_log=wrap), faults)
        kit.control_tls = tls
        return kit

    @property
    def control_url(self) -> str | None:
        """The control API's address (`control.listener` with its port resolved), or None when it is off."""
        return self.control_api.url if self.control_api is not None else None

    def group_timeline_view(self, group_id: str, *, heartbeats: bool = True) -> dict[str, Any] | None:
        """The group's rebalance timeline with its live state and the transactions that sent its offsets (None when
        neither the timeline nor the coordinator knows it); on the broker's loop."""
        clock = self.broker.clock
        now = clock.monotonic_ms()
        view = self.timeline.view(group_id, self.broker.coordinator, now, clock.wall_ms() - now, heartbeats=heartbeats)
        if view is not None:
            view["transactions"] = self.transaction_timeline.transactional_ids_for_group(group_id)
        return view

    def transaction_timeline_view(self, transactional_id: str) -> dict[str, Any] | None:
        """The id's transaction timeline with its live state (None when neither knows it); on the broker's loop."""
        from toolkit.transactions import transaction_snapshot

        broker = self.broker
        clock = broker.clock
        live = transaction_snapshot(
            broker.transactions.coordinator, transactional_id, self.marker_faults.held(transactional_id), clock
        )
        now = clock.monotonic_ms()
        return self.transaction_timeline.view(transactional_id, live, now, clock.wall_ms() - now)

    async def start(self) -> None:
        """Start the broker, then the control API when `control.listener` is set (over TLS for `https://`)."""
        listener = self.broker.config["control.listener"]
        await self.broker.start()
        if listener:
            from toolkit.control_api import ControlApi  # aiohttp costs ~0.2 s of import: only when asked for

            self.control_api = ControlApi(self)
            host, port = parse_control_listener(listener, token=self.control_api.token is not None)
            await self.control_api.start(host, port, self.control_tls)

    async def stop(self) -> None:
        if self.control_api is not None:
            await self.control_api.stop()
        await self.broker.stop()


def control_tls(config: BrokerConfig) -> ssl.SSLContext:
    """The server context of an `https://` control listener: Kafka's `ssl.*` keys, broker-wide or as
    `listener.name.control.ssl.*` (with `ssl.client.auth=required`, callers need a client certificate too)."""
    from broker.tls import server_context

    try:
        return server_context(config.listener_values("control"))
    except ConfigError as exc:
        raise StartupError(f"control.listener (https): {exc}") from None
