"""The configuration file: tags, stacks, URLs, tags_from, and reporting every problem."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from cachedex.config import _FAST, _NoAliasLoader, _UniqueKeysLoader, find_config, load_config, load_yaml
from cachedex.errors import ConfigError
from cachedex.ingest.discovery import mirror_url_from_index_url
from cachedex.values import short_repr


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cachedex.yaml"
    path.write_text(text)
    return path


def _problems(tmp_path: Path, text: str) -> list[str]:
    """What the config ``text`` is refused for."""
    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, text))
    return caught.value.problems


def test_a_full_config(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
catalog: data/cat.sqlite
tags:
  - name: develop
    url: https://binaries.spack.io/develop/
    stacks: [e4s, ml-linux-x86_64-cuda]
  - name: v0.22.1
    url: ./mirrors/v0.22.1
    stacks:
      e4s: https://elsewhere.example/e4s
      radiuss: file:///srv/radiuss
http: {timeout: 5, retries: 1, concurrency: 4}
""",
    )
    config = load_config(path)
    assert config.catalog == tmp_path / "data/cat.sqlite"
    develop, release = config.tags
    assert [(m.stack, m.url) for m in develop.mirrors] == [
        ("root", "https://binaries.spack.io/develop"),
        ("e4s", "https://binaries.spack.io/develop/e4s"),
        ("ml-linux-x86_64-cuda", "https://binaries.spack.io/develop/ml-linux-x86_64-cuda"),
    ]
    assert [(m.stack, m.url) for m in release.mirrors] == [
        ("root", str(tmp_path / "mirrors/v0.22.1")),
        ("e4s", "https://elsewhere.example/e4s"),
        ("radiuss", "file:///srv/radiuss"),
    ]
    assert (config.http.timeout, config.http.retries, config.http.concurrency) == (5.0, 1, 4)


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
colour: blue
tags:
  - name: ../x
    url: ftp://nope
    stacks: [a/b, root, .hidden, ok, ok]
  - name: ""
    url: 3
  - name: fine
    url: ./m
    bogus: 1
  - url: ./n
  - name: no-url
