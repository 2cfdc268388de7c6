"""The configuration file: which tags to read, where their mirrors are, where the catalog is.

Every key is declared once in :data:`SETTINGS` (key, kind, default, range, help, in
:mod:`.settings`); the same table gives the defaults, bounds numbers, and makes the
reference ``docs/config.md`` (:func:`reference_markdown`). :func:`load_config`
collects every problem and raises one :class:`ConfigError` listing them all, each naming
the key and the bad value.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec
import yaml

from ..errors import ConfigError
from ..values import check_label, short_repr
from .settings import SETTINGS, Setting, reference_markdown, setting, shown_bound
from .tags import (
    RegistryAuth,
    TagConfig,
    check_url,
    check_variables,
    is_path_text,
    local_path,
    parse_registries,
    parse_tag,
    resolve_url,
)

__all__ = [
    "DEFAULT_CONFIG_NAME",
    "SETTINGS",
    "Config",
    "HttpOptions",
    "Limits",
    "RegistryAuth",
    "Setting",
    "TagConfig",
    "check_unique",
    "find_config",
    "load_config",
    "load_yaml",
    "parse_config",
    "reference_markdown",
]

DEFAULT_CONFIG_NAME = "cachedex.yaml"


def _default(key: str) -> Any:
    return setting(key).default


class HttpOptions(msgspec.Struct, frozen=True):
    """How HTTP mirrors are read; set under ``http:`` in the config file (see :data:`SETTINGS`)."""

    timeout: float = _default("http.timeout")
    deadline: float = _default("http.deadline")
    retries: int = _default("http.retries")
    backoff: float = _default("http.backoff")
    concurrency: int = _default("http.concurrency")
    ca_bundle: str | None = _default("http.ca_bundle")


class Limits(msgspec.Struct, frozen=True):
    """The most bytes cachedex reads of each kind of file, from any mirror, local or remote;
    set under ``limits:`` (see :data:`SETTINGS`)."""

    index_bytes: int = _default("limits.index_bytes")
    manifest_bytes: int = _default("limits.manifest_bytes")
    spec_file_bytes: int = _default("limits.spec_file_bytes")
    discovery_bytes: int = _default("limits.discovery_bytes")


_KNOWN_KEYS = sorted({each.key.split(".")[0].split("[")[0] for each in SETTINGS})
#: The number-valued keys of each section, and whether each takes whole numbers only.
_NUMBER_FIELDS: dict[str, dict[str, type[int] | type[float]]] = {
    "http": {
        name: int if isinstance(_default(f"http.{name}"), int) else float
        for name in HttpOptions.__struct_fields__
        if name != "ca_bundle"
    },
    "limits": {name: int for name in Limits.__struct_fields__},
}


class Config(msgspec.Struct, frozen=True):
    """A validated configuration.

    ``tags_from`` (a path made absolute, or a URL) is read by ``ingest.discovery`` when
    a command needs the tags it adds: reading the config itself never touches the network."""

    path: Path | None
    catalog: Path
    tags: tuple[TagConfig, ...]
    http: HttpOptions = HttpOptions()
    limits: Limits = Limits()
    tags_from: str | None = None
    registries: tuple[RegistryAuth, ...] = ()
    compare: tuple[tuple[str, str], ...] = ()  #: (old, new) tag pairs the site compares

    def registry(self, host: str) -> RegistryAuth | None:
        """Where the credentials for ``host`` (an OCI registry's, a mirror's) are, if configured."""
        return next((r for r in self.registries if r.host == host), None)

    def tag(self, name: str) -> TagConfig:
        """The tag called ``name``; ConfigError if it is not configured."""
        for tag in self.tags:
            if tag.name == name:
                return tag
        known = ", ".join(t.name for t in self.tags) or "none"
        raise ConfigError([f"unknown tag {short_repr(name)} (configured: {known})"], path=_shown(self.path))


def find_config(explicit: str | None) -> Path:
    """The config file to use: ``--config``, else $CACHEDEX_CONFIG, else ./cachedex.yaml."""
    if explicit:
        return Path(explicit)
    from_env = os.environ.get("CACHEDEX_CONFIG")
    if from_env:
        return Path(from_env)
    return Path(DEFAULT_CONFIG_NAME)


def _shown(path: Path | None) -> str | None:
    return str(path) if path is not None else None


class _NoAliasLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing aliases: a config or a spec file needs none, and
    nine nested aliases of nine (a 537-byte "billion laughs") expand to 387 million
    strings."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed", mark)
        return super().compose_node(parent, index)


class _UniqueKeys:
    """A loader's mixin refusing a key given twice in one mapping: PyYAML keeps the last
    silently, so a second ``tags:`` or ``http:`` would drop the first without a word."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, tuple[Any, int]] = {}  # a key -> (that key as first written, its line)
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)  # type: ignore[attr-defined]
                try:
                    first = seen.get(key)
                except TypeError:  # an unhashable key: the constructor says so
                    continue
                if first is not None:
                    first_written, line = first
                    written = _written(key_node)
                    if written == first_written:
                        problem = f"key {short_repr(key)} is given twice (first at line {line})"
                    else:  # YAML's 1 and true, or 1 and 1.0: two keys as written, one value
                        problem = f"key {written} is the same key as {first_written} at line {line}"
                    raise yaml.constructor.ConstructorError(None, None, problem, key_node.start_mark)
                seen[key] = (_written(key_node), key_node.start_mark.line + 1)
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]


