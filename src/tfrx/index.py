"""``tfrx.index``: an alias of :mod:`tfrx.io.index`, kept so that ``import tfrx.index`` goes on working.

The module object is the real one (``tfrx.index is tfrx.io.index``); the star import is for type checkers.
"""

import sys

from tfrx.io import index as _module
from tfrx.io.index import *  # noqa: F403

sys.modules[__name__] = _module
