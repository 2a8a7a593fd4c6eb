"""``rebalances.png``: who was in each group when, and how many, across its generations.

Per group two panels share the UTC time axis. The upper one has a row per member (``group.instance.id`` when
static, else member id, as in the ``rebalances`` table) with a bar while it was in the group, a green triangle
where it joined and a red cross where it left; dashed lines and ``g<N>`` labels mark the generations. The lower
one is the member count, on integer ticks. It stays readable at 100 generations: the generation labels that
would overlap another label are left out (the lines are all drawn), and a group with more members than
``MAX_MEMBER_ROWS`` shows its most recent members and says how many are not shown (as the title says when only
the newest :data:`pipeline.picture_data.MAX_GENERATIONS` generations were kept).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd  # type: ignore[import-untyped]
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Text
from matplotlib.ticker import MaxNLocator

from pipeline.plot_axes import drop_overlapping, mpl_dates, utc_time_axis

__all__ = ["MAX_MEMBER_ROWS", "member_label", "rebalance_figure"]

#: Member rows per group: at 0.22 inch a row, more would make one group's panel taller than a page.
MAX_MEMBER_ROWS = 30
_ROW_INCHES = 0.22
_COUNT_INCHES = 1.0
JOIN_STYLE: dict[str, Any] = {"marker": ">", "color": "#238b45", "markersize": 6, "linestyle": "none"}
LEAVE_STYLE: dict[str, Any] = {
    "marker": "x",
    "color": "#cb181d",
    "markersize": 6,
    "markeredgewidth": 1.5,
    "linestyle": "none",
}
GENERATION_STYLE: dict[str, Any] = {"color": "#737373", "linestyle": (0, (4, 3)), "linewidth": 0.6}


def member_label(member: str, width: int = 28) -> str:
    """A member id short enough for a row label: Kafka's ``client-id-<uuid>`` keeps its head and its tail."""
    if len(member) <= width:
        return member
    tail = width // 3
    return f"{member[: width - tail - 1]}…{member[-tail:]}"


def _members(gens: pd.DataFrame) -> tuple[list[str], int]:
    """Member rows, in order of first appearance; the most recently seen ones when there are too many."""
    first_seen: dict[str, int] = {}
    last_seen: dict[str, int] = {}
    for i, ids in enumerate(gens["member_ids"]):
        for m in ids:
            first_seen.setdefault(m, i)
            last_seen[m] = i
    ordered = sorted(first_seen, key=lambda m: (first_seen[m], m))
    if len(ordered) <= MAX_MEMBER_ROWS:
        return ordered, 0
    recent = set(sorted(ordered, key=lambda m: (-last_seen[m], m))[:MAX_MEMBER_ROWS])
    return [m for m in ordered if m in recent], len(ordered) - MAX_MEMBER_ROWS


def _swimlanes(ax: Axes, gens: pd.DataFrame, members: Sequence[str]) -> None:
    row = {m: i for i, m in enumerate(members)}
    starts = mpl_dates(gens["ts_ms"])
    ends = mpl_dates(gens["ts_ms"] + gens["lifetime_ms"])
    spans: dict[str, list[tuple[float, float]]] = {m: [] for m in members}
    for start, end, ids in zip(starts, ends, gens["member_ids"], strict=True):
        for m in ids:
            if m in spans:
                spans[m].append((start, end - start))
    for m, segments in spans.items():
        ax.broken_barh(segments, (row[m] - 0.3, 0.6), facecolors="#6baed6", edgecolor="none")
    for column, style, gid in (("joined", JOIN_STYLE, "joins"), ("left", LEAVE_STYLE, "leaves")):
        points = [(x, row[m]) for x, ids in zip(starts, gens[column], strict=True) for m in ids if m in row]
        if points:
            xs, ys = zip(*points, strict=True)
            ax.plot(xs, ys, gid=gid, **style)
    ax.vlines(starts, 0, 1, transform=ax.get_xaxis_transform(), gid="generations", **GENERATION_STYLE)
    ax.set_yticks(range(len(members)), [member_label(m) for m in members], fontsize=7)
    ax.set_ylim(len(members) - 0.5, -0.5)


