"""A recorder of every request and response, per client: what a test asserts protocol behaviour on.

Off by default (it keeps every decoded request and response); the test toolkit and the control API turn it on.
It is one of the dispatcher's request observers, and stamps each exchange with the broker clock's wall time.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from broker.context import RequestContext
from broker.responses import error_codes
from protocol.registry import ApiKey


@dataclass(frozen=True, slots=True)
class Exchange:
    at_ms: int
    conn_id: int
    client_id: str | None
    api_key: int
    api_version: int
    correlation_id: int
    request: Any
    response: Any
    error_codes: tuple[int, ...]
    #: Who sent it: the connection's principal (`User:CN=...` on mutual TLS, `User:ANONYMOUS` without) and listener.
    principal: str = "User:ANONYMOUS"
    listener: str = "PLAINTEXT"
    #: The node of a several-node cluster that served it (`cluster.nodes`); None on one node.
    node_id: int | None = None

    @property
    def api(self) -> str:
        return ApiKey(self.api_key).name

    def summary(self) -> dict[str, Any]:
        return {
            "at_ms": self.at_ms,
            "conn_id": self.conn_id,
            "client_id": self.client_id,
            "api": self.api,
            "api_version": self.api_version,
            "correlation_id": self.correlation_id,
            "error_codes": list(self.error_codes),
            "group_id": getattr(self.request, "group_id", None),
            "principal": self.principal,
            "listener": self.listener,
            "node_id": self.node_id,
        }


class Recorder:
    def __init__(self, now_ms: Callable[[], int], capacity: int = 100_000) -> None:
        self.enabled = False
        self._now_ms = now_ms
        self._exchanges: deque[Exchange] = deque(maxlen=capacity)

    def observes(self, api_key: int) -> tuple[bool, bool]:
        """Every answer (while `enabled`, checked per answer: it is switched on and off at run time)."""
        return False, True

    def request_started(self, ctx: RequestContext, api_key: int, request: Any) -> None:
        return

    def request_finished(
        self, ctx: RequestContext, api_key: int, request: Any, response: Any, elapsed_s: float
    ) -> None:
        if not self.enabled:
            return
        self.record(
            Exchange(
                self._now_ms(),
                ctx.session.conn_id,
                ctx.client_id,
                api_key,
                ctx.api_version,
                ctx.correlation_id,
                request,
                response,
                tuple(error_codes(response)) if response is not None else (),
                ctx.session.principal,
                ctx.session.listener,
                ctx.session.node_id,
            )
        )

    def record(self, exchange: Exchange) -> None:
        self._exchanges.append(exchange)

    def exchanges(
        self,
        *,
        api: ApiKey | int | None = None,
        client_id: str | None = None,
        group_id: str | None = None,
        principal: str | None = None,
    ) -> list[Exchange]:
        return [
            e
            for e in self._exchanges
            if (api is None or e.api_key == api)
            and (client_id is None or e.client_id == client_id)
            and (group_id is None or getattr(e.request, "group_id", None) == group_id)
            and (principal is None or e.principal == principal)
        ]

    def clear(self) -> None:
        self._exchanges.clear()

    def summaries(self, exchanges: Iterable[Exchange] | None = None) -> list[dict[str, Any]]:
        return [e.summary() for e in (self._exchanges if exchanges is None else exchanges)]
