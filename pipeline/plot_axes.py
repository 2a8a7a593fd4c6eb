"""What both pictures share: the UTC time axis, the status colours, and keeping text labels from overlapping.

Times are epoch milliseconds in the tables; matplotlib's date numbers are days since its epoch (1970-01-01 by
default), converted through numpy's ``datetime64`` so the epoch setting is respected. The axis formatter is
given UTC explicitly: matplotlib otherwise formats in ``rcParams["timezone"]``, which a user's matplotlibrc may
set to their local zone while every time in the report is UTC.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

__all__ = ["STATUS_COLOURS", "STATUS_ORDER", "drop_overlapping", "mpl_dates", "utc_time_axis"]

#: Burrow's statuses from best to worst, the legend's order.
STATUS_ORDER = ("OK", "WARN", "STOP", "STALL", "REWIND", "ERR", "NOTFOUND")
#: One distinct colour per status (ColorBrewer hues, light enough for a background band under the lag line).
STATUS_COLOURS = {
    "OK": "#a1d99b",
    "WARN": "#fed976",
    "STOP": "#fb6a4a",
    "STALL": "#bcbddc",
    "REWIND": "#f768a1",
    "ERR": "#fdae6b",
    "NOTFOUND": "#d9d9d9",
}


def mpl_dates(ms: Iterable[int]) -> np.ndarray:
    """Epoch milliseconds -> matplotlib date numbers."""
    days = mdates.date2num(np.asarray(list(ms), dtype="datetime64[ms]"))  # type: ignore[no-untyped-call]
    return np.asarray(days, dtype=float)


def utc_time_axis(ax: Axes) -> None:
    """Date and time ticks in UTC on ``ax``'s x axis, labelled so; the offset text carries the date."""
    locator = mdates.AutoDateLocator(tz=UTC)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=UTC))  # type: ignore[no-untyped-call]
    ax.set_xlabel("time (UTC)")


#: Space kept between two labels, in pixels, so neighbours read as two words and not one.
_GAP_PX = 3


def _overlaps(box: Bbox, kept: Sequence[Bbox]) -> bool:
    return any(box.overlaps(other) for other in kept)


def drop_overlapping(fig: Figure, texts: Sequence[Text], fixed: Sequence[Text] = ()) -> None:
    """Hide each of ``texts`` (in order of priority) that would overlap a shown one or any of ``fixed``.

    Matplotlib places text where it is told and never checks collisions; thinning the labels on the drawn
    figure (the renderer knows each label's real extent) keeps the ones that fit instead of guessing a spacing.
    """
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    kept = [t.get_window_extent(renderer) for t in fixed if t.get_visible() and t.get_text()]
    for text in texts:
        box = text.get_window_extent(renderer).padded(_GAP_PX)
        if _overlaps(box, kept):
            text.set_visible(False)
        else:
            kept.append(box)
