"""A network partition between one node and one client, without stopping the node (issue #19).

A client cut off from a broker by the network sees its connection stay open while its requests go unanswered: they
time out, the client marks the node unreachable and goes elsewhere (another node for Metadata, a new coordinator
lookup). A node that stops instead drops its connections at once, which is a different failure and takes a
different client path. This fault gives the first one, for one client id and one node: the node reads the client's
requests and holds them unanswered, while it keeps serving every other client, and the client keeps reaching every
other node. Healing lets the held requests through in order (as TCP delivers what it buffered once the network is
back), unless the client gave up and closed the connection meanwhile; its later requests are served at once.

It is a dispatch middleware (`broker/dispatch.py`), so it sees requests once they are decoded and their client id
is known: a SASL handshake before the first request is not held. It costs nothing while no partition is in force
(`wraps` leaves it out of every chain).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from broker.context import RequestContext
from broker.dispatch import Handler, Route

log = structlog.get_logger("toolkit.node_partitions")


@dataclass(slots=True)
class Cut:
    """One node cut off from one client id: the requests it holds wait on `healed`."""

    node_id: int
    client_id: str
    healed: asyncio.Event = field(default_factory=asyncio.Event)
    held: int = 0  # requests held now
    held_total: int = 0  # requests held since the cut began


class NodePartitions:
    """The partitions in force; the dispatch middleware that holds the cut-off clients' requests."""

    def __init__(self, local_node: int, on_change: Callable[[], None]) -> None:
        """`local_node`: the node a connection belongs to when the session names none (a one-node broker);
        `on_change`: told when the set of cuts changes (the dispatcher recomposes its chains)."""
        self._local_node = local_node
        self._on_change = on_change
        self._cuts: dict[tuple[int, str], Cut] = {}

    def cut(self, node_id: int, client_id: str) -> bool:
        """Cut `node_id` off from `client_id`; False when it already was."""
        if (node_id, client_id) in self._cuts:
            return False
        self._cuts[(node_id, client_id)] = Cut(node_id, client_id)
        log.info("fault.node_partitioned", node=node_id, client_id=client_id)
        self._on_change()
        return True

    def heal(self, node_id: int | None = None, client_id: str | None = None) -> list[Cut]:
        """End the cuts of one node and/or one client id (all of them by default); the held requests go on.
        Returns the cuts ended."""
        ended = [
            cut
            for cut in self._cuts.values()
            if (node_id is None or cut.node_id == node_id) and (client_id is None or cut.client_id == client_id)
        ]
        for cut in ended:
            del self._cuts[(cut.node_id, cut.client_id)]
            cut.healed.set()
            log.info(
                "fault.node_partition_healed",
                node=cut.node_id,
                client_id=cut.client_id,
                released=cut.held,
                held_total=cut.held_total,
            )
        if ended:
            self._on_change()
        return ended

    def in_force(self) -> list[dict[str, Any]]:
        """The cuts in force, with how many requests each holds now and has held."""
        return [
            {"node_id": c.node_id, "client_id": c.client_id, "held": c.held, "held_total": c.held_total}
            for c in self._cuts.values()
        ]

    def wraps(self, route: Route) -> bool:
        """Every API goes through this middleware while a cut is in force, none otherwise."""
        return bool(self._cuts)

    async def __call__(self, ctx: RequestContext, route: Route, request: Any, call_next: Handler) -> Any:
        if self._cuts and ctx.client_id is not None:
            node_id = ctx.session.node_id
            cut = self._cuts.get((self._local_node if node_id is None else node_id, ctx.client_id))
            if cut is not None:
                await self._hold(cut, ctx)
        return await call_next(ctx, request)

    async def _hold(self, cut: Cut, ctx: RequestContext) -> None:
        """Wait until the cut heals (or the connection closes: the waiting handler is then cancelled)."""
        cut.held += 1
        cut.held_total += 1
        log.debug("fault.request_held", node=cut.node_id, api_key=ctx.api_key, correlation_id=ctx.correlation_id)
        try:
            await cut.healed.wait()
        finally:
            cut.held -= 1
