"""The pictures, checked on matplotlib's figure objects: what a reader sees, asserted without looking at pixels.

Drawn from small known frames (:mod:`tests.pipeline.picture_frames`), no Spark: the time axis is UTC with the
date, status bands stop at as-of and each status has its own labelled colour, rebalances and commit stops are
marked where they happened, and at 100 generations no two texts overlap and member counts are whole numbers.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator

import matplotlib
import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.text import Text

from pipeline.plot_axes import mpl_dates
from pipeline.plots import lag_figure
from pipeline.rebalance_plot import member_label, rebalance_figure
from tests.pipeline.picture_frames import AS_OF_MS, MINUTE, START_MS, churn_generations, lag_frames


@pytest.fixture
def lag_fig() -> Iterator[Figure]:
    fig = lag_figure(*lag_frames(), AS_OF_MS)
    yield fig
    plt.close(fig)


def _panels(fig: Figure) -> list[Axes]:
    return [ax for ax in fig.axes if ax.get_title(loc="left")]


def _x(ms: int) -> float:
    return float(mpl_dates([ms])[0])


def _ms(x: float) -> int:
    """A matplotlib date number back to epoch ms (exact comparisons; approx on day numbers is minutes wide)."""
    return round(mdates.num2date(x).timestamp() * 1000)


def test_time_axis_shows_utc_date_and_time_whatever_the_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(matplotlib.rcParams, "timezone", "Asia/Kolkata")  # a user's matplotlibrc: UTC+05:30
    fig = lag_figure(*lag_frames(), AS_OF_MS)
    fig.canvas.draw()
    axis = fig.axes[-1].xaxis
    assert "UTC" in axis.get_label_text()
    formatter = axis.get_major_formatter()
    assert isinstance(formatter, mdates.ConciseDateFormatter)
    at_five = _x(START_MS)  # 05:00:00Z, 10:30 in Kolkata
    labels = formatter.format_ticks([at_five, _x(START_MS + 10 * MINUTE), _x(START_MS + 20 * MINUTE)])
    assert labels[1:] == ["05:10", "05:20"]
    assert formatter.get_offset() == "2025-Nov-25"
    plt.close(fig)


def test_status_bands_end_at_as_of_even_when_a_run_reaches_past_it() -> None:
    lag, bands, markers = lag_frames()
    bands.loc[bands["end_ms"] == AS_OF_MS, "end_ms"] = AS_OF_MS + 5 * MINUTE  # an older table's last band
    fig = lag_figure(lag, bands, markers, AS_OF_MS)
    for ax in _panels(fig):
        spans = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_gid() == "band"]
        ends = [p.get_x() + p.get_width() for p in spans]
        assert max(ends) == pytest.approx(_x(AS_OF_MS), abs=1e-9)
        assert ax.get_xlim()[1] == pytest.approx(_x(AS_OF_MS), abs=1e-9)
    plt.close(fig)


def test_each_status_present_is_labelled_with_its_own_colour(lag_fig: Figure) -> None:
    legend = lag_fig.legends[0]
    labels = [t.get_text() for t in legend.get_texts()]
    statuses = ["OK", "WARN", "STOP", "STALL", "REWIND"]
    assert labels[:5] == statuses
    assert "ERR" not in labels and "NOTFOUND" not in labels  # only what is drawn
    handles = dict(zip(labels, legend.legend_handles, strict=True))
    faces = {s: to_hex(handles[s].get_facecolor()) for s in statuses}
    assert len(set(faces.values())) == len(statuses)
    by_panel = {ax.get_title(loc="left"): ax for ax in _panels(lag_fig)}
    drawn = {to_hex(p.get_facecolor()) for p in by_panel["billing"].patches if p.get_gid() == "band"}
    assert drawn == {faces["STALL"], faces["REWIND"]}


def test_rebalances_and_commit_stops_are_marked_where_they_happened(lag_fig: Figure) -> None:
    by_panel = {ax.get_title(loc="left"): ax for ax in _panels(lag_fig)}
    orders = by_panel["orders"]
    (lines,) = [c for c in orders.collections if c.get_gid() == "rebalances"]
    assert isinstance(lines, LineCollection)
    assert [seg[0][0] for seg in lines.get_segments()] == pytest.approx([_x(START_MS + 5 * MINUTE)])
    (stops,) = [line for line in orders.lines if line.get_gid() == "commit-stops"]
    assert list(stops.get_xdata()) == pytest.approx([_x(START_MS + 17 * MINUTE)])
    assert not [line for line in by_panel["billing"].lines if line.get_gid() == "commit-stops"]
    labels = [t.get_text() for t in lag_fig.legends[0].get_texts()]
    assert labels[-2:] == ["rebalance (new generation)", "commits stopped"]


def _drawn(t: Text) -> bool:
    return t.get_visible() and bool(t.get_text().strip())


def _shown_texts(fig: Figure) -> list[Text]:
    """Every text the saved picture shows: titles, labels, tick labels inside the view, annotations, legend.

    Matplotlib keeps tick labels for ticks just outside the view limits but does not draw them.
    """
    tick_labels: set[int] = set()
    shown: list[Text] = []
    for ax in fig.axes:
        for axis, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            lo, hi = sorted(limits)
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                for label in (tick.label1, tick.label2):
                    tick_labels.add(id(label))
                    if _drawn(label) and lo <= tick.get_loc() <= hi:
                        shown.append(label)
    return shown + [t for t in fig.findobj(Text) if isinstance(t, Text) and id(t) not in tick_labels and _drawn(t)]


def test_a_hundred_generations_have_no_overlapping_labels_and_whole_member_ticks() -> None:
    fig = rebalance_figure(churn_generations(100), START_MS + 101 * 30_000)
    fig.savefig(io.BytesIO(), format="png", dpi=100)  # as plot_rebalances saves it
    renderer = fig.canvas.get_renderer()
    shown = _shown_texts(fig)
    generation_labels = [t for t in shown if t.get_gid() == "generation-label"]
    assert 10 <= len(generation_labels) < 100  # thinned, not dropped
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in shown]
    overlapping = [(a, b) for (a, ba), (b, bb) in itertools.combinations(boxes, 2) if ba.overlaps(bb)]
    assert overlapping == []
    count_axes = [ax for ax in fig.axes if ax.get_ylabel() == "members"]
    assert count_axes
    for ax in count_axes:
        ticks = [t for t in ax.get_yticks() if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]]
        assert ticks and all(float(t).is_integer() for t in ticks)
    plt.close(fig)


def _points(line: Line2D) -> list[tuple[int, int]]:
    """A marker line's points as (epoch ms, member row), sorted."""
    return sorted((_ms(x), int(y)) for x, y in zip(line.get_xdata(), line.get_ydata(), strict=True))


