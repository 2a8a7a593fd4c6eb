"""The broker process: `python server.py [server.properties] [--override key=value ...]`, configured like Kafka.

Installs uvloop, configures structlog (to stderr, or the `log.file`), starts the broker and runs until
SIGTERM/SIGINT, then shuts down gracefully (stop accepting, finish in-flight requests, flush storage) and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

import uvloop

from broker.config import BrokerConfig, ConfigError, load_config
from broker.logging import LOG_LEVELS, LogFile, configure_logging
from broker.startup import StartupError, os_cause
from cli import startup_imports
from toolkit.kit import Toolkit


def parse_args(argv: list[str], prog: str = "server.py") -> argparse.Namespace:
    """The arguments; `prog` is what the user typed (`server.py`, or `group-broker serve` through the CLI)."""
    parser = argparse.ArgumentParser(prog=prog, description="group-broker: a Kafka-protocol broker")
    parser.add_argument("properties", nargs="?", type=Path, help="a Kafka server.properties file")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE", help="set a config key")
    parser.add_argument(
        "--log-level", default="info", type=str.lower, choices=LOG_LEVELS, help="logged to stderr (default: info)"
    )
    return parser.parse_args(argv)


async def serve(config: BrokerConfig) -> None:
    """Run the broker (with the toolkit: the timeline, and the control API when `control.listener` is set)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    kit = Toolkit.build(config)
    await kit.start()
    print(f"BOOTSTRAP={kit.broker.bootstrap_servers}", flush=True)
    if kit.control_url is not None:
        print(f"CONTROL={kit.control_url}", flush=True)
    await stop.wait()
    await kit.stop()


def open_log_file(path: str) -> LogFile:
    """The `log.file` stream (appended, line-buffered, created by the first line logged: a start that the later
    checks refuse leaves no file), or StartupError naming the file and the cause."""
    log_file = LogFile(path)
    try:
        log_file.check()
    except OSError as exc:
        raise StartupError(f"cannot write the log file {path} ('log.file'): {os_cause(exc)}") from None
    return log_file


def main(argv: list[str], prog: str = "server.py") -> int:
    startup_imports.settle()
    args = parse_args(argv, prog)
    try:
        config = load_config(args.properties, args.override)
    except (ConfigError, OSError) as exc:
        print(f"group-broker: configuration error: {exc}", file=sys.stderr)
        return 2
    try:
        log_stream = open_log_file(config["log.file"]) if config["log.file"] else None
    except StartupError as exc:
        print(f"group-broker: {exc}", file=sys.stderr)
        return 2
    configure_logging(args.log_level, stream=log_stream)
    try:
        uvloop.run(serve(config))
    except StartupError as exc:
        print(f"group-broker: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
