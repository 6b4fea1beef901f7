"""``tfrx.jax``: an alias of :mod:`tfrx.integrations.jax`, kept so that ``import tfrx.jax`` goes on working.

The module object is the integration's own (``tfrx.jax is tfrx.integrations.jax``), so patching or
pickling through either name is the same; the star import is for type checkers.
"""

import sys

from tfrx.integrations import jax as _module
from tfrx.integrations.jax import *  # noqa: F403

sys.modules[__name__] = _module
