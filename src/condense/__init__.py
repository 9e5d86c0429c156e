"""condense: fit long LLM-agent histories to a token budget without ever producing a
history that a provider rejects, and heal histories that are already broken."""

from __future__ import annotations

from condense.exceptions import (
    CondenseError,
    CondenseRuntimeError,
    FormatError,
    InputError,
    InvalidOutputError,
    UnknownNameError,
)
from condense.profiles import PROFILES, Profile, get_profile
from condense.repair import Change, RepairResult, repair
from condense.units import Unit, UnitKind, segment
from condense.validate import Violation, validate

__all__ = [
    "PROFILES",
    "Change",
    "CondenseError",
    "CondenseRuntimeError",
    "FormatError",
    "InputError",
    "InvalidOutputError",
    "Profile",
    "RepairResult",
    "Unit",
    "UnitKind",
    "UnknownNameError",
    "Violation",
    "get_profile",
    "repair",
    "segment",
    "validate",
]
