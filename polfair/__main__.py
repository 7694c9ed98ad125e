"""``python -m polfair``: the command line."""

from polfair.cli import main

raise SystemExit(main())
