"""``tfrx.ray``: an alias of :mod:`tfrx.integrations.ray`, kept so that ``import tfrx.ray`` goes on working.

The module object is the integration's own (``tfrx.ray is tfrx.integrations.ray``), so patching or
pickling through either name is the same; the star import is for type checkers.
"""

import sys

from tfrx.integrations import ray as _module
from tfrx.integrations.ray import *  # noqa: F403

sys.modules[__name__] = _module
