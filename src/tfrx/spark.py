"""``tfrx.spark``: the short name of :mod:`tfrx.integrations.spark` (Spark), like ``tfrx.torch`` and its siblings.

The module object is the integration's own (``tfrx.spark is tfrx.integrations.spark``), so patching or
pickling through either name is the same; the star import is for type checkers.
"""

import sys

from tfrx.integrations import spark as _module
from tfrx.integrations.spark import *  # noqa: F403

sys.modules[__name__] = _module
