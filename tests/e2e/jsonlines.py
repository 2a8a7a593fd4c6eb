"""A child process driven over JSON lines: requests on its stdin, replies and events on its stdout.

The kafkajs scripts (tests/e2e/js) and the Java client programs (tests/reference/clients) speak the same protocol:
`{"id", "op", ...}` -> `{"id", "result"|"error"}`, plus `{"event", ...}` lines of their own.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.broker_process import ROOT

Event = dict[str, Any]


class JsonLinesChild:
    """One child process whose stdout is JSON lines, parsed by a reader thread; stderr goes to a file."""

    def __init__(self, argv: list[str], log_dir: Path, name: str) -> None:
        self.name = name
        self.stderr_path = log_dir / f"{name}.stderr.log"
        self._stderr = self.stderr_path.open("w")
        self.events: list[Event] = []
        self.eof = False
        self._cond = threading.Condition()
        self._ids = itertools.count(1)
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                text=True,
                cwd=ROOT,
            )
        except BaseException:
            self._stderr.close()
            raise
        self._reader = threading.Thread(target=self._read, name=f"{name}-stdout", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                event = {"event": "unparsed", "line": line}
            with self._cond:
                self.events.append(event)
                self._cond.notify_all()
        with self._cond:
            self.eof = True
            self._cond.notify_all()

    def stderr_tail(self, lines: int = 30) -> str:
        self._stderr.flush()
        text = self.stderr_path.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def wait_for(self, predicate: Callable[[list[Event]], Any], timeout_s: float, what: str) -> Any:
        """Block until `predicate(events)` is truthy and return it; fail if the script exits first or time runs out."""
        result = self.wait_at_most(predicate, timeout_s, what)
        if not result:
            raise AssertionError(f"{self.name}: {what} not within {timeout_s}s\nstderr:\n{self.stderr_tail()}")
        return result

    def wait_at_most(self, predicate: Callable[[list[Event]], Any], timeout_s: float, what: str) -> Any:
        """`wait_for` that returns the predicate's falsy value when time runs out (a poll that found nothing);
        the script exiting first still fails."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while True:
                result = predicate(self.events)
                if result:
                    return result
                if self.eof:
                    raise AssertionError(
                        f"{self.name} exited ({self.proc.poll()}) before {what}; "
                        f"last events {self.events[-5:]}\nstderr:\n{self.stderr_tail()}"
                    )
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return result
                self._cond.wait(remaining)

    def wait_event(self, kind: str, timeout_s: float = 30.0) -> Event:
        return self.wait_for(lambda evs: next((e for e in evs if e.get("event") == kind), None), timeout_s, kind)

    def of_kind(self, kind: str) -> list[Event]:
        with self._cond:
            return [e for e in self.events if e.get("event") == kind]

    def request(self, op: str, timeout_s: float = 30.0, **args: Any) -> Event:
        """Send `{"id", "op", **args}` and return the whole reply: `{"id", "result"}` or `{"id", "error"}`."""
        request_id = next(self._ids)
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"id": request_id, "op": op, **args}) + "\n")
        self.proc.stdin.flush()
        reply: Event = self.wait_for(
            lambda evs: next((e for e in evs if e.get("id") == request_id), None), timeout_s, f"reply to {op}"
        )
        return reply

    def call(self, op: str, timeout_s: float = 30.0, **args: Any) -> Any:
        """`request`, failing the test on an error reply."""
        reply = self.request(op, timeout_s, **args)
        if "error" in reply:
            raise AssertionError(f"{self.name} {op} failed: {reply['error']}\nstderr:\n{self.stderr_tail()}")
        return reply["result"]

    def terminate(self) -> None:
        """SIGTERM: the scripts' clean shutdown (disconnect, LeaveGroup for a consumer)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def close(self, timeout_s: float = 20.0) -> int:
        """Graceful stop (stdin closed), SIGKILL if that does not finish in time; always releases every pipe."""
        try:
            if self.proc.stdin is not None:
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
            try:
                code = self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                code = self.proc.wait(10)
            return code
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(10)
            self._reader.join(10)
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            self._stderr.close()