class _UniqueKeysLoader(_UniqueKeys, _NoAliasLoader):
    """:class:`_NoAliasLoader` refusing a key given twice in one mapping."""


if hasattr(yaml, "CSafeLoader"):  # PyYAML built with libyaml (its wheels are)

    class _FastNoAliasLoader(yaml.CSafeLoader):
        """:class:`_NoAliasLoader`'s reading by libyaml (a 1.4 MB config loads in 0.29 x
        the time). Its composer, in C, cannot refuse an alias where it stands: it reads
        only text without ``*`` (:data:`_NOT_FAST`)."""

    class _FastUniqueKeysLoader(_UniqueKeys, _FastNoAliasLoader):
        """:class:`_UniqueKeysLoader`'s reading by libyaml."""

    _FAST: dict[bool, type[Any]] = {False: _FastNoAliasLoader, True: _FastUniqueKeysLoader}
else:  # pragma: no cover - (no libyaml: the pure-Python reading alone)
    _FAST = {}


#: What libyaml's reading is not trusted with: an alias (``*``), which its composer cannot
#: refuse where it stands, and what it reads otherwise than PyYAML's own reader (tabs as
#: spacing, a byte order mark past the start, an empty ``!`` tag, a block scalar's
#: header followed by ``#``): a text holding one of these characters is read by PyYAML.
_NOT_FAST = re.compile("[*!|>\t\ufeff]")


def _written(node: Any) -> str:
    """A mapping key as the file writes it (``true``, ``1.0``), to name it in a message."""
    text = node.value if isinstance(node, yaml.ScalarNode) else node.tag
    return short_repr(text)


def _marked(exc: yaml.MarkedYAMLError) -> str:
    """A YAML error as ``line L, column C: problem``: PyYAML's own text names the input
    "<unicode string>" and shows it over three lines, with a caret under the column."""
    mark = exc.problem_mark or exc.context_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    text = f"{where}{exc.problem or exc.context}"
    if exc.problem and exc.context:
        start = exc.context_mark
        text += f" ({exc.context}" + (f" from line {start.line + 1}, column {start.column + 1})" if start else ")")
    return text


def load_yaml(text: str, *, unique_keys: bool = False) -> Any:
    """Parse one YAML document from outside. Raises ValueError, in one line, for invalid
    YAML, aliases, a key given twice in one mapping (with ``unique_keys``), or nesting
    too deep for Python's stack."""
    try:
        fast = _FAST.get(unique_keys)
        if fast is not None and not _NOT_FAST.search(text):
            try:
                return yaml.load(text, Loader=fast)  # noqa: S506 - a CSafeLoader subclass
            except (yaml.YAMLError, UnicodeError):
                pass  # PyYAML's own reading says what is wrong, and where, as it always has
        loader = _UniqueKeysLoader if unique_keys else _NoAliasLoader
        return yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        raise ValueError(f"not valid YAML: {_marked(exc)}".replace("\n", " ")) from exc
    except yaml.YAMLError as exc:
        raise ValueError(f"not valid YAML: {exc}".replace("\n", " ")) from exc
    except RecursionError as exc:
        raise ValueError("not valid YAML: nested too deeply") from exc


#: A config file is a few kilobytes; past this it is not one.
CONFIG_BYTES = 4 * 1024 * 1024


