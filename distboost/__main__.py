"""``python -m distboost``: the command-line interface."""

import sys

from .cli import main

if __name__ == "__main__":  # not when a documentation tool imports the module
    sys.exit(main())
