"""RE2/J itself, the regex engine of Kafka's group coordinator, asked what it makes of patterns (differential tests).

Runs tests/reference/re2j/Re2jCheck.java as a single-file source program on the re2j jar that `make test` fetched
with the reference broker's classpath, so the answers are those of the RE2/J version the pinned Kafka ships.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.reference.kafka import LIB

CHECKER = Path(__file__).parent / "re2j" / "Re2jCheck.java"


@dataclass(frozen=True, slots=True)
class Re2jAnswer:
    """RE2/J's verdict on one pattern: the description of its syntax error, or the topics it fully matches."""

    error: str | None
    matches: tuple[str, ...]


def unavailable_reason() -> str | None:
    """Why RE2/J cannot be asked on this machine, or None when it can (CI has Java and the fetched classpath)."""
    if shutil.which("java") is None:
        return "Java is not installed: the RE2/J reference needs Java 17+ (CI has it; see README, Requirements)"
    if not any(LIB.glob("re2j-*.jar")):
        return "the reference classpath is not fetched yet: run `make test` (it runs mvn dependency:copy-dependencies)"
    return None


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")


def ask_re2j(patterns: Sequence[str], topics: Sequence[str]) -> list[Re2jAnswer]:
    """RE2/J's answer for every pattern, in order, each matched against every topic."""
    [jar] = LIB.glob("re2j-*.jar")
    lines = [" ".join(_b64(topic) for topic in topics), *(_b64(pattern) for pattern in patterns)]
    done = subprocess.run(
        ["java", "-cp", str(jar), str(CHECKER)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    answers = []
    for line in done.stdout.splitlines():
        verdict, _, rest = line.partition(" ")
        if verdict == "ERR":
            answers.append(Re2jAnswer(base64.b64decode(rest).decode("utf-8"), ()))
        else:
            answers.append(Re2jAnswer(None, tuple(topics[int(index)] for index in rest.split())))
    assert len(answers) == len(patterns), done.stderr
    return answers
