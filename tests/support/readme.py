"""The README as tests see it: its fenced code blocks, its sections, and the shell commands a block holds.

One extractor for every test that reads the README (the block tests, the control-table tests), so they all agree
on what a block is: every fence counts, with or without a language, so a block cannot hide from the tests by
leaving its language out.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", flags=re.M | re.S)
_FRAGMENT = re.compile(r"<!-- fragment: [^>]+ -->\n\Z")


@dataclass(frozen=True)
class Block:
    """A fenced block: its language ("" when none is given), body, whether it is marked a fragment, first line."""

    lang: str
    body: str
    fragment: bool
    line: int

    @property
    def first_line(self) -> str:
        return self.body.split("\n", 1)[0]


@dataclass(frozen=True)
class Command:
    """One logical shell command of a block (continuation lines joined, comment and prompt removed)."""

    line: int
    text: str

    def argv(self) -> list[str]:
        return shlex.split(self.text, comments=True)


def readme_text() -> str:
    return README.read_text()


def readme_blocks(text: str | None = None) -> list[Block]:
    text = readme_text() if text is None else text
    blocks = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()]
        blocks.append(Block(match.group(1), match.group(2), bool(_FRAGMENT.search(before)), before.count("\n") + 1))
    return blocks


def block_starting(lang: str, first_line: str) -> Block:
    [block] = [b for b in readme_blocks() if b.lang == lang and b.body.startswith(first_line)]
    return block


def readme_section(title: str) -> str:
    """The README from `title` to the next heading."""
    text = readme_text()
    start = text.index(title)
    end = text.find("\n#", start + len(title))
    return text[start:end]


def shell_commands(block: Block) -> list[Command]:
    """The commands of a shell block. In a block that shows a `$ ` prompt, only prompted lines are commands (the
    rest is output); a trailing backslash continues a command; comment-only lines are not commands."""
    prompted = any(line.startswith("$ ") for line in block.body.splitlines())
    commands: list[Command] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(block.body.splitlines(), start=block.line + 1):
        if not pending:
            if prompted and not raw.startswith("$ "):
                continue
            raw = raw.removeprefix("$ ")
            start = number
        if raw.rstrip().endswith("\\"):
            pending.append(raw.rstrip()[:-1])
            continue
        text = " ".join(part.strip() for part in [*pending, raw])
        pending = []
        if shlex.split(text, comments=True):
            commands.append(Command(start, text))
    return commands
