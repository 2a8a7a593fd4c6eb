"""``python -m tests.differential``: run the scenarios against any broker, or against two and show the differences.

    python -m tests.differential --list
    python -m tests.differential --against 127.0.0.1:9092 [-k join]                # print each transcript
    python -m tests.differential --against 127.0.0.1:9092 --reference 127.0.0.1:19092   # compare
    python -m tests.differential --known-table                                      # the README table

The brokers must run with the settings of tests/reference/settings.py (the timeline scenarios depend on them);
scenarios that need other settings (retention) are listed as skipped, with the settings they need.
Exit status: 0 when every difference found is a pinned one (tests/differential/known.py), 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import sys

from tests.differential.known import expected, known_table
from tests.differential.registry import Scenario, load_all
from tests.differential.runner import Target, compare_all, run_one
from tests.reference.settings import SHARED_GROUP_SETTINGS


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tests.differential", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--against", type=Target.parse, help="HOST:PORT of the broker under test")
    parser.add_argument("--reference", type=Target.parse, help="HOST:PORT of the reference (Apache Kafka)")
    parser.add_argument("-k", dest="pattern", default="", help="only scenarios whose name or rule contains this")
    parser.add_argument("--list", action="store_true", help="list the scenarios and what each covers")
    parser.add_argument("--known-table", action="store_true", help="print the README's differences table")
    return parser


async def _print_transcripts(scenarios: list[Scenario], target: Target) -> int:
    for s in scenarios:
        print(f"## {s.name} ({s.covers})")
        for step in await run_one(s, target, secrets.token_hex(4), SHARED_GROUP_SETTINGS):
            print(f"{step.label}: {json.dumps(step.outcome)}")
    return 0


async def _print_differences(scenarios: list[Scenario], ours: Target, kafka: Target) -> int:
    results = await compare_all(scenarios, ours, kafka, SHARED_GROUP_SETTINGS)
    unexpected = 0
    for name, comparison in sorted(results.items()):
        found = comparison.differences
        pinned = expected(name)
        status = "same" if not found else ("pinned" if found == pinned else "DIFFERENT")
        unexpected += status == "DIFFERENT"
        print(f"{status:9} {name} ({comparison.scenario.covers})")
        if status == "DIFFERENT":
            for difference in found:
                print(f"          {difference}")
    print(f"{len(results)} scenarios, {unexpected} with unpinned differences")
    return 1 if unexpected else 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    scenarios = [s for s in load_all().values() if args.pattern in s.name or args.pattern in s.covers]
    if args.known_table:
        print(known_table(), end="")
        return 0
    if args.list:
        for s in scenarios:
            print(f"{s.name:50} {s.covers:10} {s.doc.splitlines()[0] if s.doc else ''}")
        return 0
    if args.against is None:
        build_parser().error("--against HOST:PORT is required (or --list / --known-table)")
    for s in scenarios:
        if s.settings is None:
            continue
        own = {k: v for k, v in s.settings.items() if SHARED_GROUP_SETTINGS.get(k) != v}
        print(f"skipped  {s.name}: needs brokers started with {' '.join(f'{k}={v}' for k, v in own.items())}")
    scenarios = [s for s in scenarios if s.settings is None]
    if args.reference is None:
        return asyncio.run(_print_transcripts(scenarios, args.against))
    return asyncio.run(_print_differences(scenarios, args.against, args.reference))


if __name__ == "__main__":
    sys.exit(main())
