"""Summarizers by name: one registry, implementations imported on first use.

Built in: ``extractive`` (the default) and ``openai``. Register your own with
:func:`register_summarizer`; a factory is any callable returning a summarizer, or a
``"module:attribute"`` string imported lazily. Test doubles (:mod:`condense.testing`)
are not registered: pass the object.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from condense.exceptions import InputError, UnknownNameError
from condense.summarizers.base import Summarizer

Factory = Callable[..., Summarizer]

DEFAULT_SUMMARIZER = "extractive"

_registry: dict[str, Factory | str] = {
    "extractive": "condense.summarizers.extractive:ExtractiveSummarizer",
    "openai": "condense.summarizers.openai_compat:OpenAISummarizer",
}


def register_summarizer(name: str, factory: Factory | str, *, replace: bool = False) -> None:
    """Make ``get_summarizer(name, **options)`` call ``factory(**options)``.

    ``factory`` is a callable or a ``"module:attribute"`` string (imported on first use).
    Registering a taken name raises :class:`InputError` unless ``replace=True``.
    """
    key = _key(name)
    if not key:
        raise InputError("a summarizer name must be a non-empty string")
    if not (callable(factory) or (isinstance(factory, str) and ":" in factory)):
        raise InputError(
            f"summarizer {name!r}: factory must be a callable or a 'module:attribute' "
            f"string, got {factory!r}"
        )
    if key in _registry and not replace:
        raise InputError(
            f"a summarizer named {key!r} is already registered; pass replace=True to replace it"
        )
    _registry[key] = factory


def known_summarizers() -> tuple[str, ...]:
    """The registered names, sorted."""
    return tuple(sorted(_registry))


def get_summarizer(name_or_obj: str | Summarizer | None, /, **options: Any) -> Summarizer:
    """The summarizer registered as ``name_or_obj``, built with ``options``.

    ``None`` means the default (``extractive``); an object that already is a summarizer
    is returned as is. An unknown name raises :class:`UnknownNameError` listing the
    known ones; an option the summarizer does not take raises :class:`InputError`.
    """
    if name_or_obj is None:
        name_or_obj = DEFAULT_SUMMARIZER
    if not isinstance(name_or_obj, str):
        if not isinstance(name_or_obj, Summarizer):
            raise InputError(
                "expected a summarizer name or an object with a 'name' and a 'summarize' "
                f"method, got {type(name_or_obj).__name__}"
            )
        if options:
            raise InputError(
                f"options ({', '.join(sorted(options))}) apply only when a summarizer is "
                "given by name; configure the object itself instead"
            )
        return name_or_obj
    key = _key(name_or_obj)
    entry = _registry.get(key)
    if entry is None:
        raise UnknownNameError("summarizer", name_or_obj, known_summarizers())
    factory = _load(key, entry)
    try:
        inspect.signature(factory).bind(**options)
    except TypeError as error:
        raise InputError(f"summarizer {key!r} does not take these options: {error}") from None
    except ValueError:  # no signature (a builtin): let the call decide
        pass
    summarizer = factory(**options)
    if not isinstance(summarizer, Summarizer):
        raise InputError(
            f"the factory registered as summarizer {key!r} returned "
            f"{type(summarizer).__name__}, which has no 'name' and 'summarize'"
        )
    return summarizer


def _key(name: object) -> str:
    return name.strip().lower() if isinstance(name, str) else ""


def _load(key: str, entry: Factory | str) -> Factory:
    if not isinstance(entry, str):
        return entry
    module_name, _, attribute = entry.partition(":")
    try:
        factory: Factory = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise InputError(f"summarizer {key!r}: cannot import {entry!r}: {error}") from error
    _registry[key] = factory
    return factory
