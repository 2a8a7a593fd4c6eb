"""The README's API table, generated so that it cannot drift from the code: for every API the codec speaks
(`protocol.registry`), the versions it decodes and encodes, and the versions this broker serves, which are the
dispatcher's registrations and so what ApiVersions advertises (but for routes registered with `advertise=False`).

    python -m broker.api_table      # prints the table the README carries under "Versions the codec speaks"

The served ranges are read off a broker started on a temporary directory and port, the only place where every
handler's registration (and its caps) comes together.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from structlog.testing import capture_logs

from broker.app import Broker
from broker.config import BrokerConfig
from protocol.registry import APIS

NOT_SERVED = "-"


def served_ranges() -> dict[int, tuple[int, int]]:
    """api_key -> (lowest, highest) version a freshly started broker serves (and advertises)."""

    async def probe() -> dict[int, tuple[int, int]]:
        with tempfile.TemporaryDirectory() as tmp:
            config = BrokerConfig({"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": str(Path(tmp) / "data")})
            broker = Broker(config)
            await broker.start()
            try:
                return {key: (r.min_version, r.max_version) for key, r in broker.dispatcher.routes.items()}
            finally:
                await broker.stop()

    with capture_logs():  # the probe broker's start and stop are not part of the table
        return asyncio.run(probe())


def _versions(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}-{hi}"


def markdown_table(served: dict[int, tuple[int, int]] | None = None) -> str:
    """One row per API the codec speaks, by key: its name, key, the codec's versions and the served ones."""
    served = served_ranges() if served is None else served
    rows = ["| API | key | codec | served |", "|---|---|---|---|"]
    for key, spec in sorted(APIS.items()):
        name = spec.request.name.removesuffix("Request")
        route = served.get(key)
        shown = NOT_SERVED if route is None else _versions(*route)
        rows.append(f"| {name} | {key} | {_versions(spec.min_version, spec.max_version)} | {shown} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown_table())
