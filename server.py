"""Entry point: `python server.py [server.properties] [--override key=value ...]`, configured like Kafka.

The process itself lives in `cli.serve` so that the `group-broker serve` console script runs the same code.
"""

from __future__ import annotations

import sys

from cli import startup_imports

startup_imports.begin()  # the collector off and dataclass methods from their cache until cli.serve.main settles

from cli.serve import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
