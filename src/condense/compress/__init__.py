"""The compression engine: one module per stage, in pipeline order (see ``api``).

``plan`` → ``reductions`` (cheapest first) → ``assemble`` → ``last_resort`` → ``gate`` →
``incremental``.
"""

from condense.compress.api import compress
from condense.compress.assemble import LeftOut, summary_size
from condense.compress.plan import HeadTailProtection, Protection, SessionProtection
from condense.compress.reductions import (
    CUT,
    DEDUPE,
    DEFAULT_REDUCTIONS,
    MASK,
    SHRINK,
    STRIP_IMAGES,
    SUMMARIZE,
    MessageReduction,
    ReductionStep,
    SpanSummary,
)
from condense.compress.result import (
    CompressionReport,
    CompressionResult,
    CompressionState,
    OutputCut,
    UnitAction,
    UnitOutcome,
)
from condense.exceptions import BudgetError
from condense.reduce.thinking import Binding, BoundThinking, RequestSettings

__all__ = [
    "CUT",
    "DEDUPE",
    "DEFAULT_REDUCTIONS",
    "MASK",
    "SHRINK",
    "STRIP_IMAGES",
    "SUMMARIZE",
    "Binding",
    "BoundThinking",
    "BudgetError",
    "CompressionReport",
    "CompressionResult",
    "CompressionState",
    "HeadTailProtection",
    "LeftOut",
    "MessageReduction",
    "OutputCut",
    "Protection",
    "ReductionStep",
    "RequestSettings",
    "SessionProtection",
    "SpanSummary",
    "UnitAction",
    "UnitOutcome",
    "compress",
    "summary_size",
]
