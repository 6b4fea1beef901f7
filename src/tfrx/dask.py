"""``tfrx.dask``: the short name of :mod:`tfrx.integrations.dask` (Dask), like ``tfrx.torch`` and its siblings.

The module object is the integration's own (``tfrx.dask is tfrx.integrations.dask``), so patching or
pickling through either name is the same; the star import is for type checkers.
"""

import sys

from tfrx.integrations import dask as _module
from tfrx.integrations.dask import *  # noqa: F403

sys.modules[__name__] = _module