http: {timeout: -1, retries: two}
""",
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    problems = info.value.problems
    text = str(info.value)
    assert text.startswith(str(path))
    expected = [
        "unknown key 'colour'",
        "'tags[0].name': '../x' must not contain '/'",
        "'tags[0].url': expected a path, file://, http(s)://, oci:// or oci+http:// URL, got 'ftp://nope'",
        "'tags[0].stacks': stack 'a/b' must not contain '/'",
        "'tags[0].stacks': 'root' is the tag's own mirror",
        "'tags[0].stacks': stack '.hidden' must not start with '.'",
        "'tags[0].stacks': stack 'ok' is listed twice",
        "'tags[1].name': must not be empty",
        "'tags[1].url': expected a path or URL, got 3",
        "unknown key 'tags[2].bogus'",
        "'tags[3].name': missing: expected a string",
        "'tags[4].url': missing: expected a path or URL",
        "'http.timeout': expected a number between 0.1 and 3,600, got -1",
        "'http.retries': expected a whole number between 0 and 20, got 'two'",
    ]
    for fragment in expected:
        assert any(fragment in p for p in problems), (fragment, problems)
    assert len(problems) == len(expected)


def test_missing_config_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no config file here.*cachedex demo"):
        load_config(tmp_path / "nope.yaml")


def test_invalid_yaml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(_write(tmp_path, "tags: [unclosed"))


def test_a_config_that_is_not_utf8_text_or_is_endless_is_one_line(tmp_path: Path) -> None:
    binary = tmp_path / "cachedex.yaml"
    binary.write_bytes(b"tags: []\n\xff\xfe")
    with pytest.raises(ConfigError, match=r"cachedex.yaml: not UTF-8 text \(byte 9\)"):
        load_config(binary)
    with pytest.raises(ConfigError, match=r"/dev/zero: larger than 4,194,304 bytes"):
        load_config(Path("/dev/zero"))


def test_find_config_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CACHEDEX_CONFIG", raising=False)
    assert find_config(None) == Path("cachedex.yaml")
    monkeypatch.setenv("CACHEDEX_CONFIG", "/etc/c.yaml")
    assert find_config(None) == Path("/etc/c.yaml")
    assert find_config("given.yaml") == Path("given.yaml")


@pytest.mark.parametrize(
    ("index_url", "mirror"),
    [
        ("s3://spack-binaries/develop/blobs/sha256/ab/ab12", "https://binaries.spack.io/develop"),
        ("s3://spack-binaries/develop/e4s/blobs/sha256/cd/cd34", "https://binaries.spack.io/develop/e4s"),
        ("https://m.example/v1.0/v3/manifests/index/index.manifest.json", "https://m.example/v1.0"),
        ("https://m.example/v0.22/build_cache/index.json", "https://m.example/v0.22"),
        ("https://m.example/whatever.json", None),
    ],
)
def test_mirror_url_from_index_url(index_url: str, mirror: str | None) -> None:
    assert mirror_url_from_index_url(index_url) == mirror


_LAUGHS = "\n".join(
    ["tmp:", '  c0: &c0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"  c{i}: &c{i} [{','.join([f'*c{i - 1}'] * 9)}]" for i in range(1, 10)]
    + ["tags:", "  - name: *c9", "    url: /tmp"]
)


def test_hang2_a_billion_laughs_config_is_refused_at_once(tmp_path: Path) -> None:
    assert len(_LAUGHS) < 700
    with pytest.raises(ConfigError, match=r"aliases \(\*name\) are not allowed") as caught:
        load_config(_write(tmp_path, _LAUGHS))
    assert len(str(caught.value)) < 400


def test_crash14_a_config_nested_too_deep_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid YAML: nested too deeply"):
        load_config(_write(tmp_path, "tags: " + "[" * 5000 + "]" * 5000))


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        pytest.param("retries", ".nan", id="CRASH-13-retries-nan"),
        pytest.param("concurrency", ".nan", id="CRASH-13-concurrency-nan"),
        pytest.param("retries", ".inf", id="CRASH-13-retries-inf"),
        pytest.param("timeout", ".inf", id="CRASH-13-timeout-inf"),
        pytest.param("timeout", ".nan", id="CRASH-13-timeout-nan"),
        pytest.param("backoff", "1.0e+308", id="CRASH-13-backoff-huge"),
        pytest.param("backoff", "100000", id="HANG-4-backoff"),
        pytest.param("timeout", "0", id="MSG-2-timeout-zero"),
        pytest.param("concurrency", "100000", id="concurrency-huge"),
        pytest.param("retries", "9" * 400, id="retries-too-big-for-a-float"),
        pytest.param("timeout", "9" * 4000, id="timeout-of-4000-digits"),
    ],
)
def test_crash13_http_numbers_must_be_finite_and_in_range(tmp_path: Path, setting: str, value: str) -> None:
    text = f"tags: [{{name: t, url: /tmp}}]\nhttp: {{{setting}: {value}}}\n"
    with pytest.raises(ConfigError, match=rf"'http.{setting}': expected a (number|whole number) between"):
        load_config(_write(tmp_path, text))


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('catalog: "a\\0b"\ntags: [{name: t, url: /tmp}]', "catalog"),
        ('http: {ca_bundle: "\\0"}\ntags: [{name: t, url: /tmp}]', "http.ca_bundle"),
        ('tags: [{name: t, url: "/t\\0mp"}]', "tags[0].url"),
        ('tags_from: "\\0"', "tags_from"),
        ('tags: [{name: t, url: /tmp, stacks: {e: "a\\0"}}]', "tags[0].stacks.e"),
        ('tags: [{name: t, url: /tmp, stacks: {e: {url: "a\\x1b[2J", view: v}}}]', "tags[0].stacks.e.url"),
    ],
)
def test_a_path_with_nul_or_control_characters_is_a_config_error(tmp_path: Path, text: str, key: str) -> None:
    # The operating system refuses NUL in a path (a ValueError deep in pathlib, found by
    # Hypothesis); a terminal acts on the other control characters when a message quotes them.
    with pytest.raises(ConfigError, match=rf"'{re.escape(key)}': expected a (file path|path or URL)"):
        load_config(_write(tmp_path, text + "\n"))


@pytest.mark.parametrize(
    ("text", "key", "why"),
    [
        ("tags: [{name: t, url: 'http://[x'}]", "tags[0].url", "Invalid IPv6 URL"),
        ("tags: [{name: t, url: 'http://h:99999/m'}]", "tags[0].url", "Port out of range"),
        ("tags: [{name: t, url: /tmp, stacks: {e: 'http://[x'}}]", "tags[0].stacks.e", "Invalid IPv6 URL"),
        (
            "tags: [{name: t, url: /tmp, stacks: {e: {url: 'http://]x', view: v}}}]",
            "tags[0].stacks.e.url",
            "Invalid IPv6",
        ),
        ("tags_from: 'http://[x'", "tags_from", "Invalid IPv6 URL"),
    ],
)
def test_a_url_urlsplit_refuses_is_a_config_error(tmp_path: Path, text: str, key: str, why: str) -> None:
    with pytest.raises(ConfigError, match=rf"'{re.escape(key)}': not a valid URL \({why}"):
        load_config(_write(tmp_path, text + "\n"))


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://alice:s3cret@h/m", "credentials in a URL would be printed"),
        ("https://token@h/m", "credentials in a URL"),
        ("http://h/v3?x=1", "no ?query or #fragment"),
        ("http://h/v3#frag", "no ?query or #fragment"),
        ("http://h/v3?", "no ?query or #fragment"),
        ("file:///srv/m?x=1", "no ?query or #fragment"),
        ("file:///srv/m#frag", "no ?query or #fragment"),
    ],
)
def test_a_mirror_url_with_credentials_a_query_or_a_fragment_is_refused(tmp_path: Path, url: str, why: str) -> None:
    """Credentials were sent as Basic auth, then printed in errors, stored and published
    on spec pages; a query or fragment made every file's URL wrong ("no build cache index
    here"). A file:// URL's query made every stack's URL join after it, so each stack
    read the root's folder. A file's URL (tags_from) may have a query."""
    for text in (f"tags: [{{name: t, url: '{url}'}}]", f"tags: [{{name: t, url: /tmp, stacks: {{e: '{url}'}}}}]"):
        with pytest.raises(ConfigError, match=re.escape(why)) as caught:
            load_config(_write(tmp_path, text + "\n"))
        assert "s3cret" not in str(caught.value)
    assert load_config(_write(tmp_path, "tags_from: 'http://h/tags.yaml?ref=main'\n")).tags_from


def test_a_catalog_folder_and_a_number_yaml_reads_as_text_are_said_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`catalog: data/` made a file named data; YAML 1.1 reads 1e3 (no dot) as text, and
    "got '1e3'" did not say why a number was refused."""
    text = "catalog: data/\nhttp: {timeout: 1e3, retries: '3'}\nlimits: {index_bytes: 2.5e9}\n"
    text += "tags: [{name: t, url: /tmp}]\n"
    assert _problems(tmp_path, text) == [
        "'catalog': expected a file path, got 'data/' (a folder's: name the file in it, 'data/cachedex.sqlite')",
        "'http.timeout': expected a number between 0.1 and 3,600, got '1e3' (YAML reads it as text: write 1000)",
        "'http.retries': expected a whole number between 0 and 20, got '3' (YAML reads it as text: write 3)",
        # (2.5e9 too: YAML 1.1's exponent takes a sign, 2.5e+9)
        "'limits.index_bytes': expected a whole number between 1,000 and 1,099,511,627,776, got '2.5e9' "
        "(YAML reads it as text: write 2500000000)",
    ]
    # a folder by other spellings too; a number the setting refuses anyway gets no hint to write it
    monkeypatch.setenv("DIR", str(tmp_path / "d") + "/")
    (tmp_path / "there").mkdir()
    for folder in ("data/.", "$DIR", "there"):
        (problem,) = _problems(tmp_path, f"catalog: {folder}\ntags: [{{name: t, url: /tmp}}]\n")
        assert problem.startswith(f"'catalog': expected a file path, got '{folder}' (a folder's: "), problem
    (problem,) = _problems(tmp_path, "http: {timeout: 1e9}\ntags: [{name: t, url: /tmp}]\n")
    assert problem == "'http.timeout': expected a number between 0.1 and 3,600, got '1e9'"
    # a key of a section misspelled and given no value is still unknown (it was taken, as "no value")
    assert _problems(tmp_path, "http: {timout: }\ntags: [{name: t, url: /tmp}]\n") == [
        "unknown key 'http.timout' (known: backoff, ca_bundle, concurrency, deadline, retries, timeout)"
    ]


