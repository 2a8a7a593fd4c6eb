"""structlog set-up: logs go to stderr (stdout is kept for the `BOOTSTRAP=` / `CONTROL=` lines scripts read), as JSON
lines when stderr is not a terminal (CI, docker, files), a readable console otherwise.

Connection tasks bind `conn_id`, `peer` and `client_id` with contextvars, so every line a request causes, including
the coordinator's group events, says which connection it came from.

Test runs (the embedded broker of the pytest plugin) log warnings and above only, so a failing test is not buried
under partition loading; `GROUP_BROKER_LOG_LEVEL=debug` (or info) asks for more.
"""

from __future__ import annotations

import datetime
import errno
import json as json_module
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO, cast

import structlog
from structlog.typing import EventDict

TEST_LOG_LEVEL_VARIABLE = "GROUP_BROKER_LOG_LEVEL"
TEST_LOG_LEVEL_DEFAULT = "WARNING"
#: structlog's method names and their levels (`exception` logs at error level)
_METHOD_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "msg": logging.INFO,
    "warning": logging.WARNING,
    "warn": logging.WARNING,
    "error": logging.ERROR,
    "exception": logging.ERROR,
    "critical": logging.CRITICAL,
    "fatal": logging.CRITICAL,
}
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


def _level_number(level: str) -> int:
    number = _METHOD_LEVELS.get(level.lower())
    if number is None:
        raise ValueError(f"unknown log level {level!r}: expected {', '.join(LOG_LEVELS)}")
    return number


def _processors(json: bool) -> list[Any]:
    renderer: Any = structlog.processors.JSONRenderer(serializer=_dumps) if json else structlog.dev.ConsoleRenderer()
    return [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        utc_timestamp,
        structlog.processors.format_exc_info,
        renderer,
    ]


_UTC = datetime.UTC
#: The last second formatted, and its text: every event of that second reuses it.
_second: list[Any] = [None, ""]


def utc_timestamp(_logger: Any, _method: str, event_dict: EventDict) -> EventDict:
    """`TimeStamper(fmt="iso", utc=True)`'s `timestamp`, character for character ("2026-11-24T19:55:25.833814Z",
    no fraction on a whole second, as `datetime.isoformat` writes it), with the date and time of day formatted
    once a second instead of once an event: a group's join logs several events, and the stamp was a fifth of each."""
    event_dict["timestamp"] = format_utc(time.time())
    return event_dict


def format_utc(now: float) -> str:
    """`now` (seconds since the epoch) as `datetime.fromtimestamp(now, UTC).isoformat()` with "Z" for "+00:00"."""
    second = int(now)
    micros = round((now - second) * 1_000_000)
    if micros >= 1_000_000:
        second, micros = second + 1, micros - 1_000_000
    if _second[0] != second:
        _second[0], _second[1] = second, datetime.datetime.fromtimestamp(second, _UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{_second[1]}.{micros:06d}Z" if micros else f"{_second[1]}Z"


#: One JSON encoder per `default` function: `json.dumps` with a `default` builds a new encoder for every call.
_encoders: dict[Callable[[Any], Any], json_module.JSONEncoder] = {}


def _dumps(event_dict: EventDict, *, default: Callable[[Any], Any]) -> str:
    """`json.dumps(event_dict, default=default)` (what `JSONRenderer` calls), with the encoder made once."""
    encoder = _encoders.get(default)
    if encoder is None:
        encoder = _encoders[default] = json_module.JSONEncoder(default=default)
    return encoder.encode(event_dict)


class LogFile:
    """The `log.file` stream: appended to, line by line, but created only by the first line logged.

    The start-up checks (busy port, locked data directory) must create nothing when they refuse the start, and
    nothing is logged before they pass, so the file appears only for a broker that starts. `check` proves up front
    that the file can be written without creating it: an existing file is opened at once, a new one needs a
    writable directory (`access` reports a read-only mount too, even to root)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._stream: TextIO | None = None

    def check(self) -> None:
        """Raise OSError (naming the path) when the file could not be written; creates nothing."""
        if os.path.exists(self.path):
            self._open()
            return
        parent = os.path.dirname(self.path) or "."
        if not os.path.isdir(parent):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), self.path)
        if not os.access(parent, os.W_OK | os.X_OK):
            cause = errno.EROFS if _read_only(parent) else errno.EACCES
            raise PermissionError(cause, os.strerror(cause), self.path)

    def _open(self) -> TextIO:
        if self._stream is None:
            self._stream = open(self.path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - the process's log
        return self._stream

    def write(self, text: str) -> int:
        return self._open().write(text)

    def flush(self) -> None:
        if self._stream is not None:
            self._stream.flush()

    def isatty(self) -> bool:
        return False


def _read_only(directory: str) -> bool:
    return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)


def configure_logging(level: str = "INFO", *, json: bool | None = None, stream: TextIO | LogFile | None = None) -> None:
    """The broker process's logging: `level` and above to `stream` (stderr by default)."""
    out = sys.stderr if stream is None else stream
    structlog.configure(
        processors=_processors(not out.isatty() if json is None else json),
        wrapper_class=structlog.make_filtering_bound_logger(_level_number(level)),
        logger_factory=structlog.PrintLoggerFactory(cast(TextIO, out)),  # a LogFile has the write/flush it uses
        cache_logger_on_first_use=True,
    )


def configure_test_logging(environ: Mapping[str, str] | None = None, stream: TextIO | None = None) -> None:
    """Logging for a broker embedded in a test run: warnings and above on stderr, unless the variable asks for more.

    A structlog configuration the user's project already made is kept as it is. The level is a processor, not
    the bound logger's filter, so `structlog.testing.capture_logs()` (which replaces the processors) still sees
    every event.
    """
    if structlog.is_configured():
        return
    env = os.environ if environ is None else environ
    threshold = _level_number(env.get(TEST_LOG_LEVEL_VARIABLE, TEST_LOG_LEVEL_DEFAULT))

    def below_threshold(_logger: Any, method: str, event: structlog.typing.EventDict) -> structlog.typing.EventDict:
        if _METHOD_LEVELS.get(method, logging.INFO) < threshold:
            raise structlog.DropEvent
        return event

    out = sys.stderr if stream is None else stream
    structlog.configure(
        processors=[below_threshold, *_processors(json=False)],
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=False,
    )
