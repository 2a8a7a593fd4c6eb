"""The two pictures: total lag per group over time with status bands, and generations/membership over time.

Rendered with matplotlib's Agg backend (no display needed, same output on a server). Groups are ranked so the
busiest fit: the lag picture shows the groups with the most lag, the rebalance picture those with the most
generations, at most :data:`MAX_GROUPS` each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import pandas as pd  # type: ignore[import-untyped]
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from pipeline.tables import read_table

__all__ = ["MAX_GROUPS", "plot_lag", "plot_rebalances"]

MAX_GROUPS = 8
STATUS_COLOURS = {"OK": "#c7e9c0", "WARN": "#fdd49e", "ERR": "#fc9272", "NOTFOUND": "#e0e0e0"}


def _figure(rows: int) -> tuple[Figure, Any]:
    """One panel per group, stacked, sharing the time axis; constrained layout keeps titles off the panels."""
    n = max(1, rows)
    fig, axes = plt.subplots(n, 1, figsize=(11, 1.6 + 2.2 * n), sharex=True, squeeze=False, layout="constrained")
    return fig, axes


def _times(ms: pd.Series) -> pd.Series:
    return pd.to_datetime(ms, unit="ms", utc=True)


def plot_lag(out_dir: Path, path: Path) -> None:
    lag = read_table(out_dir, "group_lag")
    history = read_table(out_dir, "group_status_history", ["group", "tick_ms", "status"])
    groups = list(lag.groupby("group")["total_lag"].max().sort_values(ascending=False).index[:MAX_GROUPS])
    if not groups:
        groups = sorted(history["group"].unique())[:MAX_GROUPS]
    fig, axes = _figure(len(groups))
    for ax, group in zip(axes[:, 0], groups or [None], strict=False):
        if group is None:
            ax.text(0.5, 0.5, "no consumer groups in the log", ha="center", va="center", transform=ax.transAxes)
            continue
        series = lag[lag["group"] == group].sort_values("ts_ms")
        bands = history[history["group"] == group].sort_values("tick_ms")
        _status_bands(ax, bands)
        ax.step(_times(series["ts_ms"]), series["total_lag"], where="post", color="#08519c", linewidth=1.4)
        ax.set_ylabel("lag (records)")
        ax.set_title(f"{group}", loc="left", fontsize=10)
        ax.set_ylim(bottom=0)
    handles = [Rectangle((0, 0), 1, 1, color=c) for c in STATUS_COLOURS.values()]
    fig.legend(handles, list(STATUS_COLOURS), loc="outside upper right", ncol=4, fontsize=8, title="Burrow status")
    axes[-1, 0].xaxis.set_major_formatter(mdates.DateFormatter("%m-%d %H:%M:%S"))  # type: ignore[no-untyped-call]
    fig.suptitle("Total lag per consumer group (LEO - committed, every tick)", x=0.01, ha="left")
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _status_bands(ax: Axes, bands: pd.DataFrame) -> None:
    """Colour the background by the group's status, one span per tick interval."""
    if bands.empty:
        return
    times = list(_times(bands["tick_ms"]))
    statuses = list(bands["status"])
    step = (times[1] - times[0]) if len(times) > 1 else pd.Timedelta(seconds=60)
    for i, (start, status) in enumerate(zip(times, statuses, strict=True)):
        end = times[i + 1] if i + 1 < len(times) else start + step
        ax.axvspan(start, end, color=STATUS_COLOURS.get(status, "#ffffff"), alpha=0.6, linewidth=0)


def plot_rebalances(out_dir: Path, path: Path) -> None:
    rb = read_table(
        out_dir,
        "rebalances",
        ["group", "generation", "ts_ms", "lifetime_ms", "member_count", "joined_count", "left_count"],
    )
    groups = list(rb.groupby("group").size().sort_values(ascending=False).index[:MAX_GROUPS])
    fig, axes = _figure(len(groups))
    for ax, group in zip(axes[:, 0], groups or [None], strict=False):
        if group is None:
            ax.text(0.5, 0.5, "no rebalances in the log", ha="center", va="center", transform=ax.transAxes)
            continue
        g = rb[rb["group"] == group].sort_values("ts_ms")
        starts = _times(g["ts_ms"])
        widths = pd.to_timedelta(g["lifetime_ms"].clip(lower=1), unit="ms")
        colours = ["#bdbdbd" if m == 0 else "#6baed6" for m in g["member_count"]]
        ax.barh(0, widths, left=starts, height=0.5, color=colours, edgecolor="#08306b", linewidth=0.6, alpha=0.7)
        for start, gen, members in zip(starts, g["generation"], g["member_count"], strict=True):
            ax.annotate(
                f"g{gen}\n{members}m", (start, 0), xytext=(3, 0), textcoords="offset points", fontsize=7, va="center"
            )
        ax2 = ax.twinx()
        ends = [*starts, starts.iloc[-1] + widths.iloc[-1]]  # carry the last count to the end of its bar
        counts = [*g["member_count"], g["member_count"].iloc[-1]]
        ax2.step(ends, counts, where="post", color="#d94801", linewidth=1.6)
        ax2.set_ylabel("members", color="#d94801", fontsize=8)
        ax2.set_ylim(bottom=0, top=max(1, int(g["member_count"].max())) + 1)
        ax.set_yticks([])
        ax.set_title(
            f"{group}: {len(g)} generations, {int(g['joined_count'].sum())} joins, {int(g['left_count'].sum())} leaves",
            loc="left",
            fontsize=10,
        )
    axes[-1, 0].xaxis.set_major_formatter(mdates.DateFormatter("%m-%d %H:%M:%S"))  # type: ignore[no-untyped-call]
    fig.suptitle("Generations (bars: lifetime; grey: Empty) and membership (line)", x=0.01, ha="left")
    fig.savefig(path, dpi=100)
    plt.close(fig)
