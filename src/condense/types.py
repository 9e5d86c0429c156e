"""The canonical message shape: OpenAI Chat Completions messages as plain dicts.

Every stage of condense reads and writes lists of these dicts, typed as ``RawMessage``
(``dict[str, Any]``): histories arrive broken, so no function may trust a stricter type
for its input, and repair is where they are made whole. Outputs are plain dicts too, so
the messages condense does not change can be returned as the very objects it was given.
"""

from __future__ import annotations

from typing import Any

RawMessage = dict[str, Any]
"""One message as it really arrives: any JSON object."""