def test_a_config_of_many_problems_names_the_first_twenty(tmp_path: Path) -> None:
    """A generated config of 20,000 bad tags made one error line of 2.3 MB."""
    text = "tags:\n" + "".join(f"  - {{name: 'bad/{n}', url: /tmp}}\n" for n in range(2000))
    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, text))
    assert len(caught.value.problems) == 2000 and len(str(caught.value)) < 4000
    assert "2,000 problems: 'tags[0].name': " in str(caught.value) and "'tags[19].name'" in str(caught.value)
    assert "'tags[20].name'" not in str(caught.value) and str(caught.value).endswith("; and 1,980 more")


def test_an_unknown_key_of_any_length_is_quoted_short(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, "? " + "x" * 5000 + "\n: 1\ntags: [{name: t, url: /tmp}]\n"))
    assert len(str(caught.value)) < 1000 and "unknown key 'xxx" in str(caught.value)


def test_a_path_starting_with_a_tilde_is_in_the_home_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Taken as relative, "~/x" made a folder named "~" beside the config (an
    invitation to `rm -rf ~`)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    (tmp_path / "home/ca.pem").write_text("")
    text = "catalog: ~/c.sqlite\nhttp: {ca_bundle: ~/ca.pem}\ntags: [{name: t, url: ~/mirrors/t, stacks: {s: ~/s}}]\n"
    config = load_config(_write(tmp_path, text))
    home = (tmp_path / "home").resolve()
    assert config.catalog == home / "c.sqlite" and config.http.ca_bundle == str(home / "ca.pem")
    assert [m.url for m in config.tags[0].mirrors] == [str(home / "mirrors/t"), str(home / "s")]


def test_a_config_in_a_folder_whose_path_is_not_utf8_text_is_one_line(tmp_path: Path) -> None:
    """Python holds the bytes of a path that are not UTF-8 as lone surrogates (a locale
    that is not UTF-8, UTF-8 mode off); the catalog keeps mirror paths as text."""
    folder = Path(os.fsdecode(os.fsencode(tmp_path) + b"/dir-\xff"))
    folder.mkdir()
    with pytest.raises(ConfigError, match="its folder's path is not UTF-8 text"):
        load_config(_write(folder, "tags: [{name: t, url: ./m}]\n"))


def test_tags_that_differ_only_in_case_are_refused(tmp_path: Path) -> None:
    """Their folders (tags/develop, tags/Develop) are one on macOS's or Windows's disks."""
    with pytest.raises(ConfigError, match="tags 'develop' and 'Develop' differ only in case"):
        load_config(_write(tmp_path, "tags: [{name: develop, url: /tmp}, {name: Develop, url: /tmp}]\n"))


def test_msg8_a_catalog_path_climbing_above_the_root_is_resolved(tmp_path: Path) -> None:
    climbs = "../" * (len(tmp_path.parts) + 3)
    config = load_config(_write(tmp_path, f"catalog: {climbs}tmp/c.sqlite\ntags: [{{name: t, url: /tmp}}]\n"))
    assert config.catalog == Path("/tmp/c.sqlite")


