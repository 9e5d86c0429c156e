"""Reduction strategies, cheapest first: dedupe, mask, shrink (summaries: ``summary``)."""

from condense.reduce.base import MARKER, Reduction
from condense.reduce.dedupe import dedupe_tool_outputs
from condense.reduce.mask import mask_tool_outputs, placeholder
from condense.reduce.shrink import shrink_tool_arguments

__all__ = [
    "MARKER",
    "Reduction",
    "dedupe_tool_outputs",
    "mask_tool_outputs",
    "placeholder",
    "shrink_tool_arguments",
]
