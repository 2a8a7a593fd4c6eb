"""``lag.png``: total lag per group over time, on bands of the group's Burrow status, with event markers.

Drawn from the ``picture_*`` tables (:mod:`pipeline.picture_data`, aggregated in Spark): one panel per chosen
group, sharing a UTC time axis that ends at the as-of time. The band colour is the detailed status (STOP, STALL
or REWIND rather than Burrow's group-level ERR) and each run of one status is one band, clipped at as-of.
Dashed vertical lines mark generation changes (rebalances); red triangles on the top edge mark where a
partition's commits stopped (the last commit before STOP fired). Rendered with the Agg backend (no display).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd  # type: ignore[import-untyped]
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from pipeline.plot_axes import STATUS_COLOURS, STATUS_ORDER, mpl_dates, utc_time_axis
from pipeline.rebalance_plot import rebalance_figure
from pipeline.tables import read_table

__all__ = ["lag_figure", "plot_lag", "plot_rebalances"]

#: The tables the lag picture reads and the columns it needs from each.
_COLUMNS = {
    "picture_lag": ["group", "rank", "ts_ms", "total_lag"],
    "picture_bands": ["group", "rank", "status", "start_ms", "end_ms"],
    "picture_markers": ["group", "kind", "ts_ms", "generation"],
}
REBALANCE_STYLE: dict[str, Any] = {"color": "#252525", "linestyle": (0, (4, 3)), "linewidth": 0.9}
STOP_STYLE: dict[str, Any] = {"color": "#a50f15", "marker": "v", "markersize": 8, "linestyle": "none"}


def _as_of(out_dir: Path) -> int:
    return int(json.loads((out_dir / "inputs.json").read_text(encoding="utf-8"))["as_of_ms"])


def _ranked_groups(*frames: pd.DataFrame) -> list[str]:
    """Groups in the order Spark ranked them (``rank`` column), from whichever frames mention them."""
    ranks = pd.concat([f[["group", "rank"]] for f in frames if not f.empty], ignore_index=True)
    if ranks.empty:
        return []
    return list(ranks.drop_duplicates("group").sort_values(["rank", "group"])["group"])


def _status_bands(ax: Axes, bands: pd.DataFrame, as_of_ms: int) -> None:
    """One span per run of a status; the end is clipped at as-of (the tables already end there)."""
    for run in bands.itertuples():
        start, end = mpl_dates([run.start_ms, min(int(run.end_ms), as_of_ms)])
        ax.axvspan(start, end, color=STATUS_COLOURS.get(run.status, "#ffffff"), alpha=0.75, linewidth=0, gid="band")


def _markers(ax: Axes, marks: pd.DataFrame) -> None:
    rebalances = marks[marks["kind"] == "rebalance"]
    if not rebalances.empty:
        ax.vlines(
            mpl_dates(rebalances["ts_ms"]),
            0,
            1,
            transform=ax.get_xaxis_transform(),
            gid="rebalances",
            **REBALANCE_STYLE,
        )
    stops = marks[marks["kind"] == "commit-stop"]
    if not stops.empty:
        x = mpl_dates(stops["ts_ms"])
        ax.plot(x, [1.0] * len(x), transform=ax.get_xaxis_transform(), clip_on=False, gid="commit-stops", **STOP_STYLE)


def _legend_handles(bands: pd.DataFrame, marks: pd.DataFrame) -> list[Artist]:
    present = set(bands["status"])
    handles: list[Artist] = [Patch(color=STATUS_COLOURS[s], alpha=0.75, label=s) for s in STATUS_ORDER if s in present]
    if (marks["kind"] == "rebalance").any():
        handles.append(Line2D([], [], label="rebalance (new generation)", **REBALANCE_STYLE))
    if (marks["kind"] == "commit-stop").any():
        handles.append(Line2D([], [], label="commits stopped", **STOP_STYLE))
    return handles


def lag_figure(lag: pd.DataFrame, bands: pd.DataFrame, marks: pd.DataFrame, as_of_ms: int) -> Figure:
    """The lag picture from the ``picture_lag``, ``picture_bands`` and ``picture_markers`` frames."""
    groups = _ranked_groups(lag, bands)
    fig, axes = plt.subplots(
        max(1, len(groups)),
        1,
        figsize=(12, 1.8 + 2.2 * max(1, len(groups))),
        sharex=True,
        squeeze=False,
        layout="constrained",
    )
    panels: list[Axes] = list(axes[:, 0])
    if not groups:
        panels[0].text(
            0.5, 0.5, "no consumer groups in the log", ha="center", va="center", transform=panels[0].transAxes
        )
    for ax, group in zip(panels, groups, strict=False):
        _status_bands(ax, bands[bands["group"] == group], as_of_ms)
        series = lag[lag["group"] == group].sort_values("ts_ms")
        ax.step(mpl_dates(series["ts_ms"]), series["total_lag"], where="post", color="#08306b", linewidth=1.4)
        _markers(ax, marks[marks["group"] == group])
        ax.set_ylabel("lag (records)")
        ax.set_ylim(bottom=0)
        ax.set_title(group, loc="left", fontsize=10, pad=9)  # room for the commit-stop triangles on the top edge
    if groups:
        first = min(bands["start_ms"].min(), lag["ts_ms"].min()) if not lag.empty else bands["start_ms"].min()
        panels[0].set_xlim(*mpl_dates([int(first), as_of_ms]))
    utc_time_axis(panels[-1])
    handles = _legend_handles(bands, marks)
    if handles:
        fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), fontsize=8)
    fig.suptitle(
        "Total lag per consumer group (log-end offset - committed, every tick) on its Burrow status", x=0.01, ha="left"
    )
    return fig


def _save(fig: Figure, path: Path) -> None:
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_lag(out_dir: Path, path: Path) -> None:
    lag, bands, marks = (read_table(out_dir, name, columns) for name, columns in _COLUMNS.items())
    _save(lag_figure(lag, bands, marks, _as_of(out_dir)), path)


def plot_rebalances(out_dir: Path, path: Path) -> None:
    _save(rebalance_figure(read_table(out_dir, "picture_generations"), _as_of(out_dir)), path)
