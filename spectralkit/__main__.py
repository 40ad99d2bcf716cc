"""``python -m spectralkit``: run the demo (``spectralkit demo``), or any CLI command given.

``python -m spectralkit`` alone is ``spectralkit demo``; ``python -m spectralkit check ...``
is ``spectralkit check ...`` (see :mod:`spectralkit.cli`).
"""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["demo"]))
