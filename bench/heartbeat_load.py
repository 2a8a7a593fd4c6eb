"""Classic Heartbeats pumped from a load generator in its own process, so that the client is not the bottleneck.

`bench_targets` forms the groups in its own process, then hands a `HeartbeatPlan` (which members each connection
heartbeats for, how many requests each connection keeps in flight, the windows) to a child process,
`python -m bench.heartbeat_load`, as JSON on stdin; the child opens its own connections, pumps Heartbeat v3 with
`wire_load.Connection.pump` (the next request written from inside `data_received`, `depth` pipelined per
connection) and prints one JSON line per window on stdout. On a 2-core machine the broker and the generator then
each get a core of their own instead of sharing the benchmark's interpreter.

Classic heartbeats are not bound to a connection, so the members formed on the parent's connections heartbeat over
the child's. Every frame on one connection carries the same correlation id (Kafka does not require them to be
unique), which lets the answer check stay a fixed-offset read.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from bench.bench_broker import _heartbeat_ok
from bench.wire_load import (
    HEARTBEAT_VERSION,
    ROOT,
    Connection,
    PumpWindow,
    open_connections,
    pump_window,
    raise_fd_limit,
    request_frame,
    run_async,
)
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.registry import ApiKey

FIRST_CORRELATION_ID = 1000
#: Heartbeat v3 answer (header v0): throttle_time_ms precedes error_code.
ERROR_AT = 4


@dataclass(frozen=True)
class Member:
    group_id: str
    generation: int
    member_id: str


@dataclass
class HeartbeatPlan:
    """What the child does: `connections[i]` lists the members connection i heartbeats for, in turn."""

    host: str
    port: int
    connections: list[list[Member]]
    depth: int
    window_s: float
    windows: int
    server_pid: int = 0

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> HeartbeatPlan:
        raw = json.loads(text)
        raw["connections"] = [[Member(**m) for m in members] for members in raw["connections"]]
        return cls(**raw)


def spread(members: Sequence[Member], connections: int) -> list[list[Member]]:
    """`members` dealt round-robin over `connections` connections (connection i gets members i, i+n, ...)."""
    return [list(members[c::connections]) for c in range(min(connections, len(members)))]


def frames_for(members: Sequence[Member], correlation_id: int) -> list[bytes]:
    return [
        request_frame(
            ApiKey.HEARTBEAT,
            HEARTBEAT_VERSION,
            HeartbeatRequest(group_id=m.group_id, generation_id=m.generation, member_id=m.member_id),
            correlation_id=correlation_id,
        )
        for m in members
    ]


async def pump(plan: HeartbeatPlan) -> list[PumpWindow]:
    """The plan's windows, measured here (in the child)."""
    conns: list[Connection] = await open_connections(plan.host, plan.port, len(plan.connections))
    frames = [frames_for(members, FIRST_CORRELATION_ID + i) for i, members in enumerate(plan.connections)]
    checks = [_heartbeat_ok(FIRST_CORRELATION_ID + i, ERROR_AT) for i in range(len(conns))]
    windows = []
    try:
        for _ in range(plan.windows):
            windows.append(await pump_window(conns, frames, checks, plan.window_s, plan.server_pid or None, plan.depth))
    finally:
        for conn in conns:
            conn.close()
    return windows


def run_in_child(plan: HeartbeatPlan, timeout_s: float = 300.0) -> list[PumpWindow]:
    """Run `plan` in `python -m bench.heartbeat_load` and return its windows (its stderr on failure)."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.heartbeat_load"],
        input=plan.to_json(),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout_s,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"heartbeat load generator failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return [PumpWindow(**json.loads(line)) for line in done.stdout.splitlines() if line.strip()]


def main() -> int:
    plan = HeartbeatPlan.from_json(sys.stdin.read())
    raise_fd_limit(len(plan.connections) + 256)
    for window in run_async(pump(plan)):
        print(json.dumps(asdict(window)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
