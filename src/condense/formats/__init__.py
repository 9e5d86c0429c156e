"""Wire-format adapters: every format in, canonical OpenAI chat messages, every format out.

The canonical form is the OpenAI Chat Completions message list as plain dicts. Adapters:

- ``openai`` — the canonical form itself (a list, or ``{"messages": [...], ...}``);
- ``anthropic`` — Anthropic Messages (``from_anthropic`` / ``to_anthropic``);
- ``responses`` — OpenAI Responses input items (``from_responses`` / ``to_responses``);
- ``sharegpt`` — Hermes-style ShareGPT trajectories (``from_sharegpt`` / ``to_sharegpt``);
- ``gemini`` — Gemini ``generateContent`` ``contents`` (``from_gemini`` / ``to_gemini``);
- ``bedrock`` — Amazon Bedrock Converse (``from_bedrock`` / ``to_bedrock``).

``condense.formats.native`` lets every public function take any of these as it is (a
list or a request body) and answer in the same shape.

Agent transcripts (Claude Code session JSONL, Codex rollout JSONL) are not a wire format
but a record of one: ``load`` and ``load_records`` rebuild the requests they hold
(:mod:`condense.formats.transcripts`, readers in ``claude_code`` and ``codex_rollout``).

``load`` / ``load_records`` / ``parse_text`` return ``Conversation`` objects whose
``dump(messages)`` writes the native form back, reusing every native turn whose messages
are unchanged (same objects) verbatim, so ``load(x).dump() == x``. The pure ``from_*`` /
``to_*`` functions document their normalizations in their modules.

Fields an adapter does not map are carried on reading: unknown keys of a native turn,
block or item ride on the canonical message, tool call or content part made from it.
Unchanged turns go back verbatim; a turn written afresh gets only the keys its API
accepts (each module lists what it drops: a tool message's ``name`` has no slot in an
Anthropic ``tool_result`` or a Responses ``function_call_output``).

Beyond that, the adapters add these keys to canonical messages (``EXTENSION_KEYS``):

- ``thinking_blocks`` (assistant) — the turn's thinking in its native form, verbatim and
  in order, signatures included: Anthropic ``thinking``/``redacted_thinking`` blocks,
  Bedrock ``reasoningContent`` blocks, Gemini thought parts;
- ``responses_items`` (assistant) — Responses ``reasoning`` items (and items of types
  chat cannot express) that came right before this message's items, verbatim;
- ``item_id`` (any message or tool call) — the ``id`` of the Responses item it came from.

Validators that reject unknown keys should allow these when the history is going back
to the format that produced them. Reports never name them: ``Conversation.locator`` says
where each canonical message (and each of its calls, parts and replay items) sits in the
user's own file, and ``locate.native_words`` says what that file calls the state these
keys hold.
"""

from condense.formats.anthropic import from_anthropic, to_anthropic
from condense.formats.bedrock import from_bedrock, to_bedrock
from condense.formats.conversation import Conversation
from condense.formats.detect import FORMATS, detect_format
from condense.formats.gemini import from_gemini, to_gemini
from condense.formats.loading import load, load_records, parse_text
from condense.formats.locate import EXTENSION_KEYS, Locator, Place
from condense.formats.responses import from_responses, to_responses
from condense.formats.sharegpt import from_sharegpt, to_sharegpt

__all__ = [
    "EXTENSION_KEYS",
    "FORMATS",
    "Conversation",
    "Locator",
    "Place",
    "detect_format",
    "from_anthropic",
    "from_bedrock",
    "from_gemini",
    "from_responses",
    "from_sharegpt",
    "load",
    "load_records",
    "parse_text",
    "to_anthropic",
    "to_bedrock",
    "to_gemini",
    "to_responses",
    "to_sharegpt",
]
