"""Profile our broker while a consumer-protocol (KIP-848) group of N members forms, as `python -m bench broker` does.

    PYTHONPATH=$PWD .venv/bin/python -m bench.profile_consumer_formation [--members 1000] [--runs 2] \
        [--budget 120] [--profile out.prof]

Starts `python server.py` with the benchmark's settings (`bench.peers.OURS_SETTINGS`), under cProfile when
`--profile` is given (the profile is written when the broker exits on SIGTERM), creates topic bench-cg-N with N
partitions, forms `--runs` fresh groups of N members with `bench.consumer_group_load` (each then leaves), and prints
each formation's time, the heartbeats sent, and how many broker log lines each event name had (e.g.
`offsets_log.append_failed`). Not a `bench_*` module: `make bench` does not run it; it exists to find where the
broker's time goes, so the top of the profile is printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import pstats
import sys
import tempfile
import time
from pathlib import Path

from bench.consumer_group_load import ConsumerGroupRun, consumer_heartbeat_version
from bench.group_protocols import consumer_topic
from bench.peers import OURS_SETTINGS, ensure_topics, ours_loaded
from bench.wire_load import ServerProcess, open_connections, raise_fd_limit, run_async


async def _formations(server: ServerProcess, members: int, runs: int, budget_s: float) -> list[tuple[float, int, int]]:
    """(seconds, heartbeats sent, heartbeats retried) per formation; a formation still running after `budget_s`
    prints how far it got and ends the runs (the broker is then stopped, so its profile covers that window)."""
    version = consumer_heartbeat_version(server.host, server.port)
    connections = await open_connections(server.host, server.port, members)
    results = []
    try:
        for run in range(runs):
            group = ConsumerGroupRun(
                f"profile-cg-{members}-{run}-{time.time_ns()}",
                connections,
                topic=consumer_topic(members),
                partitions=members,
                version=version,
                rebalance_timeout_ms=6000,
            )
            try:
                seconds = await asyncio.wait_for(group.form(), budget_s)
            except TimeoutError:
                print(
                    f"  run {run}: not formed after {budget_s:g} s: {len(group._settled)} of {members} members"
                    f" settled, {group.heartbeats_sent / members:.2f} heartbeats/member, {group.retried} retried"
                )
                break
            results.append((seconds, group.heartbeats_sent, group.retried))
            print(
                f"  run {run}: {seconds * 1e3:,.1f} ms, {group.heartbeats_sent / members:.2f} heartbeats/member,"
                f" {group.retried} retried",
                flush=True,
            )
            await group.leave()
    finally:
        for connection in connections:
            connection.close()
    return results


def _events(lines: list[str]) -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    for line in lines:
        try:
            counts[json.loads(line).get("event", "?")] += 1
        except (ValueError, AttributeError):
            continue
    return counts


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--members", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--profile", type=Path, help="run the broker under cProfile, writing this file")
    parser.add_argument("--budget", type=float, default=120.0, help="seconds a formation may take")
    parser.add_argument("--top", type=int, default=25, help="profile entries printed, by cumulative time")
    args = parser.parse_args(argv)
    raise_fd_limit(4 * args.members + 256)
    with tempfile.TemporaryDirectory(prefix="bench-profile-cg-") as tmp:
        server = ServerProcess.ours(Path(tmp), OURS_SETTINGS)
        if args.profile is not None:
            server.argv[1:1] = ["-m", "cProfile", "-o", str(args.profile.resolve())]
        server.start()
        print(f"broker pid {server.pid}", flush=True)
        try:
            ours_loaded(server)
            run_async(ensure_topics(server, {consumer_topic(args.members): args.members}, create=True))
            run_async(_formations(server, args.members, args.runs, args.budget))
        finally:
            server.stop(timeout_s=120)
    print("broker log events:")
    for event, count in _events(server.lines).most_common(20):
        print(f"  {count:>9,}  {event}")
    if args.profile is not None:
        stats = pstats.Stats(str(args.profile))
        stats.sort_stats("cumulative").print_stats(args.top)
        stats.sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
