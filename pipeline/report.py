"""``report.txt``: the analysis in words and tables, rendered from the Parquet output (no Spark needed).

It opens with what was read, every byte range skipped as damaged (corruption or a torn tail), and what the log
could not tell (compacted or deleted history, truncated partitions), then each group's Burrow status with the
partition and rule behind it, the ``--describe`` table, rebalances and rates. The
per-group and per-topic lines come from the ``report_*`` tables Spark aggregated (:mod:`pipeline.report_data`),
so the driver reads the rows it prints, not the partition-level tables behind them; the ``--describe`` table is
printed whole, one row per partition, as Kafka's tool prints it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped]

from pipeline.damage import SkippedRange
from pipeline.describe import format_describe
from pipeline.plots import plot_lag, plot_rebalances
from pipeline.tables import read_table

__all__ = ["RULE_TEXT", "render_outputs", "write_report"]

RULE_TEXT = {
    "current-lag": "current lag within allowed-lag",
    "incomplete": "window below minimum-complete, not evaluated",
    "stop": "no commit for longer than the window spans (rule 3)",
    "rewind": "committed offset went back and has not recovered (rule 2)",
    "zero-lag": "lag within allowed-lag somewhere in the window (rule 1)",
    "stall": "committing the same offset while lagging (rule 4)",
    "warn": "lag never decreased over the window (rule 5)",
    "ok": "lag decreasing",
    "empty": "no commits stored",
}


def _time(ms: Any) -> str:
    if ms is None or pd.isna(ms):
        return "-"
    return datetime.fromtimestamp(int(ms) / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"


def _seconds(ms: Any) -> str:
    return "-" if ms is None or pd.isna(ms) else f"{float(ms) / 1000:.1f}s"


def _table(df: pd.DataFrame) -> str:
    return "(none)\n" if df.empty else df.to_string(index=False) + "\n"


def write_report(out_dir: Path) -> Path:
    summary: dict[str, Any] = json.loads((out_dir / "inputs.json").read_text(encoding="utf-8"))
    lines: list[str] = ["group-broker pipeline report", "=" * 28, ""]
    lines.append(f"as of:    {_time(summary['as_of_ms'])}  (latest time in the logs: {_time(summary['latest_ms'])})")
    lines.append(f"log dir:  {summary['data_dir']}")
    lines += ["", "Inputs scanned", "--------------"]
    lines.append(
        f"__consumer_offsets: {summary['offsets_segments']} segments, {summary['offsets_bytes']:,} bytes; "
        f"topics: {summary['topic_segments']} segments, {summary['topic_bytes']:,} bytes, "
        f"{summary['topic_partitions']} partitions, {summary['topic_batches']:,} batches"
    )
    records = ", ".join(f"{k}: {v:,}" for k, v in sorted(summary["records"].items())) or "none"
    lines.append(f"records: {records}; groups: {summary['groups']}")
    for error in summary["errors"]:
        lines.append(f"DECODE ERROR {error}")
    lines += ["", *_skipped_section(summary)]
    lines += ["", "Caveats:" if summary["caveats"] else "Caveats: none (no compacted or deleted history found)"]
    lines += [f"  - {c}" for c in summary["caveats"]]
    lines += ["", *_status_section(out_dir), "", "kafka-consumer-groups --describe (as of the time above)", "-" * 54]
    describe = read_table(out_dir, "describe")
    text = format_describe(describe.astype(object).where(describe.notna(), None).to_dict("records"))
    lines.append(text.rstrip() or "(no groups)")
    lines += ["", *_rebalance_section(out_dir), "", *_rate_section(out_dir), ""]
    path = out_dir / "report.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _skipped_section(summary: dict[str, Any]) -> list[str]:
    """Every skipped byte range, one line each (:meth:`pipeline.damage.SkippedRange.text`)."""
    skipped = [SkippedRange(**r) for r in summary.get("skipped", [])]
    if not skipped:
        return ["Skipped ranges: none (every byte of every segment was a valid batch)"]
    return [f"Skipped ranges ({len(skipped)}; nothing in them was used):", *(f"  - {r.text()}" for r in skipped)]


def _status_section(out_dir: Path) -> list[str]:
    groups = read_table(out_dir, "report_status")
    lines = ["Burrow status per group", "-----------------------"]
    if groups.empty:
        return [*lines, "(no groups)"]
    rows = []
    for g in groups.sort_values("group").itertuples():
        known = isinstance(g.worst_topic, str)
        rows.append(
            {
                "group": g.group,
                "status": g.status,
                "total_lag": int(g.total_lag),
                "partitions": int(g.partition_count),
                "complete": f"{g.complete:.2f}",
                "worst partition": f"{g.worst_topic}-{int(g.worst_partition)} {g.worst_status}" if known else "-",
                "rule that fired": RULE_TEXT.get(g.worst_rule, g.worst_rule) if known else "-",
            }
        )
    return [*lines, _table(pd.DataFrame(rows)).rstrip()]


def _rebalance_section(out_dir: Path) -> list[str]:
    rb = read_table(out_dir, "report_rebalances")
    lines = ["Rebalances", "----------"]
    if rb.empty:
        return [*lines, "(none recorded)"]
    rows = [
        {
            "group": g.group,
            "generations": int(g.generations),
            "rebalances": int(g.rebalances),
            "joins": int(g.joins),
            "leaves": int(g.leaves),
            "mean lifetime": _seconds(g.mean_lifetime_ms),
            "max lifetime": _seconds(g.max_lifetime_ms),
            "max commit pause": _seconds(g.max_commit_pause_ms),
            "last": f"gen {int(g.last_generation)} at {_time(g.last_ts_ms)}",
        }
        for g in rb.sort_values("group").itertuples()
    ]
    return [*lines, _table(pd.DataFrame(rows)).rstrip()]


def _rate_section(out_dir: Path) -> list[str]:
    rates = read_table(out_dir, "report_commit_rates")
    produce = read_table(out_dir, "report_produce_rates")
    lines = [
        "Rates (per window, each divided by the time it covers inside the run; mean over windows with activity)",
        "------------------------------------------------------------------------------------------------------",
    ]
    if not rates.empty:
        lines.append(_table(rates.sort_values("group").round(2)).rstrip())
    if not produce.empty:
        lines += ["", _table(produce.sort_values("topic").round(2)).rstrip()]
    return lines


def render_outputs(out_dir: Path) -> list[Path]:
    """report.txt, lag.png and rebalances.png from the tables under ``out_dir``."""
    report = write_report(out_dir)
    lag_png, rb_png = out_dir / "lag.png", out_dir / "rebalances.png"
    plot_lag(out_dir, lag_png)
    plot_rebalances(out_dir, rb_png)
    return [report, lag_png, rb_png]
