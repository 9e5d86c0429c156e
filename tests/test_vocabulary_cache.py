"""The parsed vocabularies that ship beside the rank files (``*.ranks.pickle.gz``) are
those rank files, and a cache that is damaged or stale is never used."""

from __future__ import annotations

import dataclasses
import gzip
import pickle
from pathlib import Path

import pytest

from condense.tokens import encodings
from condense.tokens.encodings import ENCODINGS, load_encoding, pickled_ranks

DATA = Path(encodings.__file__).parent / "data"


@pytest.mark.parametrize("name", ENCODINGS)
def test_the_shipped_ranks_are_the_rank_file_parsed(name: str) -> None:
    spec = encodings._SPECS[name]
    shipped = pickle.loads(gzip.decompress((DATA / spec.cache).read_bytes()))
    parsed = encodings._parse_ranks(spec, encodings._checked(spec, encodings._read_resource(spec)))
    assert shipped == (spec.sha256, parsed)
    assert pickle.loads(gzip.decompress(pickled_ranks(name))) == shipped
    assert encodings._pickled(spec) == parsed


def test_a_damaged_or_stale_cache_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = encodings._SPECS["cl100k_base"]
    stale = dataclasses.replace(spec, sha256="0" * 64)  # made from another rank file
    assert encodings._pickled(stale) is None
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / spec.cache).write_bytes(b"damaged")
    for resource in ("cl100k_base.tiktoken.gz",):
        (tmp_path / "data" / resource).write_bytes((DATA / resource).read_bytes())
    monkeypatch.setattr(encodings.resources, "files", lambda package: tmp_path)
    assert encodings._pickled(spec) is None
    fallback = load_encoding("cl100k_base")  # parsed from the rank file instead
    assert fallback.encode_ordinary("hello world") == [15339, 1917]