def test_who_joined_and_left_is_drawn_on_the_members_row() -> None:
    gens = churn_generations(4)  # g2: consumer-2 away; g3: it is back; g4: consumer-3 away
    fig = rebalance_figure(gens, START_MS + 5 * 30_000)
    lanes = next(ax for ax in fig.axes if ax.get_title(loc="left").startswith("churn"))
    rows = [t.get_text() for t in lanes.get_yticklabels()]
    assert rows == ["consumer-1", "consumer-2", "consumer-3", "consumer-4"]
    marks = {line.get_gid(): line for line in lanes.lines if isinstance(line, Line2D)}
    g = {n: START_MS + n * 30_000 for n in range(1, 5)}
    assert _points(marks["leaves"]) == [(g[2], 1), (g[4], 2)]
    joins = _points(marks["joins"])
    assert joins == [(g[1], 0), (g[1], 1), (g[1], 2), (g[1], 3), (g[3], 1)]
    assert "4 generations, 5 joins, 2 leaves" in lanes.get_title(loc="left")
    plt.close(fig)


def test_the_title_says_when_only_the_newest_generations_are_drawn() -> None:
    gens = churn_generations(20).assign(generations=700)  # as picture_data keeps the newest of a busier group
    fig = rebalance_figure(gens, START_MS + 21 * 30_000)
    titles = [ax.get_title(loc="left") for ax in fig.axes if ax.get_title(loc="left")]
    assert titles == ["churn: 700 generations (the newest 20 drawn), 13 joins, 10 leaves"]
    plt.close(fig)


def test_long_member_ids_keep_their_head_and_tail() -> None:
    member = "consumer-orders-1-3f2a9c1e-7b44-4d2b-9a65-1c0ffee0d00d"
    label = member_label(member)
    assert len(label) == 28 and label.startswith("consumer-orders-") and label.endswith("0d00d")
    assert member_label("c1") == "c1"