def load_config(path: Path) -> Config:
    """Read and validate the config at ``path``. Raises ConfigError listing every problem."""
    try:
        with path.open("rb") as file:
            data = file.read(CONFIG_BYTES + 1)  # bounded: `--config /dev/zero` ends
            regular = stat.S_ISREG(os.fstat(file.fileno()).st_mode)
    except FileNotFoundError as exc:
        raise ConfigError(
            [
                f"no config file here; create {DEFAULT_CONFIG_NAME} (see the README), pass "
                "--config FILE, set CACHEDEX_CONFIG, or try 'cachedex demo'"
            ],
            path=str(path),
        ) from exc
    except OSError as exc:
        raise ConfigError([f"cannot read: {exc.strerror or exc}"], path=str(path)) from exc
    if len(data) > CONFIG_BYTES:
        raise ConfigError([f"larger than {CONFIG_BYTES:,} bytes; is this the config file?"], path=str(path))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError([f"not UTF-8 text (byte {exc.start}); a config file is YAML"], path=str(path)) from exc
    try:
        document = load_yaml(text, unique_keys=True)
    except ValueError as exc:
        raise ConfigError([str(exc)], path=str(path)) from exc
    # Relative paths are the config's folder's; a config read from a pipe (`-c <(...)`,
    # /dev/stdin) has none but /proc's, so the current folder's, as a shell's would be.
    base = path.resolve().parent if regular else Path.cwd()
    try:  # (bytes that are not UTF-8 are held as lone surrogates, which no encoder writes)
        str(base).encode("utf-8")
    except UnicodeEncodeError:
        # Mirror paths and the catalog's are kept in the catalog as text, which they are not.
        raise ConfigError(
            [
                "its folder's path is not UTF-8 text (the locale is not UTF-8, and Python's UTF-8 "
                "mode is off): run with PYTHONUTF8=1, or keep the config where the path is plain text"
            ],
            path=str(path),
        ) from None
    return parse_config(document, base=base, path=path)


def parse_config(document: Any, *, base: Path, path: Path | None = None) -> Config:
    """Validate an already-parsed config document; relative paths resolve against ``base``."""
    problems: list[str] = []
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise ConfigError([f"expected a mapping of settings, got {type(document).__name__}"], path=_shown(path))
    for key in document:
        if key not in _KNOWN_KEYS:
            problems.append(f"unknown key {short_repr(key)} (known: {', '.join(_KNOWN_KEYS)})")

    catalog_value = _given(document, "catalog", _default("catalog"))
    if not is_path_text(catalog_value) or _names_a_folder(catalog_value, base):  # ("data/" made a file "data")
        folder = ""
        if is_path_text(catalog_value):
            inside = os.path.join(os.path.expandvars(catalog_value), str(_default("catalog")))
            folder = f" (a folder's: name the file in it, {short_repr(os.path.normpath(inside))})"
        problems.append(f"'catalog': expected a file path, got {short_repr(catalog_value)}{folder}")
        catalog_value = _default("catalog")
    elif not check_variables("catalog", catalog_value, problems):
        catalog_value = _default("catalog")

    http = HttpOptions(**_parse_numbers("http", _given(document, "http", {}), problems, base))
    limits = Limits(**_parse_numbers("limits", _given(document, "limits", {}), problems, base))
    tags: list[TagConfig] = []
    raw_tags = _given(document, "tags", [])
    if not isinstance(raw_tags, list):
        problems.append(f"'tags': expected a list, got {type(raw_tags).__name__}")
        raw_tags = []
    names: list[str] = []  # (a tag refused for its URL still takes its name: a clash is said at once)
    for position, raw in enumerate(raw_tags):
        tag = parse_tag(raw, f"tags[{position}]", base, problems)
        if tag is not None:
            tags.append(tag)
            names.append(tag.name)
        elif isinstance(raw, dict) and isinstance(raw.get("name"), str):
            names.append(raw["name"])
    source = document.get("tags_from")
    tags_from: str | None = None
    if source is not None and check_url("tags_from", source, problems, mirror=False):
        tags_from = resolve_url(str(source), base)
    registries = parse_registries(document.get("registries"), problems)
    compare = _parse_pairs(_given(document, "compare", []), problems)
    check_unique(names, problems)
    if not tags and tags_from is None and not problems:
        problems.append("no tags configured: add a 'tags' list or 'tags_from'")
    if problems:
        raise ConfigError(problems, path=_shown(path))
    # Normalised, not resolved: SQLite refuses a path whose '..' climb above '/' (MSG-8).
    catalog = Path(os.path.abspath(local_path(catalog_value, base)))
    return Config(
        path=path,
        catalog=catalog,
        tags=tuple(tags),
        http=http,
        limits=limits,
        tags_from=tags_from,
        registries=registries,
        compare=compare,
    )


def _names_a_folder(value: str, base: Path) -> bool:
    """Whether the catalog's path names a folder: written as one ("data/", "data/.",
    a variable holding one), or one that is there."""
    expanded = os.path.expanduser(os.path.expandvars(value))
    return expanded.endswith(("/", "/.")) or expanded in (".", "..") or (base / expanded).is_dir()


def _given(mapping: dict[Any, Any], key: str, default: Any) -> Any:
    """``mapping[key]``, or ``default`` when it is left out or given no value (a section
    whose every line is commented out: ``http:`` alone)."""
    value = mapping.get(key)
    return default if value is None else value


