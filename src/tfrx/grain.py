"""``tfrx.grain``: an alias of :mod:`tfrx.integrations.grain`, kept so that ``import tfrx.grain`` goes on working.

The module object is the integration's own (``tfrx.grain is tfrx.integrations.grain``), so patching or
pickling through either name is the same; the star import is for type checkers.
"""

import sys

from tfrx.integrations import grain as _module
from tfrx.integrations.grain import *  # noqa: F403

sys.modules[__name__] = _module
