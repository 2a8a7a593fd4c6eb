"""Burrow's 16 evaluator test vectors (``TestCachingEvaluator_CheckRules``, linkedin/Burrow master), verbatim.

Offsets are (offset, timestamp ms, lag or None); ``now_s`` is in seconds as in Burrow's tests. Vectors 8, 11 and
12 cannot come out of replaying a log (current lag 0 below a stored lag, nil lags, a repeated commit), so only the
rule functions see them; the others are also turned into logs by ``tests/pipeline/scenarios.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.rules import Status, WindowEntry


@dataclass(frozen=True)
class Vector:
    index: int
    window: tuple[WindowEntry, ...]
    brokers: tuple[int, ...]
    current_lag: int
    now_s: int
    allowed_lag: int
    expected: Status


def _w(*entries: tuple[int, int, int | None]) -> tuple[WindowEntry, ...]:
    return tuple(WindowEntry(o, t, lag) for o, t, lag in entries)


_BASE = _w((1000, 100000, 0), (2000, 200000, 50), (3000, 300000, 100), (4000, 400000, 150), (5000, 500000, 200))
_LAGGING = _w((1000, 100000, 50), (2000, 200000, 100), (3000, 300000, 150), (4000, 400000, 200), (5000, 500000, 250))
_STUCK_ZERO = _w((1000, 100000, 0), (1000, 200000, 50), (1000, 300000, 100), (1000, 400000, 150), (1000, 500000, 200))
_STUCK = _w((1000, 100000, 100), (1000, 200000, 150), (1000, 300000, 200), (1000, 400000, 250), (1000, 500000, 300))
_FLAT = _w((1000, 100000, 100), (1000, 200000, 100), (1000, 300000, 100), (1000, 400000, 100), (1000, 500000, 100))
_REWOUND = _w((1000, 100000, 100), (2000, 200000, 150), (3000, 300000, 200), (2000, 400000, 1250), (4000, 500000, 300))
_NOT_BACK = _w((1000, 100000, 100), (2000, 200000, 150), (3000, 300000, 200), (2000, 400000, 1250), (2500, 500000, 300))
_FAST = tuple(
    WindowEntry(792748079 + i, ts, 0)
    for i, ts in enumerate(
        (
            1512224618356,
            1512224619362,
            1512224620366,
            1512224621367,
            1512224622370,
            1512224623373,
            1512224624378,
            1512224625379,
            1512224626383,
            1512224627383,
            1512224628383,
            1512224629388,
            1512224630391,
            1512224631394,
            1512224632397,
        )
    )
)
_NILS = _w(
    (1000, 100000, 0),
    (1500, 150000, None),
    (2000, 200000, 50),
    (2500, 250000, None),
    (3000, 300000, 100),
    (3500, 350000, None),
    (4000, 400000, 150),
    (4500, 450000, None),
    (5000, 500000, 200),
    (5500, 550000, None),
)

VECTORS = (
    Vector(0, _BASE, (5200,), 200, 600, 0, Status.OK),
    Vector(1, _BASE, (5200,), 200, 900, 0, Status.OK),
    Vector(2, _BASE, (5200,), 200, 1000, 0, Status.STOP),
    Vector(3, _LAGGING, (5250,), 250, 1000, 0, Status.STOP),
    Vector(4, _STUCK_ZERO, (1200,), 200, 600, 0, Status.OK),
    Vector(5, _STUCK, (1300,), 300, 600, 0, Status.STALL),
    Vector(6, _FLAT, (1100,), 100, 600, 0, Status.STALL),
    Vector(7, _REWOUND, (4300,), 300, 600, 0, Status.OK),
    Vector(8, _LAGGING, (5250,), 0, 1000, 0, Status.OK),
    Vector(9, _FAST, (792749024, 792749000, 792748800, 792748600, 792748500), 931, 1512224650, 0, Status.STOP),
    Vector(10, _FAST, (792748094, 792748093, 792748093, 792748093), 1, 1512224650, 0, Status.OK),
    Vector(11, _NILS, (5700,), 200, 600, 0, Status.OK),
    Vector(12, _w((1000, 100000, 2), (2000, 200000, 1), (2000, 300000, 1)), (2001,), 1, 550, 1, Status.OK),
    Vector(13, _STUCK, (1300,), 300, 600, 99, Status.STALL),
    Vector(14, _REWOUND, (4300,), 300, 600, 99, Status.OK),
    Vector(15, _NOT_BACK, (4300,), 300, 600, 0, Status.REWIND),
)

#: The vectors a replayed log can produce (see the module docstring).
LOG_VECTORS = tuple(v for v in VECTORS if v.index not in (8, 11, 12))
