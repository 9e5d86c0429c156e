"""Tool-call ``arguments``: shrink them without breaking the JSON, and make them valid.

OpenAI-style tool calls carry their arguments as a *string holding a JSON object*. Two
things go wrong with that string in long agent histories:

* A compactor shortens it by slicing the text. The result is invalid JSON, and strict
  providers reject the whole history with a 400 on every later turn.
  ``shrink_arguments`` shortens the long string values *inside* the JSON instead, so the
  result always parses and keeps its shape. Strings of up to ``KEEP_CHARS`` characters
  (paths, ids) are never cut; when the target needs that, the result stays above it and
  ``shrink_arguments_report`` says so.
* It arrives as a dict, as ``None``, as a JSON array, as truncated or Python-repr text.
  ``normalize_arguments`` turns any of these into a JSON-object string, keeps everything
  it can, and says what it changed.

A cut string keeps its head (about two thirds of the kept length) and its tail, and
``CUT_MARKER`` in the middle says how many characters were removed::

    "def main():\\n    …[18234 chars cut]…\\nmain()\\n"

The count is in Python characters (code points) of the decoded string. A cut never splits
a grapheme cluster (a ZWJ emoji sequence, a letter and its combining marks, a flag) or a
surrogate pair.

What counts as valid arguments is defined once, by ``arguments_problem``: ``validate``
reports exactly what it rejects, and ``normalize_arguments`` (so ``repair``) rewrites
exactly that.
"""

from condense.arguments._json import arguments_problem, is_json_object_string
from condense.arguments.normalize import normalize_arguments
from condense.arguments.shrink import (
    CUT_MARKER,
    KEEP_CHARS,
    ShrunkArguments,
    shrink_arguments,
    shrink_arguments_report,
)

__all__ = [
    "CUT_MARKER",
    "KEEP_CHARS",
    "ShrunkArguments",
    "arguments_problem",
    "is_json_object_string",
    "normalize_arguments",
    "shrink_arguments",
    "shrink_arguments_report",
]
