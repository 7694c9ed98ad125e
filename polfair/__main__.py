"""``python -m polfair``: the command line."""

from polfair.cli import main

if __name__ == "__main__":  # importing the module (API doc tools do) must not run the command line
    raise SystemExit(main())
