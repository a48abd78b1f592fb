"""Production settings with `ceiling_urls` as the URLconf, for `append_http.py`'s server."""

from controltower.settings import *  # noqa: F403

ROOT_URLCONF = "ceiling_urls"
