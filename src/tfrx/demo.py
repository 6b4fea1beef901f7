"""``tfrx.demo``: an alias of :mod:`tfrx.tools.demo`, kept so that ``import tfrx.demo`` goes on working.

The module object is the real one (``tfrx.demo is tfrx.tools.demo``); the star import is for type checkers.
"""

import sys

from tfrx.tools import demo as _module
from tfrx.tools.demo import *  # noqa: F403

if __name__ == "__main__":  # python -m tfrx.demo
    sys.exit(_module.main())
sys.modules[__name__] = _module
