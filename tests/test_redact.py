"""redact(): secrets go, the surrounding text stays."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from condense.redact import REDACTED, redact

PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n"
    "aFDrBz9vFqU4yVjMmAo7yP0dtGVmeNPV3dtCjTMG6A/aZcT+qfELtbRFtqqtFtyh\n"
    "-----END RSA PRIVATE KEY-----"
)

SECRETS = [
    ("OpenAI key", "sk-proj-Ab3dEf6hIj9kLmN0pQrStUvWxYz12345", "export KEY={}"),
    ("OpenAI legacy key", "sk-Ab3dEf6hIj9kLmN0pQrStUvWxYz1234567890ab", "key: {} end"),
    ("Anthropic key", "sk-ant-api03-Zx9_Yw8-Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0", "ANTHROPIC={}"),
    ("AWS access key id", "AKIAIOSFODNN7EXAMPLE", "aws id {} here"),
    ("GitHub token", "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "git clone with {}"),
    ("GitHub fine-grained token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "t={}"),
    ("Slack token", "xoxb-123456789012-abcdefABCDEF", "slack {}"),
    ("Google API key", "AIzaSyA-1234567890abcdefghijklmnopqrstu", "maps key {}"),
    ("Stripe key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe {}"),
    ("Hugging Face token", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "HF {}"),
    ("JWT", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "jwt {}"),
    ("bearer token", "abc123def456ghi789", "curl -H 'Authorization: Bearer {}' https://api"),
    ("bearer token in prose", "tok_9f8e7d6c5b4a", "send it as Bearer {} please"),
    ("Authorization header", "dXNlcjpwYXNzd29yZA==", "Authorization: Basic {}"),
    ("JSON Authorization", "s3cr3t-t0ken-value", '{{"Authorization": "Token {}"}}'),
    ("URL password", "hunter2", "postgres://admin:{}@db.internal:5432/app"),
    ("password assignment", "correct-horse-battery", "password={} next"),
    ("api_key assignment", "abc123xyz789", 'config = {{"api_key": "{}", "max_tokens": 512}}'),
    ("env secret", "s3cr3t!value", "DB_PASSWORD='{}'"),
    ("yaml secret", "zzTopSecret99", "client_secret: {}"),
    ("query token", "qwerty123456", "https://x.test/cb?access_token={}&state=1"),
    ("PEM private key", PEM, "key file:\n{}\nafter"),
]


@pytest.mark.parametrize(("kind", "secret", "template"), SECRETS, ids=[s[0] for s in SECRETS])
def test_secret_is_removed_and_context_kept(kind: str, secret: str, template: str) -> None:
    text = template.format(secret)
    cleaned = redact(text)
    assert secret not in cleaned, kind
    assert REDACTED in cleaned
    # The words around the secret survive.
    first_word = template.split("{}")[0].split()[0] if template.split("{}")[0].split() else ""
    assert first_word.strip("{'\"") in cleaned


def test_pem_cut_off_by_a_window_is_still_removed() -> None:
    body = PEM.split("\n")[1]
    assert body not in redact(PEM.rsplit("\n", 1)[0])  # no END line
    assert body not in redact(PEM.split("\n", 1)[1])  # no BEGIN line


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=512 and token_count: 7, tokens: 5",
        "the password is required before login",
        "password = None",
        "api_key = $OPENAI_API_KEY",
        "Bearer bonds are old-fashioned",
        "see https://example.com/path?page=2",
        "ssh user@host.example.com",
        "the task-management system sk-learn",
        "AKIA is a prefix",
        "",
    ],
)
def test_ordinary_text_is_untouched(text: str) -> None:
    assert redact(text) == text


def test_several_secrets_in_one_text() -> None:
    text = " | ".join(template.format(secret) for _, secret, template in SECRETS)
    cleaned = redact(text)
    for kind, secret, _ in SECRETS:
        assert secret not in cleaned, kind


@given(st.text(max_size=300))
def test_idempotent_on_any_text(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


@given(st.sampled_from(SECRETS), st.text(alphabet=" \n.,;:", max_size=5))
def test_idempotent_on_secrets(entry: tuple[str, str, str], glue: str) -> None:
    _, secret, template = entry
    once = redact(glue + template.format(secret) + glue)
    assert redact(once) == once
    assert secret not in once


def test_linear_on_a_large_text() -> None:
    # 200 kB of near-misses must not blow up (no catastrophic backtracking); the
    # assertion is on the result, timing is left to the test timeout.
    text = ("password token api_key sk- AKIA Bearer x " * 5_000)[:200_000]
    assert len(redact(text)) > 0