def test_stacks_as_views_and_oci_urls(tmp_path: Path) -> None:
    config = load_config(
        _write(
            tmp_path,
            """
tags:
  - name: dev
    url: ./mirror
    stacks:
      e4s: {view: e4s}
      ml: {url: https://other.example/m, view: ml-cuda}
      old: https://old.example/old
    views: [hpc]
  - name: local
    url: ./views-only
    views: all
  - name: oci
    url: oci://ghcr.io/spack/github-actions-buildcache
    stacks: [x]
registries:
  ghcr.io: {username_env: GH_USER, password_env: GH_TOKEN}
  127.0.0.1:5000: {token_env: REG_TOKEN}
""",
        )
    )
    dev, local, oci = config.tags
    root = str(tmp_path / "mirror")
    assert [(m.stack, m.url, m.view) for m in dev.mirrors] == [
        ("root", root, None),
        ("e4s", root, "e4s"),
        ("ml", "https://other.example/m", "ml-cuda"),
        ("old", "https://old.example/old", None),
        ("hpc", root, "hpc"),
    ]
    assert local.discover_views and len(local.mirrors) == 1
    assert [m.url for m in oci.mirrors] == [
        "oci://ghcr.io/spack/github-actions-buildcache",
        "oci://ghcr.io/spack/github-actions-buildcache/x",
    ]
    assert config.registry("ghcr.io") is not None and config.registry("ghcr.io").password_env == "GH_TOKEN"  # type: ignore[union-attr]
    assert config.registry("127.0.0.1:5000").token_env == "REG_TOKEN"  # type: ignore[union-attr]


def test_view_problems_are_reported(tmp_path: Path) -> None:
    text = """
tags:
  - name: a
    url: https://m.example/a
    views: all
  - name: b
    url: ./m
    stacks: {s: {view: ../up}, t: {view: x, colour: red}}
    views: [ok, ok]
  - name: c
    url: oci://r.example/c
    stacks: {s: {view: v}}
registries:
  r.example: {password_env: ONLY_HALF}
  x.example: {token_env: "not a name"}
  "ghcr .io": {token_env: T}
  Y.example: {token_env: T}
  y.EXAMPLE: {token_env: T}
  y.example:8443: {token_env: T}
  "z.example:": {token_env: T}
"""
    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, text))
    problems = caught.value.problems
    for fragment in (
        "'tags[0].views': 'all' needs a mirror in a folder",
        "'tags[1].stacks.s.view': '../up' must not contain '/'",
        "'tags[1].stacks.t': expected a URL or a mapping with view",
        "'tags[1].views': stack 'ok' is listed twice",
        "'tags[2].stacks.s': OCI registries have no views",
        "'registries.r.example': username_env and password_env go together",
        "'registries.x.example.token_env': expected the NAME of an environment variable (letters, digits and _)",
        # (taken, a host with a space matched no URL, and of two spellings of one host the first was used)
        "'registries': expected a host name (such as ghcr.io or ghcr.io:443), got 'ghcr .io'",
        # (a colon with no port was read as every port)
        "'registries': expected a host name (such as ghcr.io or ghcr.io:443), got 'z.example:'",
        "'registries': 'Y.example' and 'y.EXAMPLE' name one host (host names ignore case); keep one",
    ):
        assert any(fragment in p for p in problems), (fragment, problems)
    assert not any("8443" in p for p in problems), problems  # (a port apart is another endpoint)


def test_views_all_of_an_oci_tag_says_registries_have_none(tmp_path: Path) -> None:
    """It said to name the views instead, and a named view of a registry is refused too."""
    text = "tags: [{name: o, url: 'oci://ghcr.io/spack/cache', views: all}]\n"
    assert _problems(tmp_path, text) == [
        "'tags[0].views': OCI registries have no views (a view is a v3 mirror's index of a subset)"
    ]


def test_a_url_with_a_space_is_a_config_error(tmp_path: Path) -> None:
    """It failed at sync time as "HTTP transfer failed (URL rejected: Bad path)"."""
    text = "tags: [{name: a, url: 'https://m.example/my cache'}, {name: b, url: 'oci://r.example/a b'}]\n"
    assert _problems(tmp_path, text) == [
        "'tags[0].url': a URL holds no spaces; write each as %20: 'https://m.example/my cache'",
        "'tags[1].url': a URL holds no spaces; write each as %20: 'oci://r.example/a b'",
    ]
    assert load_config(_write(tmp_path, "tags: [{name: a, url: 'https://m.example/my%20cache'}]\n")).tags


def test_compare_pairs(tmp_path: Path) -> None:
    base = "tags: [{name: v1.0.2, url: ./m}]\n"
    config = load_config(_write(tmp_path, base + "compare: [[v1.0.1, v1.0.2], [develop-2026-11-01, develop]]\n"))
    assert config.compare == (("v1.0.1", "v1.0.2"), ("develop-2026-11-01", "develop"))
    with pytest.raises(ConfigError) as raised:
        load_config(_write(tmp_path, base + "compare: [[a], [b, b], [../x, y], v1.0.2, [c, d], [c, d]]\n"))
    message = str(raised.value)
    assert "'compare[0]': expected [OLD, NEW]" in message and "'compare[1]': a tag compared with itself" in message
    assert "'compare[2]'" in message and "'compare[3]': expected [OLD, NEW]" in message
    assert "'compare[5]': the pair ['c', 'd'] is listed twice (first at 'compare[4]')" in message


