"""OpenAI Responses API input items.

The adapter (``formats/responses.py``) keeps every item verbatim: reasoning items (with
``encrypted_content``) ride on the assistant message they preceded under
``responses_items``, item ids as ``item_id``, and replayed output items keep their
``status``. The rules: a reasoning item keeps the item that followed it; a
``function_call`` or ``custom_tool_call`` needs its output somewhere after it, paired by
``call_id`` (Codex puts ``developer`` and ``user`` messages between a call and its
output), and the other way round.

The keys each item accepts, besides those chat has a slot for (sources: openai-python
``types/responses/response_input_item_param.py`` and the param types it unions, 2026-08;
openai/codex ``codex-rs/protocol/src/models.rs`` ``ResponseItem``, which real Codex CLI
requests follow):

- ``message``: ``id``, ``status``, ``phase`` (assistant output messages);
- ``function_call``: ``id``, ``status``, ``namespace`` (Codex sends it on MCP tools),
  ``caller``; ``custom_tool_call``: the same (Codex sends ``status``);
- ``function_call_output``: ``id``, ``status``, ``caller``, ``name``, ``namespace``;
  ``custom_tool_call_output``: ``id``, ``caller``, ``name``.
"""

from __future__ import annotations

import dataclasses

from condense.message import ITEM_ID, RESPONSES_ITEMS
from condense.providers import openai
from condense.providers.base import TOOL_CALL_KEYS, Provider, keys_plus

_ITEM_KEYS = frozenset({ITEM_ID, "status"})
_CALL_KEYS = frozenset({"namespace", "caller"})

REPLAY_IDENTITY_WORDINGS = (
    # reasoning minted in another chain (a compaction's or a sub-agent's encrypted_content)
    # replayed into this one, OpenAI and Azure Foundry: "Conflicting authenticated
    # continuation identities" (anomalyco/opencode #48942, users call the session
    # "permanently dead")
    r"conflicting authenticated continuation identit",
    # encrypted reasoning this deployment cannot verify: "The encrypted content for item
    # rs_… could not be verified." (openai/codex #3573, an Azure resource switch); "The
    # encrypted content gAAA...= could not be verified. Reason: Encrypted content could not
    # be decrypted or parsed." with code invalid_encrypted_content (anomalyco/opencode
    # #29879, lidge-jun/opencodex #5583)
    r"encrypted content\b[^\n]{0,200}\bcould not be (?:verified|decrypted)",
    r"invalid_encrypted_content",
    # a reasoning item replayed by id into a store that never held it: "Item with id 'rs_…'
    # not found. Items are not persisted when `store` is set to false." (opencode #7724)
    r"item with id '?rs_[^\s']*'? not found",
)

PROFILE = dataclasses.replace(
    openai.PROFILE,
    name="responses",
    description="OpenAI Responses API input items",
    id_max_length=64,
    unique_ids=True,
    allowed_keys=keys_plus(
        {
            "system": _ITEM_KEYS,
            "developer": _ITEM_KEYS,
            "user": _ITEM_KEYS,
            # ``phase`` (commentary / final_answer) is replayed on assistant items
            "assistant": _ITEM_KEYS | {RESPONSES_ITEMS, "phase"},
            "tool": _ITEM_KEYS | _CALL_KEYS,
        }
    ),
    tool_call_keys=TOOL_CALL_KEYS | _ITEM_KEYS | _CALL_KEYS,
    results_anywhere_after=True,
    custom_tool_calls=True,
    errors={
        "orphan_tool_result": "No tool call found for function call output with call_id {id}.",
        "tool_result_misplaced": "No tool call found for function call output with call_id {id}.",
        "unanswered_tool_call": "No tool output found for function call {id}.",
        "unknown_key": "Unknown parameter: 'input[{index}].{key}'.",
        "private_key": "Unknown parameter: 'input[{index}].{key}'.",
        "item_without_reasoning": "Item '{id}' of type '{found}' was provided without its "
        "required 'reasoning' item: 'rs_…'.",
        "reasoning_without_following_item": "Item '{id}' of type 'reasoning' was provided "
        "without its required following item.",
        # Azure Foundry's words (anomalyco/opencode #48942)
        "foreign_reasoning": "Conflicting authenticated continuation identities.",
    },
)

PROVIDER = Provider(
    profile=PROFILE,
    wordings={"replay_identity": REPLAY_IDENTITY_WORDINGS},
    refusals=dataclasses.replace(
        openai.REFUSALS,
        overflow="Your input exceeds the context window of this model. Please adjust your "
        "input and try again.",
        output_limit=None,
        generic="Invalid 'input[{index}]': {detail}.",
    ),
)
