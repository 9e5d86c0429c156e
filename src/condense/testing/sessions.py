"""Synthetic coding-agent sessions for tests and benchmarks, deterministic per seed.

``synthetic_session(n)`` writes a plausible session of about ``n`` messages: a system
prompt, a user ask, then turns of an agent reading files, grepping, running tests and
commands (some in parallel), editing files with long JSON arguments, hitting errors,
with occasional follow-up questions from the user. Tool outputs vary from one line to
tens of kilobytes, some repeat verbatim (re-reading the same file), some hold CJK text.

``turn_session(n)`` writes ``n`` user turns instead, each a new ask, one to three tool
exchanges and an answer — the shape of a session driven through a proxy call by call,
where every call carries a different latest ask (``model_calls`` lists the calls).
"""

from __future__ import annotations

import json
import random
from typing import Any

from condense.types import RawMessage

_FILES = [
    "src/app/server.py",
    "src/app/models/user.py",
    "src/app/routes/orders.py",
    "tests/test_orders.py",
    "src/app/db/migrations/0042_add_index.sql",
    "docs/architecture.md",
    "src/app/i18n/zh_CN.po",
    "pyproject.toml",
]
_WORDS = [
    "order",
    "user",
    "session",
    "token",
    "cache",
    "retry",
    "queue",
    "handler",
    "payload",
    "schema",
    "index",
    "migration",
    "request",
    "response",
    "timeout",
    "config",
    "parser",
    "metric",
    "worker",
    "scheduler",
    "invoice",
    "tenant",
]
_CJK = "订单用户会话缓存重试队列处理器负载模式索引迁移请求响应超时配置解析器指标"
_ASKS = [
    "The checkout endpoint returns 500 for orders over 10000 items. Please find and fix it.",
    "Also make sure the migration 0042 is idempotent.",
    "Can you add a regression test for order #48213?",
    "Why is test_refund_partial flaky? It failed 3 times in CI run 9921.",
    "Please keep the public API of OrderService unchanged.",
]


def synthetic_session(
    messages: int, *, seed: int = 0, output_chars: int = 3000, parallel: bool = True
) -> list[RawMessage]:
    """A deterministic agent session of about ``messages`` messages.

    ``output_chars`` is the median tool-output size; sizes are spread log-normally so a
    few outputs are 20× larger. With ``parallel``, some turns make 2–4 calls at once.
    """
    rng = random.Random(seed)
    history: list[RawMessage] = [
        {"role": "system", "content": _system_prompt()},
        {"role": "user", "content": _ASKS[0]},
    ]
    serial = 0
    last_output: dict[str, str] = {}
    while len(history) < messages:
        if rng.random() < 0.04:  # the agent reports, the user follows up
            history.append({"role": "assistant", "content": _thought(rng)})
            history.append({"role": "user", "content": rng.choice(_ASKS[1:])})
            continue
        count = rng.choice((2, 3, 4)) if parallel and rng.random() < 0.2 else 1
        calls, results = [], []
        for _ in range(count):
            serial += 1
            call_id = f"call_{seed}_{serial:06d}"
            name, arguments, output = _tool_turn(rng, output_chars, last_output)
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
            )
            results.append({"role": "tool", "tool_call_id": call_id, "content": output})
        history.append({"role": "assistant", "content": _thought(rng), "tool_calls": calls})
        history.extend(results)
    history.append({"role": "assistant", "content": "All tests pass now; the fix is in place."})
    return history


def _system_prompt() -> str:
    rules = "\n".join(
        f"- Rule {i}: prefer small, reviewed changes; run the tests after each edit."
        for i in range(1, 25)
    )
    return f"You are a careful software engineering agent working in /workspace.\n{rules}"


def _thought(rng: random.Random) -> str:
    verbs = ["I will inspect", "Let's run", "The fix is to change", "Next I check", "I decided to"]
    return f"{rng.choice(verbs)} {' '.join(rng.choices(_WORDS, k=rng.randint(6, 30)))}."


def _text(rng: random.Random, chars: int, *, cjk: bool = False) -> str:
    lines: list[str] = []
    size = 0
    number = 1
    while size < chars:
        if cjk and rng.random() < 0.3:
            line = "".join(rng.choices(_CJK, k=rng.randint(8, 40)))
        else:
            line = f"{number:5d}  " + " ".join(rng.choices(_WORDS, k=rng.randint(3, 14)))
        lines.append(line)
        size += len(line) + 1
        number += 1
    return "\n".join(lines)