def test_a_tag_refused_for_its_url_is_still_checked_against_the_others(tmp_path: Path) -> None:
    """Every problem at once: a tag whose URL was refused was left out of the other
    checks, and its case clash with another tag was said only once the URL was mended."""
    text = "tags: [{name: Dev, url: ./y}, {name: dev, url: 'https://u:p@x.org/'}]\n"
    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, text))
    assert len(caught.value.problems) == 2, caught.value.problems
    assert "credentials in a URL" in caught.value.problems[0] and "differ only in case" in caught.value.problems[1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "tags: [{name: a, url: /tmp}]\ntags: [{name: b, url: /tmp}]\n",
            "line 2, column 1: key 'tags' is given twice (first at line 1)",
        ),
        (
            "tags:\n  - name: a\n    url: /tmp\n    name: b\n",
            "line 4, column 5: key 'name' is given twice (first at line 2)",
        ),
        (
            "http: {timeout: 5, timeout: 50}\ntags: [{name: a, url: /tmp}]\n",
            "line 1, column 20: key 'timeout' is given twice (first at line 1)",
        ),
        (  # two keys to YAML, one to Python (1 == True): said as they were written
            "http:\n  1: a\n  true: b\ntags: [{name: a, url: /tmp}]\n",
            "line 3, column 3: key 'true' is the same key as '1' at line 2",
        ),
    ],
)
def test_a_key_given_twice_is_refused_with_its_lines(tmp_path: Path, text: str, message: str) -> None:
    """PyYAML keeps the last of two equal keys without a word: a second 'tags:' dropped
    every tag of the first, a second 'name:' renamed the tag."""
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError, match=re.escape(f"{path}: not valid YAML: {message}")):
        load_config(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "tags:\n\t- name: a\n",
            "not valid YAML: line 2, column 1: found character '\\t' that cannot start any token",
        ),
        (  # (where the unclosed sequence began: its context)
            "tags: [{name: a, url: /tmp}\n",
            "not valid YAML: line 2, column 1: expected ',' or ']', but got '<stream end>' "
            "(while parsing a flow sequence from line 1, column 7)",
        ),
        (
            "x: &a /tmp\ntags: [{name: a, url: *a}]\n",
            "not valid YAML: line 2, column 23: aliases (*name) are not allowed",
        ),
    ],
)
def test_invalid_yaml_says_the_line_and_column_in_one_line(tmp_path: Path, text: str, message: str) -> None:
    """PyYAML's own message named the file "<unicode string>" and put a three-line
    excerpt with a caret on one line."""
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: {message}"), str(caught.value)
    assert "<unicode string>" not in str(caught.value) and "^" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("tags: [{name: t, url: 'file://mirrors/develop'}]", "tags[0].url"),
        ("tags: [{name: t, url: 'file:mirrors/develop'}]", "tags[0].url"),
        ("tags: [{name: t, url: /tmp, stacks: {e: 'file://./e4s'}}]", "tags[0].stacks.e"),
        ("tags: [{name: t, url: /tmp, stacks: {e: {url: 'file:m', view: v}}}]", "tags[0].stacks.e.url"),
        ("tags_from: 'file://tags.json'", "tags_from"),
    ],
)
def test_a_file_url_that_is_not_absolute_is_refused(tmp_path: Path, text: str, key: str) -> None:
    """file://mirrors/develop is the file /develop on a host "mirrors" (the sync read
    /develop), and file:mirrors/develop is relative to the current folder, not to the
    config's."""
    with pytest.raises(ConfigError, match=rf"'{re.escape(key)}': a file:// URL takes an absolute path"):
        load_config(_write(tmp_path, text + "\n"))
    text = "tags: [{name: t, url: 'file:///srv/m/', stacks: {a: 'file://localhost/srv/a', b: 'file:/srv/b'}}]\n"
    urls = [m.url for m in load_config(_write(tmp_path, text)).tags[0].mirrors]
    assert urls == ["file:///srv/m/", "file://localhost/srv/a", "file:/srv/b"]


