"""How many examples a property test tries under the loaded hypothesis profile.

A test states the count it was written for (``@settings(max_examples=examples(300))``);
the profile scales it as it scales hypothesis's own default of 100 (``tests/conftest.py``
registers and loads the profiles): the lean default tries the test's own count, the
thorough profile five times as many.

The lean default does not go below the counts as written: halving them was measured to
cost the power the tests exist for. With a fast-path check removed from
``condense.validate.fast`` (results in call order, blank text, Mistral's id pattern), the
fast-path property caught each mutation in 2–3 of 5 seeds at its 200 examples, and in 0
of 5 at 100.
"""

from __future__ import annotations

from hypothesis import settings

HYPOTHESIS_DEFAULT = 100
"""Hypothesis's own ``max_examples``: the counts in the tests were chosen against it."""
LEAN_EXAMPLES = HYPOTHESIS_DEFAULT
THOROUGH_EXAMPLES = 5 * HYPOTHESIS_DEFAULT


def examples(count: int) -> int:
    """``count`` scaled by the loaded profile (read when the test module is imported)."""
    return round(count * settings.default.max_examples / HYPOTHESIS_DEFAULT)
