"""The live page at ``/condense/``: plain HTML and a little JavaScript, no build step.

It polls ``/condense/api/requests`` once a second and lists the recent requests: what was
asked, of which upstream and model, what came back, and what condense did — repairs,
compression (a before/after token bar against the window), a reused compressed head, a
retry — and why.
"""

from __future__ import annotations

import functools
from importlib import resources

__all__ = ["page_html"]


@functools.cache
def page_html() -> str:
    """The page's HTML (read once from the package)."""
    return resources.files("condense.server").joinpath("page.html").read_text(encoding="utf-8")