def test_an_environment_variable_in_a_path_is_its_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Taken as they were, "$HOME/c.sqlite" made a folder named "$HOME" beside the config
    (and `rm -rf $HOME` removes another)."""
    monkeypatch.setenv("MIRRORS", str(tmp_path / "m"))
    monkeypatch.delenv("CACHEDEX_UNSET", raising=False)
    text = (
        "catalog: $MIRRORS/c.sqlite\nhttp:\n  ca_bundle: ${MIRRORS}/ca.pem\n"
        "tags:\n  - name: t\n    url: $MIRRORS/t\n    stacks: {s: $MIRRORS/s, h: 'https://h/$x'}\n"
    )
    config = load_config(_write(tmp_path, text))
    assert config.catalog == tmp_path / "m/c.sqlite" and config.http.ca_bundle == str(tmp_path / "m/ca.pem")
    assert [m.url for m in config.tags[0].mirrors] == [str(tmp_path / "m/t"), str(tmp_path / "m/s"), "https://h/$x"]
    text = "catalog: $CACHEDEX_UNSET/c.sqlite\ntags: [{name: t, url: '${CACHEDEX_UNSET}/t'}]\n"
    assert _problems(tmp_path, text) == [
        "'catalog': environment variable $CACHEDEX_UNSET is not set (or empty): '$CACHEDEX_UNSET/c.sqlite'",
        "'tags[0].url': environment variable $CACHEDEX_UNSET is not set (or empty): '${CACHEDEX_UNSET}/t'",
    ]


def test_a_variable_holding_a_url_is_refused_not_read_as_a_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scheme is read before variables are expanded: "$MIRROR_URL" holding an
    https:// URL was read as the local folder "https:/host/..." beside the config."""
    monkeypatch.setenv("MIRROR_URL", "https://mirror.example/develop")
    assert _problems(tmp_path, "tags: [{name: t, url: /srv, stacks: {e: '${MIRROR_URL}/e4s'}}]\n") == [
        "'tags[0].stacks.e': environment variables are expanded in paths only, and this one holds a "
        "https:// URL; write the URL itself: '${MIRROR_URL}/e4s'"
    ]
    monkeypatch.setenv("MIRROR_URL", str(tmp_path))
    assert load_config(_write(tmp_path, "tags: [{name: t, url: $MIRROR_URL}]\n")).tags[0].mirrors[0].url == str(
        tmp_path
    )
    # a folder whose name holds a colon is no URL (it was refused as a "snap-2026-11-01t09://" one)
    monkeypatch.setenv("SNAP", "snap-2026-11-01T09:30")
    config = load_config(_write(tmp_path, "tags: [{name: t, url: $SNAP/mirror}]\n"))
    assert config.tags[0].mirrors[0].url == str(tmp_path / "snap-2026-11-01T09:30/mirror")


def test_a_config_read_from_a_pipe_resolves_paths_in_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`-c <(cat cachedex.yaml)` or /dev/stdin: the folder was /proc/PID/fd's."""
    monkeypatch.chdir(tmp_path)
    read, write = os.pipe()
    os.write(write, b"catalog: c.sqlite\ntags: [{name: t, url: m}]\n")
    os.close(write)
    try:
        config = load_config(Path(f"/proc/self/fd/{read}"))
    finally:
        os.close(read)
    assert config.catalog == tmp_path / "c.sqlite" and config.tags[0].mirrors[0].url == str(tmp_path / "m")


def test_a_section_given_no_value_is_left_at_its_default(tmp_path: Path) -> None:
    """A section whose every line is commented out ('http:' alone) is null in YAML: it
    was refused as "got None" ('compare', 'tags': "got NoneType"), while 'registries:'
    and 'views:' alone were taken as left out."""
    text = "tags:\n  - name: t\n    url: /tmp\n    stacks:\n    views:\nhttp:\nlimits:\ncompare:\nregistries:\n"
    config = load_config(_write(tmp_path, text))
    # (a key of its own given no value, too: 'catalog:' and 'http: {timeout: }' said "got None")
    keys = "catalog:\nhttp: {timeout: , ca_bundle: }\nlimits: {index_bytes: }\ntags: [{name: t, url: /tmp}]\n"
    alone = load_config(_write(tmp_path, keys))
    assert alone.catalog.name == "cachedex.sqlite" and alone.http.timeout == 30.0 and alone.http.ca_bundle is None
    assert alone.limits.index_bytes == 1_000_000_000
    assert [m.stack for m in config.tags[0].mirrors] == ["root"] and config.compare == ()
    assert config.http.timeout == 30.0 and config.limits.index_bytes == 1_000_000_000
    with pytest.raises(ConfigError, match="^[^;]*: no tags configured: add a 'tags' list or 'tags_from'$"):
        load_config(_write(tmp_path, "tags:\n"))


def test_tags_from_is_not_an_oci_url(tmp_path: Path) -> None:
    """A discovery file is a file: 'oci://' passed, then was read as a local path."""
    with pytest.raises(
        ConfigError, match=r"'tags_from': expected a path, file:// or http\(s\):// URL, got 'oci://r/x'"
    ):
        load_config(_write(tmp_path, "tags_from: oci://r/x\n"))


def test_a_path_or_url_with_spaces_around_it_is_refused(tmp_path: Path) -> None:
    """A quoted "https://h/m " made its stacks "https://h/m /e4s", and " /m" a folder
    whose name starts with a space."""
    text = "tags: [{name: t, url: 'https://h/m ', stacks: {e4s: ' ./e4s'}}]\n"
    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, text))
    message = str(caught.value)
    assert "'tags[0].url': spaces before or after the path or URL: 'https://h/m '" in message, message
    assert "spaces before or after the path or URL: ' ./e4s'" in message, message


