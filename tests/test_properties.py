"""Property tests: whatever comes in from outside, decoding, syncing, configs and queries
raise only the documented errors (each a CachedexError with a one-line message)."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cachedex.catalog import Catalog
from cachedex.config import load_yaml, parse_config
from cachedex.errors import BadQuery, CachedexError, ConfigError, IndexFormatError
from cachedex.ingest.index import decode_index
from cachedex.ingest.lockfile import parse_lockfile
from cachedex.ingest.manifests import decode_manifest, manifest_size
from cachedex.ingest.records import build_records
from cachedex.ingest.sync import sync
from cachedex.query import parse
from cachedex.query_text import format_query
from tests.helpers import MIRRORS, UNSIGNED_INDEX, make_config, write_v2_mirror

REAL_INDEX: dict[str, Any] = json.loads((MIRRORS / UNSIGNED_INDEX).read_bytes())
REAL_BYTES = json.dumps(REAL_INDEX).encode()

# JSON values of every kind, nested a little, with the strings and numbers that broke
# things before: huge integers, NaN-like floats, control characters, traversal.
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
    | st.sampled_from(["../../etc", "a\x00b", "\u202egnp", "1.10", "x" * 300, "sha256", "shake_128", ""])
    # a number too big for a float, a URL urlsplit refuses, one whose port is out of range
    | st.sampled_from([10**400, -(10**400), "http://[x", "http://]x", "http://h:99999/m"])
)
json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
_NODE_KEYS = ["name", "version", "arch", "compiler", "parameters", "dependencies", "hash", "annotations", "external"]

fast = settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])


@fast
@given(data=st.binary(max_size=2000))
def test_any_bytes_decode_or_fail_as_an_index_error(data: bytes) -> None:
    with contextlib.suppress(IndexFormatError):
        build_records(decode_index(data, url="u"))


@fast
@given(position=st.integers(min_value=0, max_value=len(REAL_BYTES) - 1), byte=st.integers(0, 255))
def test_a_real_index_with_one_byte_changed(position: int, byte: int) -> None:
    data = bytearray(REAL_BYTES)
    data[position] = byte
    with contextlib.suppress(IndexFormatError):
        build_records(decode_index(bytes(data), url="u"))


@fast
@given(key=st.sampled_from(_NODE_KEYS), value=json_values, which=st.integers(0, 6))
def test_a_real_index_with_one_node_field_replaced(key: str, value: object, which: int) -> None:
    index = json.loads(REAL_BYTES)
    record = list(index["database"]["installs"].values())[which]
    record["spec"][key] = value
    try:
        records = build_records(decode_index(json.dumps(index).encode(), url="u"))
    except IndexFormatError as exc:
        assert "\n" not in str(exc)
        return
    for built in records:  # what is accepted is printable and fits a file name
        assert built.name.isprintable() and len(built.name.encode()) <= 255 and "/" not in built.name
        assert built.version.isprintable()


# A real lockfile: Spack's own test index's nodes, as a Spack 1.x environment holds them.
REAL_LOCK = json.dumps(
    {
        "_meta": {"file-type": "spack-lockfile", "lockfile-version": 6, "specfile-version": 5},
        "roots": [
            {"hash": key, "spec": record["spec"]["name"]} for key, record in REAL_INDEX["database"]["installs"].items()
        ][:2],
        "concrete_specs": {key: record["spec"] for key, record in REAL_INDEX["database"]["installs"].items()},
    }
).encode()
_LOCK_KEYS = ["_meta", "roots", "concrete_specs", "include_concrete", "spec", "x"]


@fast
@given(data=st.binary(max_size=2000))
def test_any_bytes_are_a_lockfile_or_an_index_error(data: bytes) -> None:
    with contextlib.suppress(IndexFormatError):
        parse_lockfile(data, "l")


@fast
@given(position=st.integers(min_value=0, max_value=len(REAL_LOCK) - 1), byte=st.integers(0, 255))
def test_a_real_lockfile_with_one_byte_changed(position: int, byte: int) -> None:
    data = bytearray(REAL_LOCK)
    data[position] = byte
    with contextlib.suppress(IndexFormatError):
        parse_lockfile(bytes(data), "l")


@fast
@given(key=st.sampled_from(_LOCK_KEYS), value=json_values, node_key=st.sampled_from(_NODE_KEYS), node_value=json_values)
def test_a_real_lockfile_with_a_part_replaced(key: str, value: object, node_key: str, node_value: object) -> None:
    """A top-level part of any shape, or a node's field: a Lockfile whose roots are among
    its specs, or one IndexFormatError of one line."""
    document = json.loads(REAL_LOCK)
    document[key] = value
    nodes = document.get("concrete_specs")
    first = next(iter(nodes.values()), None) if isinstance(nodes, dict) else None
    if isinstance(first, dict):
        first[node_key] = node_value
    try:
        lock = parse_lockfile(json.dumps(document).encode(), "l")
    except IndexFormatError as exc:
        assert "\n" not in str(exc)
        return
    assert {root.hash for root in lock.roots} <= {spec.hash for spec in lock.specs}


@fast
@given(record=st.dictionaries(st.sampled_from(["version", "data", "x"]), json_values, max_size=3))
def test_any_manifest_decodes_or_fails_as_an_index_error(record: dict[str, object]) -> None:
    data = json.dumps(record).encode()
    for decode in (lambda: decode_manifest(data, "u"), lambda: manifest_size("u", data)):
        try:
            decode()
        except CachedexError as exc:
            assert isinstance(exc, IndexFormatError), exc


@fast
@given(
    entries=st.lists(
        st.dictionaries(
            st.sampled_from(["contentLength", "mediaType", "compression", "checksumAlgorithm", "checksum"]),
            json_values,
            max_size=5,
        ),
        max_size=3,
    )
)
def test_manifest_entries_of_any_shape(entries: list[dict[str, object]]) -> None:
    data = json.dumps({"version": 3, "data": entries}).encode()
    try:
        decode_manifest(data, "u")
        size = manifest_size("u", data)
    except IndexFormatError:
        return
    assert 0 <= size < 2**53


@fast
@given(
    document=st.dictionaries(
        st.sampled_from(["catalog", "tags", "http", "limits", "tags_from", "other"]), json_values, max_size=4
    )
)
def test_any_config_document_is_valid_or_a_config_error(
    tmp_path_factory: pytest.TempPathFactory, document: dict[str, object]
) -> None:
    with contextlib.suppress(ConfigError):
        parse_config(document, base=tmp_path_factory.getbasetemp())


@fast
@given(text=st.text(max_size=200))
def test_any_yaml_text_loads_or_fails_in_one_line(text: str) -> None:
    try:
        load_yaml(text)
    except ValueError as exc:
        assert "\n" not in str(exc)


_query_words = st.sampled_from(
    [
        "zlib",
        "@",
        "1.2",
        ":",
        "=",
        "+",
        "~",
        "-",
        "%",
        "gcc",
        "target",
        "os",
        "platform",
        "x86_64_v3",
        "/",
        "abc",
        " ",
        ",",
        "^",
        "'",
        '"',
        ":=",
        "true",
        "mpi",
        "a b",
        "\x1b",
        "\udcff",
        "\u2028",
        "git.",
        "0123456789abcdef" * 2 + "01234567",
    ]
)


@fast
@given(text=st.text(max_size=60) | st.lists(_query_words, max_size=12).map("".join))
def test_any_query_parses_or_is_a_bad_query(text: str) -> None:
    with contextlib.suppress(BadQuery):
        parse(text)


@fast
@given(text=st.text(max_size=60) | st.lists(_query_words, max_size=12).map("".join))
def test_a_query_written_back_reads_the_same(text: str) -> None:
    """format_query is a normal form: the search page shows it and hints suggest it."""
    try:
        query = parse(text)
    except BadQuery:
        return
    assert parse(format_query(query)) == query


@pytest.mark.parametrize(
    "text",
    [
        "foo@git.abc=1.2",
        "foo@git.abc",
        "foo@abc=1.2:1.4,git.b=:2",
        "foo @ 1.2 , 3",
        'mpi gcc="x y"',
        "zlib='^x'",
        'x="="',
        "^~mpi target=zen3",
        "openmpi:=true",
        "x os='a b' +y",
        'x foo="it\'s"',
    ],
)
def test_values_that_need_quotes_are_written_back_quoted(text: str) -> None:
    assert parse(format_query(parse(text))) == parse(text)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    folder = tmp_path_factory.mktemp("props")
    write_v2_mirror(folder / "m", REAL_INDEX)
    config = make_config(folder, [{"name": "t", "url": str(folder / "m")}])
    opened = Catalog(config.catalog)
    sync(config, opened)
    return opened


@fast
@given(text=st.lists(_query_words, max_size=12).map("".join))
def test_any_query_searches_or_is_a_bad_query(catalog: Catalog, text: str) -> None:
    try:
        query = parse(text)
    except BadQuery:
        return
    catalog.search(query, tag="t", limit=5)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(_NODE_KEYS), value=json_values)
def test_a_sync_of_hostile_content_fails_its_tag_only(
    tmp_path_factory: pytest.TempPathFactory, key: str, value: object
) -> None:
    folder = tmp_path_factory.mktemp("sync")
    index = json.loads(REAL_BYTES)
    first = next(iter(index["database"]["installs"].values()))
    first["spec"][key] = value
    write_v2_mirror(folder / "bad", index)
    write_v2_mirror(folder / "good", REAL_INDEX)
    config = make_config(
        folder, [{"name": "bad", "url": str(folder / "bad")}, {"name": "good", "url": str(folder / "good")}]
    )
    with Catalog(config.catalog) as opened:
        bad, good = sync(config, opened, raise_unexpected=True)
        assert good.ok
        assert bad.ok or "\n" not in (bad.error or "")
        assert ("bad" in opened.tag_names()) == bad.ok
