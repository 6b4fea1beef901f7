"""``tfrx.arrow``: an alias of :mod:`tfrx.integrations.arrow`, kept so that ``import tfrx.arrow`` goes on working.

The module object is the integration's own (``tfrx.arrow is tfrx.integrations.arrow``), so patching or
pickling through either name is the same; the star import is for type checkers.
"""

import sys

from tfrx.integrations import arrow as _module
from tfrx.integrations.arrow import *  # noqa: F403

sys.modules[__name__] = _module