@pytest.mark.parametrize(
    ("url", "says"),
    [
        (
            "s3://my-bucket/mirror",
            "a bucket (s3://) is read over HTTPS: give its https:// URL "
            "(https://my-bucket.s3.amazonaws.com/mirror if it is public, or an S3-compatible store's own "
            "endpoint); a private bucket's signed requests are not supported",
        ),
        (
            "gs://my-bucket/a/b",
            "a bucket (gs://) is read over HTTPS: give its https:// URL "
            "(https://storage.googleapis.com/my-bucket/a/b if it is public); a private bucket's signed "
            "requests are not supported",
        ),
        # (a dotted name is served path-style: the wildcard certificate covers one label)
        (
            "s3://my.bucket/m",
            "a bucket (s3://) is read over HTTPS: give its https:// URL (https://s3.amazonaws.com/my.bucket/m",
        ),
        # (no store's bucket: credentials or a port; no URL is made of it)
        ("s3://key:secret@bucket/m", "a bucket (s3://) is read over HTTPS: give its https:// URL (if it is public,"),
        ("s3://bucket:9000/m", "a bucket (s3://) is read over HTTPS: give its https:// URL (if it is public,"),
        # (a long path is said once, in the value quoted)
        ("s3://bkt/" + "x" * 201, "a bucket (s3://) is read over HTTPS: give its https:// URL (if it is public,"),
        ("s3://spack-binaries/develop", "Spack's public bucket is served at https://binaries.spack.io/develop"),
    ],
)
def test_a_bucket_as_spack_names_it_is_told_its_https_url(tmp_path: Path, url: str, says: str) -> None:
    """``spack mirror add`` takes s3:// and gs:// buckets; cachedex reads them over HTTPS,
    and said only that it expected another scheme."""
    path = _write(tmp_path, f"tags:\n  - name: t\n    url: {url}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    (problem,) = info.value.problems
    assert problem.startswith(f"'tags[0].url': {says}") and problem.endswith(f"got {short_repr(url)}")
    assert len(problem) < 500  # (a long path said once, cut short)


# -- YAML read by libyaml ------------------------------------------------------------------------

_scalar = st.one_of(st.text(max_size=12), st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False))
_document = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=16,
)


def _read(text: str, loader: type[object]) -> tuple[str, object]:
    try:
        return "read", yaml.load(text, Loader=loader)  # noqa: S506 - the safe loaders of cachedex.config
    except yaml.YAMLError:
        return "refused", None


_LIBYAML = pytest.mark.skipif(not _FAST, reason="this PyYAML has no libyaml")


@_LIBYAML
@given(document=_document, flow=st.sampled_from([None, True, False]), unique=st.booleans())
def test_libyaml_reads_a_document_as_pyyamls_own_reader_does(document: object, flow: bool | None, unique: bool) -> None:
    """A config of 1.4 MB took ~7 s in PyYAML's pure-Python reader; libyaml reads what
    has no alias, and must read it to the same values (and refuse what it refuses)."""
    text = yaml.safe_dump(document, default_flow_style=flow, allow_unicode=True)
    exact = _UniqueKeysLoader if unique else _NoAliasLoader
    assert _read(text, _FAST[unique]) == _read(text, exact)


@_LIBYAML
def test_a_document_without_an_alias_is_read_by_libyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    used: list[type[object]] = []
    load = yaml.load
    monkeypatch.setattr(yaml, "load", lambda text, Loader: used.append(Loader) or load(text, Loader=Loader))  # noqa: S506
    assert load_yaml("tags: [{name: a, url: /m}]\n", unique_keys=True) == {"tags": [{"name": "a", "url": "/m"}]}
    assert used == [_FAST[True]] and issubclass(used[0], yaml.CSafeLoader)
    # an alias, and a key given twice: PyYAML's own reader says where
    with pytest.raises(ValueError, match=r"line 2, column 4: aliases"):
        load_yaml("x: &a 1\ny: *a\n")
    with pytest.raises(ValueError, match=r"key 'a' is given twice \(first at line 1\)"):
        load_yaml("a: 1\na: 2\n", unique_keys=True)
    assert used[1:] == [_NoAliasLoader, _FAST[True], _UniqueKeysLoader]


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\t\n",  # tabs as spacing: PyYAML refuses them, libyaml took them
        "a:\t# c\n  b: 1\n",
        "a: >#x\n",  # a block scalar's header followed by a comment
        "---\n\ufeffa: 1\n",  # a byte order mark past the start: a key's first character to PyYAML
        "a: !\n",  # an empty tag: '' to libyaml, None to PyYAML
        "{! : 1, ~: 2}\n",  # (and so a key given twice went unseen)
    ],
)
def test_what_libyaml_reads_otherwise_is_read_by_pyyaml(text: str) -> None:
    """Found by a review: libyaml read these otherwise than PyYAML's own reader (which
    refused most of them), and a ``*`` anywhere (a comment's) chose between the two."""
    for unique, loader in ((False, _NoAliasLoader), (True, _UniqueKeysLoader)):
        expected = _read(text, loader)
        try:
            got: tuple[str, object] = "read", load_yaml(text, unique_keys=unique)
        except ValueError:
            got = "refused", None
        assert got == expected, (text, unique)
        assert _agrees_with_a_star(text, unique)


