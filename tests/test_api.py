"""The curated public API: exactly the public names, sorted, and importing it does no work."""

from __future__ import annotations
import __future__

import inspect
import re
import subprocess
import sys
from enum import Enum
from pathlib import Path

import condense

ROOT = Path(__file__).resolve().parents[1]


def test_all_is_exactly_the_public_names() -> None:
    public = {
        name
        for name in dir(condense)  # the names loaded on first use too
        if not name.startswith("_")
        and not inspect.ismodule(value := getattr(condense, name))
        and not isinstance(value, __future__._Feature)
    }
    assert set(condense.__all__) == public | {"__version__"}
    assert condense.__all__ == sorted(condense.__all__)
    assert len(condense.__all__) == len(set(condense.__all__))


def test_every_exception_of_the_tree_is_exported() -> None:
    import condense.server
    from condense import exceptions

    tree = {
        name
        for name, value in vars(exceptions).items()
        if inspect.isclass(value) and issubclass(value, condense.CondenseError)
    }
    proxy = {"BadRequest", "BodyDecodingError", "UpstreamRefusal"}  # live with the proxy
    assert tree - {"SummaryFailed"} - proxy == tree & set(condense.__all__)
    assert proxy <= set(condense.server.__all__)
    assert all(getattr(condense.server, name) is getattr(exceptions, name) for name in proxy)


def test_the_version_is_written_once() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert 'path = "src/condense/__init__.py"' in pyproject
    assert re.fullmatch(r"\d+\.\d+\.\d+", condense.__version__)
    hits = [
        path
        for path in (ROOT / "src").rglob("*.py")
        if re.search(r"^__version__ = ", path.read_text(), flags=re.MULTILINE)
    ]
    assert hits == [ROOT / "src" / "condense" / "__init__.py"]


def test_import_does_no_work() -> None:
    code = (
        "import sys, condense\n"
        "from condense.tokens import encodings\n"
        "assert not encodings._loaded, 'a vocabulary was loaded at import time'\n"
        "assert 'openai' not in sys.modules, 'openai was imported at import time'\n"
        "assert 'condense.errors' not in sys.modules, 'the classifier was imported'\n"
        "from condense import guard, recover\n"
        "from condense.errors import guard as g, recover as r\n"
        "assert (guard, recover) == (g, r)\n"
        "assert condense.compress.__module__ == 'condense.compress.api'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


# validate() and repair() still take ``provider`` positionally: the providers issue, which
# rewrites both, makes it keyword-only; this set then becomes empty.
POSITIONAL_PENDING: set[str] = set()


def test_optional_parameters_are_keyword_only() -> None:
    offenders = set()
    for name in condense.__all__:
        value = getattr(condense, name)
        if not callable(value) or (
            isinstance(value, type) and issubclass(value, BaseException | Enum)
        ):
            continue
        try:
            parameters = inspect.signature(value).parameters.values()
        except (TypeError, ValueError):
            continue
        if any(p.default is not p.empty and p.kind is p.POSITIONAL_OR_KEYWORD for p in parameters):
            offenders.add(name)
    assert offenders == POSITIONAL_PENDING
