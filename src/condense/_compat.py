"""Old spellings of renamed keyword arguments, accepted for one release with a warning."""

from __future__ import annotations

import warnings


def renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that keyword ``old`` is now ``new`` (the caller maps the value)."""
    warnings.warn(
        f"{old}= is deprecated and will be removed in the next release; use {new}=",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