def _agrees_with_a_star(text: str, unique: bool) -> bool:
    """The same answer with a comment holding ``*`` added (which PyYAML's reader reads)."""

    def answer(source: str) -> object:
        try:
            return load_yaml(source, unique_keys=unique)
        except ValueError:
            return "refused"

    return answer(text) == answer(text + "# *\n")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('catalog: "  "\ntags: [{name: t, url: /m}]', "'catalog': expected a file path"),
        ('http: {ca_bundle: ""}\ntags: [{name: t, url: /m}]', "'http.ca_bundle': expected a file path"),
        ('catalog: ""\ntags: [{name: t, url: /m}]', "'catalog': expected a file path"),
        ('tags: ""', "'tags': expected a list, got str"),
        ("http: 0\ntags: [{name: t, url: /m}]", "'http': expected a mapping"),
        ("tags: [{name: t, url: /m}]\nhttp: {retries: 2.5}", "expected a whole number between 0 and 20"),
        ('tags: [{name: t, url: /m}]\nhttp: {retries: "2.5e0"}', "'http.retries'"),
        ('tags_from: "oci+http://localhost:5000/x"', "expected a path, file:// or http(s):// URL"),
        (
            'tags: [{name: t, url: /m, stacks: {ml: {url: "oci+http://localhost:5000/x", view: ml}}}]',
            "OCI registries have no views",
        ),
        ("tags: [{name: t, url: /m}]\nregistries: {ghcr.io: {}}", "names no credentials: give token_env"),
        ("tags: [{name: t, url: /m}]\nregistries: {ghcr.io: {username_env: U}}", "go together"),
        (
            "tags: [{name: t, url: /m}]\nregistries: {ghcr.io: {username_env: U, password_env: P, token_env: T}}",
            "'registries.ghcr.io': token_env, or username_env and password_env; not both",
        ),
        (
            'tags: [{name: t, url: /m}]\nregistries: {"FE80::1": {token_env: T}, "fe80::1": {token_env: T}}',
            "name one host",
        ),
        ('tags: [{name: t, url: /m}]\ncompare: [[t, "../x"]]', "must not contain"),
        # (a name no tag can have: tags are labels; it was taken, and compared nothing)
        ('tags: [{name: t, url: /m}]\ncompare: [[t, "bad name!"]]', "may hold only letters, digits"),
        ("tags: [{name: A, url: /a}, {name: a, url: /b}, {name: A, url: /c}]", "tag 'A' is configured twice"),
    ],
)
def test_each_value_a_setting_cannot_take_is_said(tmp_path: Path, text: str, fragment: str) -> None:
    """Values a mutation of the checks let through (an empty or blank path, a float
    where a count goes, an oci+http URL where none goes, credentials half or doubly
    given, one host in two cases, a compared name that climbs); each is said."""
    problems = _problems(tmp_path, text)
    assert any(fragment in p for p in problems), problems
    if "2.5e0" in text:  # (a number as text is hinted only when the setting could take it)
        assert not any("YAML reads it as text" in p for p in problems), problems


def test_values_at_their_bounds_and_places_written_otherwise_are_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bounds are inclusive; a file:// URL (in upper case too) is the folder it names, and
    may list its views; a one-letter scheme is a folder; an empty variable is unset."""
    text = """
tags:
  - {name: a, url: "file:///srv/m/", stacks: {ml: {url: /srv/m, view: ml}}}
  - {name: b, url: "FILE:///srv/m", stacks: {ml: {url: /srv/m, view: ml}}}
  - {name: c, url: "file:///srv/m", views: all}
  - {name: d, url: "c:/mirror"}
  - {name: e, url: /srv/m, stacks: {ml: {url: /srv/o, view: ml}}}
  - {name: f, url: "file:///srv/m/", stacks: [e4s]}
http: {retries: 20, concurrency: 256, timeout: 3600, deadline: 86400, backoff: 60}
"""
    config = load_config(_write(tmp_path, text))
    tags = {t.name: t for t in config.tags}
    assert tags["a"].reads_root_views and tags["b"].reads_root_views and not tags["e"].reads_root_views
    assert tags["c"].discover_views
    assert tags["d"].mirrors[0].url == str(tmp_path / "c:/mirror")
    assert tags["f"].mirrors[1].url == "file:///srv/m/e4s"
    assert (config.http.retries, config.http.concurrency, config.http.backoff) == (20, 256, 60)
    monkeypatch.setenv("EMPTY", "")
    assert any(
        "environment variable $EMPTY is not set" in p for p in _problems(tmp_path, "tags: [{name: t, url: $EMPTY/m}]")
    )
    monkeypatch.setenv("BUCKET", "s3://bucket/p")
    assert any("holds a s3:// URL" in p for p in _problems(tmp_path, "tags: [{name: t, url: $BUCKET}]"))


def test_a_folder_whose_name_holds_a_colon_is_told_how_to_write_it(tmp_path: Path) -> None:
    # ("snap-09:30" reads as a URL of scheme snap-09; "./snap-09:30" is the folder)
    (tmp_path / "snap-09:30").mkdir()
    with pytest.raises(ConfigError) as info:
        load_config(_write(tmp_path, "tags:\n  - name: snap\n    url: 'snap-09:30'\n"))
    assert info.value.problems == [
        "'tags[0].url': expected a path, file://, http(s)://, oci:// or oci+http:// URL, got 'snap-09:30'; "
        "a folder whose name holds ':' is written './snap-09:30'"
    ]
    config = load_config(_write(tmp_path, "tags:\n  - name: snap\n    url: './snap-09:30'\n"))
    assert config.tags[0].mirrors[0].url == str(tmp_path / "snap-09:30")
    with pytest.raises(ConfigError, match=r"got 'ftp://nope'$"):  # (a URL is not told so)
        load_config(_write(tmp_path, "tags:\n  - name: snap\n    url: ftp://nope\n"))