def _generation_labels(ax: Axes, gens: pd.DataFrame) -> list[Text]:
    """``g<N>`` above each generation line; the newest first, since thinning keeps labels in this order."""
    labels: list[Text] = []
    for x, generation in zip(mpl_dates(gens["ts_ms"]), gens["generation"], strict=True):
        labels.append(
            ax.annotate(
                f"g{generation}",
                (x, 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=7,
                gid="generation-label",
            )
        )
    return labels[::-1]


def _member_counts(ax: Axes, gens: pd.DataFrame) -> None:
    ends = gens["ts_ms"] + gens["lifetime_ms"]
    x = mpl_dates([*gens["ts_ms"], ends.iloc[-1]])
    counts = [*gens["member_count"], gens["member_count"].iloc[-1]]  # the last count lasts to the end of its bar
    ax.step(x, counts, where="post", color="#d94801", linewidth=1.5)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=4))
    ax.set_ylim(0, max(1, int(gens["member_count"].max())) + 0.5)
    ax.set_ylabel("members", fontsize=8)


def _title(group: str, gens: pd.DataFrame, hidden_members: int) -> str:
    total = int(gens["generations"].iloc[0])
    shown = "" if total == len(gens) else f" (the newest {len(gens)} drawn)"
    more = f"; {hidden_members} earlier members not shown" if hidden_members else ""
    joins, leaves = int(gens["joined"].map(len).sum()), int(gens["left"].map(len).sum())
    return f"{group}: {total} generations{shown}, {joins} joins, {leaves} leaves{more}"


def _legend(fig: Figure) -> None:
    handles = [
        Line2D([], [], label="joined", **JOIN_STYLE),
        Line2D([], [], label="left", **LEAVE_STYLE),
        Line2D([], [], label="generation change", **GENERATION_STYLE),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=8)


def rebalance_figure(rows: pd.DataFrame, as_of_ms: int) -> Figure:
    """The rebalance picture from the ``picture_generations`` frame (one row per generation of each chosen group)."""
    groups = list(rows.sort_values(["rank", "group"])["group"].drop_duplicates()) if not rows.empty else []
    per_group = {g: rows[rows["group"] == g].sort_values("ts_ms").reset_index(drop=True) for g in groups}
    lanes = {g: _members(gens) for g, gens in per_group.items()}
    ratios = [x for g in groups for x in (0.4 + _ROW_INCHES * max(1, len(lanes[g][0])), _COUNT_INCHES)] or [1.0]
    fig = plt.figure(figsize=(12, 1.2 + 0.45 * len(groups) + sum(ratios)), layout="constrained")
    grid = fig.add_gridspec(len(ratios), 1, height_ratios=ratios)
    if not groups:
        ax = fig.add_subplot(grid[0])
        ax.text(0.5, 0.5, "no rebalances in the log", ha="center", va="center", transform=ax.transAxes)
        return fig
    axes: list[Axes] = []
    for i in range(len(ratios)):
        axes.append(fig.add_subplot(grid[i], sharex=axes[0] if axes else None))
    labels: list[list[Text]] = []
    titles: list[Text] = []
    for k, group in enumerate(groups):
        gens = per_group[group]
        members, hidden = lanes[group]
        lane_ax, count_ax = axes[2 * k], axes[2 * k + 1]
        _swimlanes(lane_ax, gens, members)
        labels.append(_generation_labels(lane_ax, gens))
        _member_counts(count_ax, gens)
        titles.append(lane_ax.set_title(_title(group, gens, hidden), loc="left", fontsize=10, pad=14))
    for ax in axes[:-1]:
        ax.tick_params(labelbottom=False)
    first = int(rows["ts_ms"].min())
    axes[0].set_xlim(*mpl_dates([first - max(1, (as_of_ms - first) // 100), as_of_ms]))
    utc_time_axis(axes[-1])
    _legend(fig)
    fig.suptitle("Generations per group: members (bars), joins and leaves, member count", x=0.01, ha="left")
    fig.canvas.draw()  # lay out first: thinning needs the labels' final extents
    for group_labels, title in zip(labels, titles, strict=True):
        drop_overlapping(fig, group_labels, fixed=[title])
    return fig
