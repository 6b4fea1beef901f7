"""``tfrx.events``: an alias of :mod:`tfrx.codec.events`, kept so that ``import tfrx.events`` goes on working.

The module object is the real one (``tfrx.events is tfrx.codec.events``); the star import is for type checkers.
"""

import sys

from tfrx.codec import events as _module
from tfrx.codec.events import *  # noqa: F403

sys.modules[__name__] = _module
