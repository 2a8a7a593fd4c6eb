"""Which listener a connection came in on, and the address each listener advertises.

Kafka answers Metadata, FindCoordinator and DescribeCluster with the endpoints of the listener the request arrived
on (a client that reached the broker through `EXTERNAL` must be told the `EXTERNAL` address, never the internal
one). The listener is a property of the connection, so it is carried in a context variable set once by the
connection's task: every handler that builds a node address reads it through `ClusterView` without each handler
having to pass the listener along. Timers run in a fresh context and see the first listener, but no timer answers
with an address.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar

#: The name (upper-cased, as Kafka normalises it) of the listener serving the current connection; None outside one.
current_listener: ContextVar[str | None] = ContextVar("current_listener", default=None)
#: The node id serving the current connection in a several-node cluster (`cluster.nodes`); None on one node.
current_node: ContextVar[int | None] = ContextVar("current_node", default=None)

Endpoint = tuple[str, str, int]


class AdvertisedListeners:
    """Per listener name, the host and port given to clients: its `advertised.listeners` entry, or (as Kafka
    falls back to `listeners`) the bound address. Port 0 means the port the OS gave that listener. The names were
    checked with the configuration (`broker.config.check_advertised_names`).

    In a several-node cluster (`cluster.nodes`) node i (its index, 0 for the first) binds and advertises each
    listener's port plus i, and a port 0 stays the one the OS gave that node's listener."""

    def __init__(
        self, bound: Sequence[Endpoint], advertised: Sequence[Endpoint], ports: Callable[[int], list[int]]
    ) -> None:
        self._names = [name.upper() for name, _, _ in bound]
        self._ports = ports
        self._advertised = {name.upper(): (host, port) for name, host, port in [*bound, *advertised]}

    def address(self, listener: str | None = None, node_index: int = 0) -> tuple[str, int]:
        """The advertised (host, port) of `listener` on the node `node_index`, by default the listener serving the
        current connection."""
        name = (listener or current_listener.get() or self._names[0]).upper()
        host, port = self._advertised[name]
        return host or "127.0.0.1", port + node_index if port else self._ports(node_index)[self._names.index(name)]
