"""``tfrx.torch``: an alias of :mod:`tfrx.integrations.torch`, kept so that ``import tfrx.torch`` goes on working.

The module object is the integration's own (``tfrx.torch is tfrx.integrations.torch``), so patching or
pickling through either name is the same; the star import is for type checkers.
"""

import sys

from tfrx.integrations import torch as _module
from tfrx.integrations.torch import *  # noqa: F403

sys.modules[__name__] = _module
