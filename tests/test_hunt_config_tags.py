"""Mutation hunt of ``cachedex.config.tags``: bucket hints, the URL checks of each
scheme, stacks and views, and the ``registries`` section (hosts and their entries)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cachedex.config import parse_config
from cachedex.config.tags import TagConfig, check_url, host_and_port, parse_tag
from cachedex.errors import ConfigError
from cachedex.values import MirrorRef, short_repr


def _problems(document: dict[str, object]) -> list[str]:
    """What the config ``document`` is refused for."""
    with pytest.raises(ConfigError) as caught:
        parse_config(document, base=Path("/srv"))
    return caught.value.problems


def _url_problems(url: object, *, mirror: bool = True) -> list[str]:
    problems: list[str] = []
    assert not check_url("k", url, problems, mirror=mirror)
    return problems


# -- buckets -----------------------------------------------------------------------------------


def test_a_gs_bucket_named_as_spack_s_is_not_told_spack_s_public_url() -> None:
    """Only s3://spack-binaries is Spack's public bucket: a Google bucket of that name is
    told its own https:// URL."""
    (problem,) = _url_problems("gs://spack-binaries/develop")
    assert "https://storage.googleapis.com/spack-binaries/develop if it is public" in problem, problem
    assert "binaries.spack.io" not in problem


def test_a_dotted_gs_bucket_is_told_its_google_url() -> None:
    """Path-style S3 is for S3's dotted names only: a dotted gs:// bucket is at
    storage.googleapis.com, and no S3-compatible store is suggested for it."""
    (problem,) = _url_problems("gs://my.bucket/m")
    assert "(https://storage.googleapis.com/my.bucket/m if it is public); " in problem, problem


def test_a_bucket_path_of_200_characters_is_still_told_its_url() -> None:
    """The URL is left out of the hint past 200 characters of path; 200 is still said."""
    path = "/" + "x" * 199
    (problem,) = _url_problems(f"s3://bkt{path}")
    assert f"(https://bkt.s3.amazonaws.com{path} if it is public" in problem, problem[:120]


def test_a_bucket_scheme_without_a_bucket_is_read_as_a_folder_name() -> None:
    """``s3:name`` has no ``//``: no bucket is named, so no bucket's URL is made up; it
    is told how to write a folder whose name holds ':'."""
    (problem,) = _url_problems("s3:bucket/m")
    assert problem == (
        "'k': expected a path, file://, http(s)://, oci:// or oci+http:// URL, got 's3:bucket/m'; "
        "a folder whose name holds ':' is written './s3:bucket/m'"
    )


# -- the root's views --------------------------------------------------------------------------


def test_a_plain_stack_at_the_root_s_own_folder_does_not_read_the_root_s_views() -> None:
    """Only a VIEW of the root's mirror lets the root have no index of its own: a stack
    that is a separate mirror, written at the same place, does not."""
    root = MirrorRef("t", "root", "/srv/m")
    plain = TagConfig("t", (root, MirrorRef("t", "s", "file:///srv/m/")))
    view = TagConfig("t", (root, MirrorRef("t", "s", "file:///srv/m/", view="s")))
    assert not plain.reads_root_views
    assert view.reads_root_views


# -- URLs of each scheme -----------------------------------------------------------------------


def test_an_oci_plus_http_url_with_a_space_is_refused() -> None:
    """A registry without TLS is an URL too: a space in it is no path a client sends."""
    assert _url_problems("oci+http://localhost:5000/my cache") == [
        "'k': a URL holds no spaces; write each as %20: 'oci+http://localhost:5000/my cache'"
    ]


def test_a_mirror_url_ending_in_an_empty_fragment_is_refused() -> None:
    """``#`` alone is an empty fragment to urlsplit, yet it ends the path a client
    sends: every file's URL would lose its path."""
    (problem,) = _url_problems("https://h/m#")
    assert "no ?query or #fragment" in problem and problem.endswith("'https://h/m#'"), problem


def test_views_all_of_an_oci_plus_http_tag_says_registries_have_none() -> None:
    """A registry without TLS has no views either (not: name them over oci+http://)."""
    document = {"tags": [{"name": "o", "url": "oci+http://localhost:5000/cache", "views": "all"}]}
    assert _problems(document) == [
        "'tags[0].views': OCI registries have no views (a view is a v3 mirror's index of a subset)"
    ]


def test_an_unknown_key_of_a_tag_is_named_with_the_known_ones() -> None:
    """A misspelt key of a tag (``colour``, ``stack``) is said, with the keys a tag takes."""
    document = {"tags": [{"name": "t", "url": "/srv/m", "colour": "red", "stack": ["e4s"]}]}
    assert sorted(_problems(document)) == [
        "unknown key 'tags[0].colour' (known: name, url, stacks, views)",
        "unknown key 'tags[0].stack' (known: name, url, stacks, views)",
    ]


# -- stacks and views --------------------------------------------------------------------------


@pytest.mark.parametrize("views", ["ALL", "hpc", 3, {"hpc": "x"}])
def test_views_that_are_neither_all_nor_a_list_are_refused(views: object) -> None:
    """``views: ALL`` or a single name were taken as no views at all."""
    document = {"tags": [{"name": "t", "url": "/srv/m", "views": views}]}
    (problem,) = _problems(document)
    assert problem.startswith("'tags[0].views': expected 'all' or a list of view names, got "), problem


@pytest.mark.parametrize("stacks", ["e4s", 3, True])
def test_stacks_that_are_neither_a_list_nor_a_mapping_are_refused(stacks: object) -> None:
    """``stacks: e4s`` (one name, not a list) was taken as no stacks at all."""
    document = {"tags": [{"name": "t", "url": "/srv/m", "stacks": stacks}]}
    (problem,) = _problems(document)
    assert problem.startswith("'tags[0].stacks': expected a list of names or a mapping name: url, got "), problem


