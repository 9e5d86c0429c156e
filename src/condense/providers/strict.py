"""``strict``: the structural rules every mainstream provider shares, for histories whose
target is unknown.

Derived from the provider profiles, not written by hand: a structural rule that any of
:data:`STRUCTURAL_SOURCES` enforces is enforced here — pairing, results in call order,
unique ids of ``[A-Za-z0-9_-]`` no longer than the shortest limit, the system prompt
first, the first turn the user's, roles alternating, no empty text, JSON-object
arguments. Keys are the union of what the providers accept, so replay state (thinking
blocks, reasoning items, ``reasoning_content``, thought signatures) is kept in place and
never stripped; ``developer`` is part of the canonical form and is kept too. Mistral's
9-character ids and its user-after-tool rule are provider quirks, left to its profile.

Replay rules that only state present in the history triggers are enforced too: a Gemini
thought signature on some call asks for one on every step of the current turn, and under
budgeted thinking (a known ``enabled`` mode) the turn opens with thinking. DeepSeek's
"``reasoning_content`` on every tool-call turn" is not among them: vLLM, SGLang, Qwen and
GLM send the field too, without that rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from condense.providers import anthropic, gemini, openai, responses
from condense.providers.base import ANTHROPIC_ID, Profile, Provider

STRUCTURAL_SOURCES: Sequence[Profile] = (
    openai.PROFILE,
    responses.PROFILE,
    anthropic.PROFILE,
    gemini.PROFILE,
)


def derive(sources: Sequence[Profile]) -> Profile:
    """The profile that enforces every structural rule any of ``sources`` enforces."""
    roles = {role for source in sources for role in source.allowed_keys}
    limits = [s.id_max_length for s in sources if s.id_max_length is not None]
    errors: dict[str, str] = {}
    for source in reversed(sources):  # the first source's wording wins
        errors.update(source.errors)
    return Profile(
        name="strict",
        description="the structural rules of every mainstream provider (target unknown); "
        "keeps replay state",
        first_user=any(s.first_user for s in sources),
        alternate=any(s.alternate for s in sources),
        system_only_at_start=any(s.system_only_at_start for s in sources),
        developer_role=True,
        no_empty_text=any(s.no_empty_text for s in sources),
        id_pattern=ANTHROPIC_ID,
        id_max_length=min(limits) if limits else None,
        unique_ids=any(s.unique_ids for s in sources),
        results_in_call_order=any(s.results_in_call_order for s in sources),
        thinking_start=any(s.thinking_start for s in sources),
        thought_signatures=any(s.thought_signatures for s in sources),
        allowed_keys={
            role: frozenset().union(*(s.allowed_keys.get(role, frozenset()) for s in sources))
            for role in sorted(roles)
        },
        tool_call_keys=frozenset().union(*(s.tool_call_keys for s in sources)),
        errors=errors,
    )


PROFILE = derive(STRUCTURAL_SOURCES)
PROVIDER = Provider(profile=PROFILE, refusals=openai.REFUSALS)
