"""What a handler knows about the request it serves and the connection it came on.

`ConnectionSession` is per connection and mutable: the client id, the peer, the listener and the principal
(`User:ANONYMOUS`, the mapped certificate name on mutual TLS, or `User:<name>` once SASL authenticated it; the SASL
state itself is the connection's authenticator, broker/security/authenticator.py), so handlers and the authoriser
have one place to look.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class ConnectionSession:
    conn_id: int
    peer_host: str
    peer_port: int
    listener: str = "PLAINTEXT"
    #: The node of a several-node cluster that accepted the connection (`cluster.nodes`); None on one node.
    node_id: int | None = None
    client_id: str | None = None
    principal: str = "User:ANONYMOUS"
    #: The client certificate's distinguished name on a mutual-TLS connection (what principal mapping rules read).
    peer_dn: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class RequestContext:
    session: ConnectionSession
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None

    @property
    def client_host(self) -> str:
        """Kafka reports member hosts as `/<address>`."""
        return f"/{self.session.peer_host}"
