"""`python -m itemshot.cli`: the same as the `itemshot` command."""

import sys

from itemshot.cli import main

sys.exit(main())