def _size(rng: random.Random, median: int) -> int:
    return max(20, int(rng.lognormvariate(0, 1.0) * median))


def _tool_turn(
    rng: random.Random, median: int, last_output: dict[str, str]
) -> tuple[str, dict[str, Any], str]:
    kind = rng.choices(["read", "grep", "bash", "test", "edit"], weights=[4, 2, 3, 2, 2])[0]
    path = rng.choice(_FILES)
    if kind == "read":
        if path in last_output and rng.random() < 0.3:
            return "read_file", {"path": path}, last_output[path]
        output = _text(rng, _size(rng, median), cjk=path.endswith(".po"))
        last_output[path] = output
        return "read_file", {"path": path}, output
    if kind == "grep":
        pattern = rng.choice(_WORDS)
        hits = [f"{rng.choice(_FILES)}:{rng.randint(1, 900)}: {pattern} = {rng.choice(_WORDS)}"]
        hits *= rng.randint(1, 40)
        return "grep", {"pattern": pattern, "path": "src/"}, "\n".join(hits)
    if kind == "bash":
        command = rng.choice(["ls -la src/app", "git diff --stat", "python -m app.check", "make"])
        code = rng.choice([0, 0, 0, 1, 2])
        body = _text(rng, _size(rng, median // 2))
        return "bash", {"command": command}, f"{body}\n[exit code: {code}]"
    if kind == "test":
        failed = rng.randint(0, 3)
        body = _text(rng, _size(rng, median))
        tail = (
            f"E   AssertionError: expected 200, got 500 (order 48213)\nFAILED tests/test_orders.py"
            f"::test_checkout_large - AssertionError\n{failed} failed, 120 passed in 9.1s"
        )
        status = f"[exit code: {int(bool(failed))}]"
        return "bash", {"command": "pytest -q tests/"}, f"{body}\n{tail}\n{status}"
    new_text = _text(rng, _size(rng, median // 2))
    arguments = {"path": path, "old_str": rng.choice(_WORDS), "new_str": new_text}
    return "str_replace_editor", arguments, f"The file {path} has been edited successfully."


def turn_session(turns: int, *, seed: int = 0) -> list[RawMessage]:
    """A deterministic session of ``turns`` user turns: each a new ask (naming the turn
    and the seed), one to three tool exchanges (numbered source lines, some CJK, now and
    then 150 lines) and an answer."""
    rng = random.Random(seed)
    history: list[RawMessage] = [
        {"role": "system", "content": "You work in /workspace on an order service. " * 12}
    ]
    serial = 0
    for turn in range(turns):
        word = rng.choice(_WORDS)
        ask = (
            f"Ask {turn} ({seed}): the {word} handler fails for tenant {rng.randint(100, 999)}; "
            f"find why, fix it and add a regression test for {word} #{rng.randint(1000, 99999)}."
        )
        history.append({"role": "user", "content": ask})
        for _ in range(rng.choice((1, 2, 2, 3))):
            serial += 1
            call_id = f"call_{seed}_{serial}"
            name = rng.choice(("read_file", "grep", "run_tests", "edit_file"))
            arguments = {"path": f"src/app/{rng.choice(_WORDS)}_{serial}.py", "limit": 200}
            call = {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            history.append({"role": "assistant", "content": None, "tool_calls": [call]})
            history.append({"role": "tool", "tool_call_id": call_id, "content": _lines(rng)})
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(20, 80)))
        answer = f"I looked into it: {words}. The fix is in place and the tests pass."
        history.append({"role": "assistant", "content": answer})
    return history


def model_calls(history: list[RawMessage]) -> list[list[RawMessage]]:
    """The history at every point where an agent calls the model (the next message is
    the model's): what it sends, call by call."""
    return [
        history[:index] for index, m in enumerate(history) if index and m["role"] == "assistant"
    ]


def _lines(rng: random.Random) -> str:
    count = rng.choice((8, 20, 40, 40, 60, 150))
    text = "\n".join(
        f"{n:4d}  def {rng.choice(_WORDS)}_{n}(self, {rng.choice(_WORDS)}): "
        f"return self.{rng.choice(_WORDS)}.get({n})"
        for n in range(1, count + 1)
    )
    if rng.random() < 0.2:
        text += "\n# " + "".join(rng.choice(_CJK) for _ in range(rng.randint(50, 300)))
    return text
