"""Small ``picture_*`` frames with known contents, for drawing the pictures without Spark.

``lag_frames`` is two groups over 30 minutes: one going OK -> WARN -> STOP with a rebalance and a commit stop,
one STALL -> REWIND. ``churn_generations`` is a group of four static members through ``n`` generations where
every other generation one member is away (it left, and rejoins at the next one).
"""

from __future__ import annotations

import pandas as pd  # type: ignore[import-untyped]

__all__ = ["AS_OF_MS", "MINUTE", "START_MS", "churn_generations", "lag_frames"]

START_MS = 1_764_046_800_000  # 2025-11-25T05:00:00Z
MINUTE = 60_000
AS_OF_MS = START_MS + 30 * MINUTE + 12_345  # deliberately not on a tick


def lag_frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(lag, bands, markers) as :mod:`pipeline.picture_data` writes them."""
    ticks = [START_MS + i * MINUTE for i in range(31)] + [AS_OF_MS]
    lag = pd.DataFrame(
        [
            {"group": g, "rank": r, "ts_ms": t, "total_lag": (i * 7 if g == "orders" else 50 + i % 5)}
            for r, g in enumerate(("orders", "billing"))
            for i, t in enumerate(ticks)
        ]
    )
    runs = [
        ("orders", 0, "OK", 0, 10),
        ("orders", 0, "WARN", 10, 20),
        ("orders", 0, "STOP", 20, None),
        ("billing", 1, "STALL", 0, 15),
        ("billing", 1, "REWIND", 15, None),
    ]
    bands = pd.DataFrame(
        [
            {
                "group": g,
                "rank": r,
                "status": s,
                "start_ms": START_MS + a * MINUTE,
                "end_ms": AS_OF_MS if b is None else START_MS + b * MINUTE,
            }
            for g, r, s, a, b in runs
        ]
    )
    markers = pd.DataFrame(
        [
            {"group": "orders", "kind": "rebalance", "ts_ms": START_MS + 5 * MINUTE, "generation": 2},
            {"group": "orders", "kind": "commit-stop", "ts_ms": START_MS + 17 * MINUTE, "generation": None},
            {"group": "billing", "kind": "rebalance", "ts_ms": START_MS + 8 * MINUTE, "generation": 3},
        ]
    )
    return lag, bands, markers


def churn_generations(n: int, lifetime_ms: int = 30_000) -> pd.DataFrame:
    """``n`` generations of group ``churn`` (rank 0), as :mod:`pipeline.picture_data` writes them."""
    members = ["consumer-1", "consumer-2", "consumer-3", "consumer-4"]
    rows, previous = [], list[str]()
    for generation in range(1, n + 1):
        away = members[(generation // 2) % 4] if generation % 2 == 0 else None
        current = [m for m in members if m != away]
        rows.append(
            {
                "group": "churn",
                "rank": 0,
                "generations": n,
                "generation": generation,
                "ts_ms": START_MS + generation * lifetime_ms,
                "lifetime_ms": lifetime_ms,
                "member_count": len(current),
                "member_ids": current,
                "joined": [m for m in current if m not in previous],
                "left": [m for m in previous if m not in current],
                "became_empty": False,
            }
        )
        previous = current
    return pd.DataFrame(rows)
