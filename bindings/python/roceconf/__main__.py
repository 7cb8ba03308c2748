"""python3 -m roceconf run ... (see roceconf.cli)."""

import sys

from .cli import main

sys.exit(main())