def test_a_tag_with_a_single_problem_is_not_made() -> None:
    """``parse_tag`` makes no tag once any problem of it is found, however few."""
    problems: list[str] = []
    assert parse_tag({"name": "t", "url": "/srv/m", "stacks": ["root"]}, "tags[0]", Path("/srv"), problems) is None
    assert problems == ["'tags[0].stacks': 'root' is the tag's own mirror (its url), not a stack"]


def test_a_stack_mapping_without_a_view_is_refused() -> None:
    """``{url: U}`` alone is no view: it is said (it would raise KeyError otherwise); a
    stack of its own mirror is written ``name: U``."""
    document = {"tags": [{"name": "t", "url": "/srv/m", "stacks": {"e": {"url": "https://x.example/m"}}}]}
    assert _problems(document) == [
        "'tags[0].stacks.e': expected a URL or a mapping with view (and url), got {'url': 'https://x.example/m'}"
    ]


# -- registries ---------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["ghcr.io/spack", "[::1]/x", "h:5000/v2"])
def test_a_host_with_a_path_is_no_host(host: str) -> None:
    """``host_and_port`` takes a host and port alone: a path after it is refused (a
    registry's repository belongs in the tag's URL)."""
    with pytest.raises(ValueError):
        host_and_port(host)


@pytest.mark.parametrize("host", ["fe80::1/64", "::1/x", "ghcr.io\n", "fe80::1\x1b[2J", "ghcr.io\t"])
def test_a_registries_host_with_a_slash_or_a_control_character_is_refused(host: str) -> None:
    """A bare IPv6 address is taken without urlsplit's checks, so a ``/`` (a prefix
    length) is refused before; urlsplit drops a line break or tab, so ``ghcr.io\\n``
    would be taken as ``ghcr.io`` and quoted raw in messages."""
    problems = _problems({"tags": [{"name": "t", "url": "/srv/m"}], "registries": {host: {"token_env": "T"}}})
    assert problems == [f"'registries': expected a host name (such as ghcr.io or ghcr.io:443), got {short_repr(host)}"]


def test_a_registries_entry_with_an_unknown_field_is_refused() -> None:
    """A misspelt field (``tokn_env``) was dropped without a word."""
    entry = {"token_env": "T", "tokn_env": "U"}
    (problem,) = _problems({"tags": [{"name": "t", "url": "/srv/m"}], "registries": {"ghcr.io": entry}})
    assert problem == "'registries.ghcr.io': unknown field 'tokn_env' (known: username_env, password_env, token_env)"


@pytest.mark.parametrize(
    "entry", [{"username_env": "U", "password": "s3cret-pw"}, {"token_env": "s3cret-pw"}], ids=["field", "value"]
)
def test_a_secret_written_in_a_registries_entry_is_not_quoted_back(entry: dict[str, object]) -> None:
    """A password in a mirror's URL is refused without quoting it ("credentials in a URL
    would be printed"); so is one written in a registries entry (it was quoted in the
    message, to the terminal and any CI log)."""
    problems = _problems({"tags": [{"name": "t", "url": "/srv/m"}], "registries": {"ghcr.io": entry}})
    assert problems and not any("s3cret" in p for p in problems), problems


def test_a_registries_host_is_kept_as_written() -> None:
    """Messages name an entry as ``registries.<host>.<field>``: the host as the config
    writes it (matching a URL ignores its case elsewhere)."""
    config = parse_config(
        {"tags": [{"name": "t", "url": "/srv/m"}], "registries": {"GHCR.io": {"token_env": "T"}}}, base=Path("/srv")
    )
    assert [(r.host, r.token_env) for r in config.registries] == [("GHCR.io", "T")]


@pytest.mark.parametrize("entry", [{"token_env": None}, {"username_env": None, "password_env": None}])
def test_a_registries_entry_naming_no_credentials_is_refused(entry: dict[str, object]) -> None:
    """``mirror.example: {token_env: }`` (its value commented out) names no credentials:
    credentials.authorization relies on "the config refuses such an entry" (it was taken,
    and a private mirror failed at sync time, an OCI registry read without a word)."""
    problems = _problems({"tags": [{"name": "t", "url": "/srv/m"}], "registries": {"mirror.example": entry}})
    assert problems == [
        "'registries.mirror.example': names no credentials: give token_env, or username_env and password_env"
    ]


@pytest.mark.parametrize("host", ["ghcr.io:443:1", "ghcr.io::", "a:b:c"])
def test_a_host_with_two_colons_that_is_no_ipv6_address_is_refused(host: str) -> None:
    """``ghcr.io:443:1`` is no host, no host and port, and no IPv6 address (it was taken
    for one: a registries entry that no URL ever matches, its mirror read without
    credentials, as a host with a space once was); a real one still is."""
    with pytest.raises(ValueError):
        host_and_port(host)
    assert host_and_port("FE80::1%eth0") == ("fe80::1%eth0", None)


@pytest.mark.parametrize("url", ["https:///develop", "https:binaries.spack.io/develop", "http://", "oci:///repo"])
def test_a_url_without_a_host_is_refused(url: str) -> None:
    """A URL of these schemes names a server: without one it was taken, and failed only
    when read ("http://" even became "http:", and its stacks "http:/e4s")."""
    problems: list[str] = []
    assert not check_url("tags[0].url", url, problems)
    scheme = url.partition(":")[0]
    assert problems == [f"'tags[0].url': a {scheme}:// URL names its host ({scheme}://HOST/PATH): {url!r}"]
