"""The hypothesis profiles, and how many examples a property test tries under them.

``tests/conftest.py`` calls :func:`load` before any test module is imported, because a
test's ``@settings(...)`` takes the values it does not name from the profile loaded at
that time. Two profiles (see the README's test section):

- ``lean``, the default: every property test tries its own count, 100 where it names
  none, the same examples on every run (derandomized: a red run is the change's doing,
  not a new draw finding an old bug while CI checks an unrelated change);
- ``thorough``, by name (``HYPOTHESIS_PROFILE=thorough pytest`` or
  ``pytest --hypothesis-profile=thorough``): five times as many, drawn afresh on every
  run — the profile that explores (run it on any change to the engine).

Neither has a deadline or the ``too_slow`` health check: both measure wall-clock time,
which a loaded machine stretches, and a property test must fail only for a wrong answer.

A test states the count it was written for (``@settings(max_examples=examples(300))``)
and the profile scales it as it scales hypothesis's own default of 100. The lean default
does not go below the counts as written: halving them was measured to cost the power the
tests exist for. With one check removed from ``condense.validate.fast`` (results in call
order, blank text, Mistral's id pattern), the fast-path property caught each mutation in
2–3 of 5 seeds at its 200 examples, and in none of 5 at 100.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

HYPOTHESIS_DEFAULT = 100
"""Hypothesis's own ``max_examples``: the counts in the tests were chosen against it."""
SCALE = {"lean": 1, "thorough": 5}


def load(name: str) -> None:
    """Register the profiles and load ``name``."""
    for profile, scale in SCALE.items():
        settings.register_profile(
            profile,
            max_examples=scale * HYPOTHESIS_DEFAULT,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
            print_blob=True,
            derandomize=profile == "lean",
        )
    settings.load_profile(name)


def loaded() -> str:
    return settings.get_current_profile_name()


def examples(count: int) -> int:
    """``count`` scaled by the loaded profile (read when the test module is imported)."""
    return round(count * settings.default.max_examples / HYPOTHESIS_DEFAULT)
