"""`python -m bench.profile_heartbeat [--profile FILE] [--reads N] [--depth D] [--groups G] [--override k=v]`: our
broker's CPU per Heartbeat without a socket or a load generator in the figure.

The broker runs in this process with its toolkit, as `server.py` runs it (every request observer and middleware the
toolkit installs). `G` single-member classic groups are formed over a real connection (the JoinGroup and SyncGroup
path), then frames of their Heartbeat v3 are handed straight to one broker `Connection`, `D` per read (`D` = 16: the
pipelined row of `bench_targets`; `D` = 1 to 3: what each read carries in its 10,000-member row), through a transport
that only counts what is written. What is timed is exactly the broker's own work per read: frame split, decode,
dispatch, the coordinator, the observers, encode, and the batched write call (not the system call behind it, which
the floor of `bench/floors.py` measures with the rest of the stack). Prints microseconds per heartbeat (best of 5);
`--profile FILE` writes a cProfile of one more pass (`python -m bench.profiles` reads its directory). Figures only.
Not a benchmark module (no `bench_` prefix): `python -m bench` does not run it.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.wire_load import (
    HEARTBEAT_VERSION,
    ROOT,
    Connection,
    GroupRun,
    request_frame,
    run_async,
)
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.registry import ApiKey

SESSION_TIMEOUT_MS = 30_000


class CountingTransport:
    """The broker connection's transport: writes are counted, never sent."""

    def __init__(self) -> None:
        self.writes = 0
        self.bytes = 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 1)}.get(name, default)

    def write(self, data: bytes) -> None:
        self.writes += 1
        self.bytes += len(data)

    def writelines(self, parts: list[bytes]) -> None:
        self.writes += 1
        self.bytes += sum(len(p) for p in parts)

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        return

    def resume_reading(self) -> None:
        return

    def close(self) -> None:
        raise RuntimeError("the broker closed the measured connection: a heartbeat was refused")


async def measure(
    reads: int, depth: int, groups: int, profile: Path | None, overrides: Sequence[str] = ()
) -> list[float]:
    from broker.config import load_config
    from broker.connection import Connection as BrokerConnection
    from toolkit.kit import Toolkit

    with tempfile.TemporaryDirectory(prefix="profile-heartbeat-") as tmp:
        config = load_config(
            None,
            ["listeners=PLAINTEXT://127.0.0.1:0", f"log.dirs={tmp}", "group.initial.rebalance.delay.ms=0", *overrides],
        )
        kit = Toolkit.build(config)
        await kit.start()
        try:
            broker = kit.broker
            await asyncio.wait_for(broker.loaded.wait(), 60)  # groups are served once __consumer_offsets is loaded
            host, port = broker.bootstrap_servers.split(",")[0].rsplit(":", 1)
            client = await Connection.open(host, int(port))
            runs = [
                GroupRun(f"profile-hb-{g}", [client], SESSION_TIMEOUT_MS, SESSION_TIMEOUT_MS) for g in range(groups)
            ]
            for run in runs:
                await run.form()
            frames = [
                request_frame(
                    ApiKey.HEARTBEAT,
                    HEARTBEAT_VERSION,
                    HeartbeatRequest(group_id=run.group_id, generation_id=run.generation, member_id=run.member_ids[0]),
                    correlation_id=g,
                )
                for g, run in enumerate(runs)
            ]
            per_read = [b"".join(frames[(r * depth + i) % groups] for i in range(depth)) for r in range(groups)]
            connection = BrokerConnection(broker.dispatcher, 1 << 20)
            transport = CountingTransport()
            connection.connection_made(transport)  # type: ignore[arg-type]
            figures = [_pass(connection, per_read, reads) / (reads * depth) * 1e6 for _ in range(5)]
            if profile is not None:
                profiler = cProfile.Profile()
                profiler.runcall(_pass, connection, per_read, reads)
                profiler.dump_stats(str(profile))
            assert transport.bytes > 0
            client.close()
            return figures
        finally:
            await kit.stop()


def _pass(connection: Any, per_read: list[bytes], reads: int) -> float:
    feed = connection.data_received
    count = len(per_read)
    started = time.process_time()
    for r in range(reads):
        feed(per_read[r % count])
    return time.process_time() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile_heartbeat")
    parser.add_argument("--reads", type=int, default=20_000)
    parser.add_argument("--depth", type=int, default=16)
    parser.add_argument("--groups", type=int, default=50)
    parser.add_argument("--profile", type=Path)
    parser.add_argument("--override", action="append", default=[], help="a broker setting, key=value")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from broker.logging import configure_logging

    with open(os.devnull, "w") as devnull:
        configure_logging("info", json=True, stream=devnull)  # as server.py logs (JSON lines), thrown away
        figures = run_async(measure(args.reads, args.depth, args.groups, args.profile, args.override))
    print(
        f"heartbeats: {args.depth} per read, {args.groups} groups: {min(figures):.2f} us of CPU each (best of 5;"
        f" all: {', '.join(f'{f:.2f}' for f in figures)})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
