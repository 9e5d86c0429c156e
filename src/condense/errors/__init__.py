"""Provider errors: what a refusal means and how condense recovers from it.

``classify(error)`` reads an SDK exception, an HTTP response or plain text and returns a
:class:`Diagnosis`: a :class:`Category`, whether a retry can succeed, and the
:class:`Action` to take first (repair the history, compress it, lower ``max_tokens``,
back off, or fail).
"""

from condense.errors.classify import classify
from condense.errors.diagnosis import Action, Category, Diagnosis

__all__ = ["Action", "Category", "Diagnosis", "classify"]
