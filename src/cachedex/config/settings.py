"""Every key of the configuration file, declared once (:data:`SETTINGS`: key, kind,
default, range, help): the config's defaults and number bounds come from this table, and
so does its reference, ``docs/config.md`` (:func:`reference_markdown`; a test keeps the
file current)."""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["SETTINGS", "Setting", "reference_markdown", "setting", "shown_bound"]


class Setting(NamedTuple):
    """One key of the config file."""

    key: str  #: dotted: ``catalog``, ``http.timeout``, ``tags[].stacks``
    kind: str  #: what it takes, as the reference shows it
    default: Any  #: None: optional, no default
    help: str
    low: float | None = None  #: numbers: the smallest value allowed
    high: float | None = None  #: numbers: the largest value allowed


#: Every key of the config file, once.
SETTINGS: tuple[Setting, ...] = (
    Setting("catalog", "path", "cachedex.sqlite", "The SQLite catalog file, relative to the config file."),
    Setting("tags", "list", [], "The tags to read: a list of mappings with the keys below."),
    Setting(
        "tags[].name",
        "name",
        None,
        "The tag's name: letters, digits and . _ + @ = -, starting with a letter or digit (it names folders, "
        "URLs and words of shell commands).",
    ),
    Setting(
        "tags[].url",
        "path or URL",
        None,
        "The tag's root mirror: a path, a file://, http(s)://, oci:// or oci+http:// URL (an http(s) URL "
        "without credentials, which would be printed and published with it, nor a ?query, #fragment or "
        "space: write %20). A public s3:// or gs:// bucket is given by the https:// URL that serves it "
        "(https://BUCKET.s3.amazonaws.com/PREFIX; Spack's own: https://binaries.spack.io/).",
    ),
    Setting(
        "tags[].stacks",
        "list or mapping",
        [],
        "The tag's stacks: names (each at <url>/<name>); or name: URL for a stack mirrored elsewhere, "
        "name: {view: V} for a buildcache view of the tag's mirror, name: {url: U, view: V} for a view "
        "of another mirror.",
    ),
    Setting(
        "tags[].views",
        "'all' or list",
        None,
        "Views of the tag's mirror to read as stacks: a list of names, or 'all' (found by listing "
        "v3/manifests/index/; folders and file:// only).",
    ),
    Setting(
        "tags_from",
        "path or URL",
        None,
        "cache.spack.io's discovery file ({tag: [{label, url}]}): its tags are added to 'tags'.",
    ),
    Setting(
        "http.timeout",
        "seconds",
        30.0,
        "Seconds without data (or to connect) before a request fails; libcurl averages the rate over "
        "its last few seconds, so a stall right after a burst is seen up to ~5 s later.",
        0.1,
        3600,
    ),
    Setting(
        "http.deadline",
        "seconds",
        600.0,
        "Seconds one request may take in all, however slow; not tried again (but a 'verify --deep' read of a "
        "binary goes on where the deadline cut it, up to http.retries times).",
        1,
        86400,
    ),
    Setting("http.retries", "count", 3, "Extra attempts on connection errors, timeouts, 429 and 5xx answers.", 0, 20),
    Setting("http.backoff", "seconds", 0.5, "First pause between attempts; it doubles each time.", 0, 60),
    Setting(
        "http.concurrency",
        "count",
        96,
        "Requests in flight at once (spec manifests, stack indexes): over https, HTTP/2 streams of one "
        "connection (a CDN allows 100 or more). A sync that reads 20,000 or more spec manifests reads them "
        "in a second process, with as many in flight again there while this one reads the stacks' indexes. "
        "Over plain http each is a connection of its own: a server whose queue of new connections is short "
        "(Python's http.server holds five) keeps the rest waiting a second or more each (a 650-spec sync: a "
        "minute, against 0.3 s with 4).",
        1,
        256,
    ),
    Setting(
        "http.ca_bundle",
        "path",
        None,
        "CA certificates to trust for https (default: $SSL_CERT_FILE, else the system's).",
    ),
    Setting("limits.index_bytes", "bytes", 1_000_000_000, "Largest index read (after decompression).", 1000, 2**40),
    Setting(
        "limits.manifest_bytes",
        "bytes",
        1_000_000,
        "Largest manifest read (v3 index, spec and key manifests; OCI manifests).",
        1000,
        2**31,
    ),
    Setting("limits.spec_file_bytes", "bytes", 16_000_000, "Largest v1/v2 spec file or signature read.", 1000, 2**31),
    Setting(
        "registries",
        "mapping",
        None,
        "Credentials per host, for OCI registries and private http(s) mirrors: {HOST: {username_env, "
        "password_env} or {token_env}}, the NAMES of environment variables holding them (never the secrets). "
        "A mirror is sent Basic authentication, or its token as a bearer; a registry's go to its token "
        "service. HOST is a host name, or host:port for one port only. Public mirrors and images need none.",
    ),
    Setting("limits.discovery_bytes", "bytes", 64_000_000, "Largest tags_from discovery file read.", 1000, 2**31),
    Setting(
        "compare",
        "list of pairs",
        [],
        "Pairs of tags [OLD, NEW] whose comparison 'cachedex site' writes and 'cachedex serve' serves "
        "(tags/NEW/compare/OLD/), besides each snapshot and release with the previous of its series.",
    ),
)
_BY_KEY = {setting.key: setting for setting in SETTINGS}


def setting(key: str) -> Setting:
    """The setting of dotted ``key``."""
    return _BY_KEY[key]


def shown_bound(value: float) -> str:
    """A bound as people read it: whole numbers with thousands separators."""
    return f"{int(value):,}" if value == int(value) else f"{value:g}"


def reference_markdown() -> str:
    """``docs/config.md``: every key of :data:`SETTINGS`, its kind, default and help."""
    lines = [
        "# Configuration reference",
        "",
        "<!-- Generated from cachedex.config.SETTINGS by scripts/gen-docs; do not edit by hand. -->",
        "",
        "`cachedex.yaml` (or the file given by `--config` or `$CACHEDEX_CONFIG`); paths are",
        "relative to the file (to the current folder for a config read from a pipe), `~` starts",
        "one in your home folder, and `$NAME` or `${NAME}` in one is that environment variable's",
        "value (in paths only: write a URL itself). A key given no value keeps its default. Every problem in a config",
        "is reported at once, each naming the key and the bad value (a `registries` entry's",
        "values are not shown: one may be the secret itself). A config file is UTF-8",
        "text of at most 4 MiB; two tags may not differ only in case.",
        "",
        "| key | takes | default | meaning |",
        "| --- | --- | --- | --- |",
    ]
    for setting in SETTINGS:
        default = "" if setting.default is None else f"`{setting.default!r}`".replace("'", '"')
        meaning = setting.help
        if setting.low is not None and setting.high is not None:
            meaning += f" From {shown_bound(setting.low)} to {shown_bound(setting.high)}."
        kind, meaning = (text.replace("|", "\\|") for text in (setting.kind, meaning))
        lines.append(f"| `{setting.key}` | {kind} | {default} | {meaning} |")
    return "\n".join(lines) + "\n"
