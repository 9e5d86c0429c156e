"""condense: fit long LLM-agent histories to a token budget without ever producing a
history that a provider rejects, and heal histories that are already broken.

    >>> import condense
    >>> result = condense.compress(messages, budget=100_000)   # doctest: +SKIP
    >>> condense.validate(result.messages, provider="anthropic")  # doctest: +SKIP
    []

Importing condense does no work: vocabularies load on first count, summarizers and
optional backends on first use.
"""

from __future__ import annotations

import typing

from condense._lazy import lazy_names as _lazy_names
from condense.arguments import normalize_arguments, shrink_arguments
from condense.compress import (
    BudgetError,
    CompressionReport,
    CompressionResult,
    CompressionState,
    compress,
)
from condense.exceptions import (
    CondenseError,
    CondenseRuntimeError,
    FormatError,
    InputError,
    InvalidOutputError,
    RecoveryError,
    RefusedResponse,
    UnknownNameError,
)
from condense.formats import Conversation, detect_format, load, load_records
from condense.providers import Profile, get_profile
from condense.repair import Change, RepairResult, repair
from condense.retry import RetryPolicy
from condense.summarizers import Summarizer, get_summarizer, register_summarizer
from condense.tokens import count_tokens, estimate_tokens
from condense.units import Unit, UnitKind, segment
from condense.validate import Violation, validate

if typing.TYPE_CHECKING:
    from condense.errors import (
        Action,
        Category,
        Diagnosis,
        RecoveryResult,
        arecover,
        classify,
        guard,
        recover,
    )

__version__ = "0.1.0"  # the one place: pyproject.toml reads it from here

_LAZY = dict.fromkeys(
    (
        "Action",
        "Category",
        "Diagnosis",
        "RecoveryResult",
        "arecover",
        "classify",
        "guard",
        "recover",
    ),
    "condense.errors",
)
"""Names loaded on first use, and their module: the error classifier and its recovery
are about a third of what ``import condense`` costs, and only the proxy and callers of
``guard`` or ``recover`` use them (``compress``, ``validate``, ``repair`` and the
``compress-dataset`` command do not). A name that is also a subpackage, as ``compress``
is, must stay eager: importing the subpackage would bind its name to the module."""


__getattr__, __dir__ = _lazy_names(globals(), _LAZY)

__all__ = [
    "Action",
    "BudgetError",
    "Category",
    "Change",
    "CompressionReport",
    "CompressionResult",
    "CompressionState",
    "CondenseError",
    "CondenseRuntimeError",
    "Conversation",
    "Diagnosis",
    "FormatError",
    "InputError",
    "InvalidOutputError",
    "Profile",
    "RecoveryError",
    "RecoveryResult",
    "RefusedResponse",
    "RepairResult",
    "RetryPolicy",
    "Summarizer",
    "Unit",
    "UnitKind",
    "UnknownNameError",
    "Violation",
    "__version__",
    "arecover",
    "classify",
    "compress",
    "count_tokens",
    "detect_format",
    "estimate_tokens",
    "get_profile",
    "get_summarizer",
    "guard",
    "load",
    "load_records",
    "normalize_arguments",
    "recover",
    "register_summarizer",
    "repair",
    "segment",
    "shrink_arguments",
    "validate",
]
