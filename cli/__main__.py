"""`python -m cli`: the `group-broker` command."""

import sys

from cli.main import main

sys.exit(main())
