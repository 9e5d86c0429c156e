"""Remove secrets from text before it leaves the process.

``redact(text)`` replaces what looks like a credential with ``[REDACTED]`` and keeps the
rest, so a summary prompt still reads naturally: API keys (OpenAI ``sk-…``, Anthropic
``sk-ant-…``, AWS ``AKIA…``, GitHub ``ghp_…``/``github_pat_…``, Slack ``xox…-``, Google
``AIza…``, Stripe, Hugging Face), JSON Web Tokens, bearer tokens, ``Authorization:``
headers, PEM private keys, passwords in URLs (``scheme://user:pass@host``) and
``password=…``/``api_key: …`` style assignments.

It is pattern based: it errs on the side of redacting a harmless value that sits where a
secret usually goes, and it cannot know about a secret with no recognizable shape. It is
idempotent (``redact(redact(t)) == redact(t)``) and linear in the length of the text.
"""

from __future__ import annotations

import re

__all__ = ["REDACTED", "redact"]

REDACTED = "[REDACTED]"

# A whole key block; a block cut off at either end (text read in windows) goes too.
_PEM = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:,-]*)"
    r"|\A[A-Za-z0-9+/=\s]*-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
)
_URL_PASSWORD = re.compile(
    r"(\b[A-Za-z][A-Za-z0-9+.-]{0,20}://[^\s:/?#@\[\]]{0,200}):([^\s/?#@]{1,200})@"
)
_AUTH_HEADER = re.compile(
    r"(?i)(\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?)"
    r"(?!\[REDACTED\])([^\"'\r\n]{1,2000})"
)
# A bearer token has a digit or is long; "bearer bonds" is not one.
_BEARER = re.compile(
    r"(?i)\b(bearer)(\s+)([A-Za-z0-9._~+/-]{20,}=*|(?=[A-Za-z._~+/-]*\d)[A-Za-z0-9._~+/-]{8,}=*)"
)
_KEYS = re.compile(
    r"""
      \bsk-[A-Za-z0-9_-]{16,}                       # OpenAI (sk-, sk-proj-), Anthropic (sk-ant-)
    | \b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b   # AWS access key ids
    | \bgh[pousr]_[A-Za-z0-9]{20,}                   # GitHub tokens
    | \bgithub_pat_[A-Za-z0-9_]{20,}
    | \bxox[abposre]-[A-Za-z0-9-]{8,}                # Slack
    | \bAIza[0-9A-Za-z_-]{30,}                       # Google API keys
    | \b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}         # Stripe
    | \bhf_[A-Za-z0-9]{30,}                          # Hugging Face
    | \bglpat-[A-Za-z0-9_-]{20,}                     # GitLab
    | \beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}   # JSON Web Tokens
    """,
    re.VERBOSE,
)
# Names that announce a secret: ``<name> = value``, ``"<name>": "value"``, ``<name>: value``.
_SECRET_NAMES = (
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "api_key",
    "api-key",
    "apikey",
    "access_key",
    "access-key",
    "private_key",
    "private-key",
    "credential",
    "credentials",
)
# What follows such a name: the separator, an optional quote, and the value.
_ASSIGNED = re.compile(
    r"""(?![\w-])["']?\s{0,3}[:=]\s{0,3}["']?(?!\[REDACTED\])([^\s"',;&}<>]{1,500})"""
)
# A pattern runs only on text that holds one of its markers (plain substring tests are
# far faster than the regex engine's scan).
_KEY_MARKERS = (
    "sk-",
    "AKIA",
    "ASIA",
    "AGPA",
    "AIDA",
    "AROA",
    "ANPA",
    "ANVA",
    "AIPA",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xox",
    "AIza",
    "k_live_",
    "k_test_",
    "hf_",
    "glpat-",
    "eyJ",
)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def redact(text: str) -> str:
    """``text`` with every recognizable secret replaced by ``[REDACTED]``."""
    if not text:
        return text
    if "PRIVATE KEY" in text:
        text = _PEM.sub(REDACTED, text)
    if "://" in text:
        text = _URL_PASSWORD.sub(rf"\1:{REDACTED}@", text)
    lowered = _lower(text)
    if "authorization" in lowered:
        text = _AUTH_HEADER.sub(_auth_header, text)
    if "bearer" in lowered:
        text = _BEARER.sub(rf"\1\2{REDACTED}", text)
    if any(marker in text for marker in _KEY_MARKERS):
        text = _KEYS.sub(REDACTED, text)
    return _redact_assignments(text)


def _lower(text: str) -> str:
    """Lower case that keeps every index (``str.lower`` may not, outside ASCII)."""
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)


def _redact_assignments(text: str) -> str:
    """Replace the value after each secret-announcing name, found with ``str.find``."""
    lowered = _lower(text)
    ends: set[int] = set()
    for name in _SECRET_NAMES:
        at = lowered.find(name)
        while at >= 0:
            ends.add(at + len(name))
            at = lowered.find(name, at + 1)
    pieces: list[str] = []
    done = 0
    for end in sorted(ends):
        if end < done:
            continue
        match = _ASSIGNED.match(text, end)
        if match is None or _placeholder(match.group(1)):
            continue
        pieces += [text[done : match.start(1)], REDACTED]
        done = match.end(1)
    return "".join([*pieces, text[done:]]) if pieces else text


def _placeholder(value: str) -> bool:
    """A value that only refers to a secret (``$VAR``, ``{{ x }}``, ``None``) stays."""
    return value.lower() in ("none", "null", "true", "false") or value.startswith(("$", "{", "<"))


def _auth_header(match: re.Match[str]) -> str:
    # Keep the scheme word so the text still says what kind of credential it was.
    value = match.group(2)
    scheme = value.split(None, 1)[0] if " " in value.strip() else ""
    kept = f"{scheme} " if scheme.isalpha() and len(scheme) <= 10 else ""
    return f"{match.group(1)}{kept}{REDACTED}"
