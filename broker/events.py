"""The coordinator's events, tapped: an extension point for whatever wants to follow groups (metrics, timelines).

The coordinator is handed `Events(EventTap(logger))` and stays sans-IO: it only logs. Every event also goes to the
subscribed sinks, which the server (its metrics) and the toolkit (the rebalance timeline) add.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from coordinator.events import EventLogger

EventSink = Callable[[str, dict[str, Any]], None]
_log = structlog.get_logger("broker.events")


class EventTap:
    """An `EventLogger` that forwards every coordinator event to the real logger and to the subscribed sinks."""

    __slots__ = ("_inner", "_sinks")

    def __init__(self, inner: EventLogger) -> None:
        self._inner = inner
        self._sinks: tuple[EventSink, ...] = ()

    def subscribe(self, sink: EventSink) -> None:
        self._sinks = (*self._sinks, sink)

    def _tap(self, event: str, kw: dict[str, Any]) -> None:
        for sink in self._sinks:
            try:
                sink(event, kw)
            except Exception:  # an observability bug must never break the coordinator mid-transition
                _log.exception("event_tap.sink_failed", event_name=event)

    def info(self, event: str, **kw: Any) -> Any:
        self._tap(event, kw)
        return self._inner.info(event, **kw)

    def warning(self, event: str, **kw: Any) -> Any:
        self._tap(event, kw)
        return self._inner.warning(event, **kw)

    def debug(self, event: str, **kw: Any) -> Any:
        self._tap(event, kw)
        return self._inner.debug(event, **kw)
