"""A ``Violation``: one broken rule, with the provider's own words where known."""

from __future__ import annotations

from dataclasses import dataclass

from condense.providers import Profile


@dataclass(frozen=True, kw_only=True)
class Violation:
    """One broken rule. ``index`` is the 0-based message index in the validated list;
    ``location`` names the place in the user's own file (``messages[3].content[1]``)
    when the history was read from a native format, else the canonical index."""

    index: int
    code: str
    detail: str
    provider: str
    provider_error: str | None = None
    """The error text the provider would answer with, where known."""
    tool_call_id: str | None = None
    location: str | None = None

    def __str__(self) -> str:
        where = self.location or f"message {self.index}"
        return f"{where}: {self.detail} [{self.code}]"


class _Defaulting(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "0" if key in ("call", "block") else "…"


def violation(profile: Profile, index: int, code: str, detail: str, **fields: str) -> Violation:
    """A Violation of ``profile`` with the provider's text filled in from ``fields``
    (``id``, ``key``, ``role``, ``call``, ``block``, ``name``, ``found``)."""
    template = profile.errors.get(code)
    error = None
    if template is not None:
        error = template.format_map(_Defaulting(index=str(index), **fields))
    return Violation(
        index=index,
        code=code,
        detail=detail,
        provider=profile.name,
        provider_error=error,
        tool_call_id=fields.get("id"),
    )
