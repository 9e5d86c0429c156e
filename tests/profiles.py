"""How many examples a property test tries under the loaded hypothesis profile.

A test states the count it was written for (``@settings(max_examples=examples(300))``);
the profile scales it as it scales hypothesis's own default of 100 (``tests/conftest.py``
registers and loads the profiles): the lean default tries half, the thorough profile five
times as many. The relative weight each test was given stays, and no test drops below
:data:`FLOOR` examples (or its own count, when that is smaller) in any profile.
"""

from __future__ import annotations

from hypothesis import settings

HYPOTHESIS_DEFAULT = 100
"""Hypothesis's own ``max_examples``: the counts in the tests were chosen against it."""
LEAN_EXAMPLES = 50
THOROUGH_EXAMPLES = 500
FLOOR = 20


def examples(count: int) -> int:
    """``count`` scaled by the loaded profile (read when the test module is imported)."""
    scaled = round(count * settings.default.max_examples / HYPOTHESIS_DEFAULT)
    return max(scaled, min(count, FLOOR))
