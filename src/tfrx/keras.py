"""``tfrx.keras``: an alias of :mod:`tfrx.integrations.keras`, kept so that ``import tfrx.keras`` goes on working.

The module object is the integration's own (``tfrx.keras is tfrx.integrations.keras``), so patching or
pickling through either name is the same; the star import is for type checkers.
"""

import sys

from tfrx.integrations import keras as _module
from tfrx.integrations.keras import *  # noqa: F403

sys.modules[__name__] = _module