def _parse_pairs(raw: Any, problems: list[str]) -> tuple[tuple[str, str], ...]:
    """``compare:``: a list of [OLD, NEW] pairs of distinct tag names."""
    if not isinstance(raw, list):
        problems.append(f"'compare': expected a list of [OLD, NEW] pairs, got {type(raw).__name__}")
        return ()
    pairs: list[tuple[str, str]] = []
    for position, pair in enumerate(raw):
        where = f"'compare[{position}]'"
        if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(name, str) for name in pair):
            problems.append(f"{where}: expected [OLD, NEW], two tag names, got {short_repr(pair)}")
            continue
        why = check_label(pair[0]) or check_label(pair[1])  # (as tags are named: no other could be one)
        if why is not None:
            problems.append(f"{where}: {why}")
        elif pair[0] == pair[1]:
            problems.append(f"{where}: a tag compared with itself ({short_repr(pair[0])})")
        elif (pair[0], pair[1]) in pairs:
            first = raw.index(pair)
            problems.append(f"{where}: the pair {short_repr(pair)} is listed twice (first at 'compare[{first}]')")
        else:
            pairs.append((pair[0], pair[1]))
    return tuple(pairs)


def check_unique(names: Iterable[str], problems: list[str]) -> None:
    """Add a problem for each tag name given twice, or twice but for case: a tag's name
    is a folder of the site and of the Jekyll tree, and on a file system that ignores
    case (macOS's, Windows's, many a CDN's) one tag's pages would overwrite the other's."""
    seen: dict[str, str] = {}
    for name in names:
        other = seen.get(name.casefold())
        if other == name:
            problems.append(f"tag {short_repr(name)} is configured twice")
        elif other is not None:
            problems.append(
                f"tags {short_repr(other)} and {short_repr(name)} differ only in case: their folders "
                "would be one on a file system that ignores case"
            )
        seen.setdefault(name.casefold(), name)


def _parse_numbers(section: str, raw: object, problems: list[str], base: Path) -> dict[str, Any]:
    """The values of a section of numbers (``http``, ``limits``), each checked against
    its setting's range; ``http.ca_bundle`` is a path."""
    if not isinstance(raw, dict):
        problems.append(f"'{section}': expected a mapping, got {short_repr(raw)}")
        return {}
    fields = _NUMBER_FIELDS[section]
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if section == "http" and key == "ca_bundle":
            if value is None:  # (given no value: none, as left out)
                continue
            if not is_path_text(value):
                problems.append(f"'http.ca_bundle': expected a file path, got {short_repr(value)}")
            # (that it is a file is checked when HTTP is used: a site's host may lack it)
            elif check_variables("http.ca_bundle", value, problems):
                values[key] = str(local_path(value, base).resolve())
            continue
        expected = fields.get(key)
        if expected is None:
            known = sorted(name for name in (*fields, "ca_bundle") if section == "http" or name != "ca_bundle")
            problems.append(f"unknown key {short_repr(f'{section}.{key}')} (known: {', '.join(known)})")
            continue
        if value is None:  # given no value (its line's value commented out): the default, as a section's
            continue
        number = _number(f"{section}.{key}", value, whole=expected is int, problems=problems)
        if number is not None:
            values[key] = expected(number)
    return values


def _text_number_hint(key: str, value: object, whole: bool) -> str:
    """Why a number YAML read as text is text (YAML 1.1 reads 1e3, no dot, as a string),
    when the number would do: a hint to write one the setting refuses helps no one."""
    if not isinstance(value, str):
        return ""
    try:
        number = float(value.replace("_", ""))
    except ValueError:
        return ""
    low, high = setting(key).low, setting(key).high
    if not math.isfinite(number) or (whole and not number.is_integer()):
        return ""
    if (low is not None and number < low) or (high is not None and number > high):
        return ""
    return f" (YAML reads it as text: write {int(number) if number.is_integer() else number})"


def _number(key: str, value: object, *, whole: bool, problems: list[str]) -> float | None:
    """``value`` if it is a finite number in the setting's range (whole if ``whole``),
    else None with the problem added."""
    low, high = setting(key).low, setting(key).high
    span = f"between {shown_bound(low)} and {shown_bound(high)}" if low is not None and high is not None else "a number"
    wanted = f"a whole number {span}" if whole else f"a number {span}"
    # (an int is finite, and math.isfinite would overflow on one of 400 digits)
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (isinstance(value, float) and not math.isfinite(value))
    ):
        problems.append(f"'{key}': expected {wanted}, got {short_repr(value)}{_text_number_hint(key, value, whole)}")
        return None
    if (whole and value != int(value)) or (low is not None and value < low) or (high is not None and value > high):
        problems.append(f"'{key}': expected {wanted}, got {short_repr(value)}")
        return None
    return float(value)
