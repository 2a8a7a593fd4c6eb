"""Run the real broker as a child process (`python server.py`), as users and CI do, on an ephemeral port.

End-to-end tests talk to it with real clients over TCP on 127.0.0.1. The broker prints `BOOTSTRAP=` alone on
stdout and logs to stderr; both are captured here as one stream (`output`), so tests read its JSON log lines too.
The process can be stopped gracefully, killed with SIGKILL (crash tests) and restarted on the same log directory.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Small timeouts keep group tests fast; clients still send Kafka's own protocol, only quicker.
FAST_GROUPS = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "500",
    "offsets.topic.num.partitions": "10",
    "num.partitions": "6",
}


class BrokerProcess:
    def __init__(self, data_dir: Path, overrides: dict[str, str] | None = None, port: int = 0) -> None:
        self.data_dir = data_dir
        self.overrides = {**FAST_GROUPS, **(overrides or {})}
        self.port = port
        self.process: subprocess.Popen[str] | None = None
        self.output: list[str] = []
        self.bootstrap = ""

    def start(self, timeout_s: float = 20.0, *, wait_loaded: bool = True) -> str:
        args = [sys.executable, str(ROOT / "server.py")]
        settings = {"listeners": f"PLAINTEXT://127.0.0.1:{self.port}", "log.dirs": str(self.data_dir), **self.overrides}
        for key, value in settings.items():
            args += ["--override", f"{key}={value}"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_")}
        self.output = []
        self.process = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT
        )
        ready = threading.Event()

        def pump() -> None:
            assert self.process is not None and self.process.stdout is not None
            for line in self.process.stdout:
                self.output.append(line)
                if line.startswith("BOOTSTRAP="):
                    self.bootstrap = line.strip().split("=", 1)[1]
                    ready.set()
            ready.set()

        self._pump = threading.Thread(target=pump, daemon=True)
        self._pump.start()
        if not ready.wait(timeout_s) or not self.bootstrap:
            self.kill()
            raise RuntimeError("broker did not start:\n" + "".join(self.output[-50:]))
        self.port = int(self.bootstrap.rsplit(":", 1)[1])  # restarts keep the same port
        if wait_loaded:
            # Until `__consumer_offsets` is replayed, group requests get COORDINATOR_LOAD_IN_PROGRESS; tests that
            # are not about loading start once it is done.
            wait_until(lambda: any('"offsets.loaded"' in line for line in self.output), timeout_s)
        return self.bootstrap

    def stop(self, timeout_s: float = 20.0) -> int:
        """SIGTERM and wait: the graceful path, which must exit 0."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout_s)
        self._release()
        return code

    def _release(self) -> None:
        """Drain the output thread and close the pipe, so no file handle outlives the process."""
        self._pump.join(5)
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()

    def kill(self) -> None:
        """SIGKILL: nothing gets flushed or closed; what was acknowledged must survive anyway."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self._release()  # also when it had already exited (e.g. a refused configuration): no pipe outlives it

    def restart(self) -> str:
        if self.process is not None and self.process.poll() is None:
            self.stop()
        return self.start()

    def log_lines(self) -> list[str]:
        return list(self.output)


def run_server(*overrides: str, timeout_s: float = 30.0) -> subprocess.CompletedProcess[str]:
    """Run `python server.py --override ...` expecting it to exit by itself (start-up refused): output and code."""
    args = [sys.executable, str(ROOT / "server.py")]
    for item in overrides:
        args += ["--override", item]
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_")}
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout_s, cwd=ROOT, env=env, check=False)


@contextmanager
def running_broker(data_dir: Path, overrides: dict[str, str] | None = None) -> Iterator[BrokerProcess]:
    broker = BrokerProcess(data_dir, overrides)
    broker.start()
    try:
        yield broker
    finally:
        if broker.process is not None and broker.process.poll() is None:
            try:
                broker.stop()
            except subprocess.TimeoutExpired:
                broker.kill()


def wait_until(
    predicate: Callable[[], object],
    timeout_s: float = 20.0,
    interval_s: float = 0.05,
    *,
    what: str = "a condition",
    detail: Callable[[], str] | None = None,
    step: Callable[[], object] | None = None,
) -> None:
    """Poll a condition instead of sleeping a fixed time; at the deadline fail naming `what`, with `detail()`.

    Between two checks it sleeps `interval_s`, or, given a `step`, takes it instead: the poll of the client whose
    progress the condition waits for (a consumer joins, rebalances and fetches only inside its poll). A step must
    itself return in bounded time (a poll with a timeout). The one blocking wait of the test suite
    (`wait_until_async` is the one for async tests).
    """
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(_timed_out(what, timeout_s, detail))
        if step is None:
            time.sleep(interval_s)
        else:
            step()


async def wait_until_async(
    predicate: Callable[[], object],
    timeout_s: float = 20.0,
    interval_s: float = 0.05,
    *,
    what: str = "a condition",
    detail: Callable[[], str] | None = None,
    step: Callable[[], Awaitable[object]] | None = None,
) -> None:
    """`wait_until` for async tests: polls without blocking the event loop the clients run on; a `step` is awaited
    (an aiokafka consumer rebalances only inside `getmany`)."""

    async def check() -> object:
        return predicate()

    await wait_until_awaited(check, timeout_s, interval_s, what=what, detail=detail, step=step)


async def wait_until_awaited(
    predicate: Callable[[], Awaitable[object]],
    timeout_s: float = 20.0,
    interval_s: float = 0.05,
    *,
    what: str = "a condition",
    detail: Callable[[], str] | None = None,
    step: Callable[[], Awaitable[object]] | None = None,
) -> None:
    """`wait_until_async` for a condition that needs requests to check (an async predicate)."""
    deadline = time.monotonic() + timeout_s
    while not await predicate():
        if time.monotonic() > deadline:
            raise AssertionError(_timed_out(what, timeout_s, detail))
        if step is None:
            await asyncio.sleep(interval_s)
        else:
            await step()


def _timed_out(what: str, timeout_s: float, detail: Callable[[], str] | None) -> str:
    extra = f"\n{detail()}" if detail is not None else ""
    return f"timed out after {timeout_s:g}s waiting for {what}{extra}"


def control_url(broker: BrokerProcess) -> str:
    """The `CONTROL=http://host:port` line the broker prints after `BOOTSTRAP=`."""
    found: list[str] = []

    def printed() -> bool:
        found[:] = [line.strip().split("=", 1)[1] for line in broker.log_lines() if line.startswith("CONTROL=")]
        return bool(found)

    wait_until(printed, timeout_s=10)
    return found[0]
