"""Whether this run is a whole campaign (`make campaigns` sets CAMPAIGN=1) or the bounded sample `make test` runs.

Tests marked `campaign` size themselves with this: CI gets a sample that still exercises every path in a few
seconds, and the whole campaign runs on demand.
"""

from __future__ import annotations

import os

FULL = os.environ.get("CAMPAIGN") == "1"
