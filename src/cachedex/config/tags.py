"""The ``tags`` and ``registries`` sections: tags, their stacks (separate mirrors or
views of one mirror), mirror URLs, and where the credentials of OCI registries and
private http(s) mirrors come from.

A stack is written in one of these ways::

    stacks: [e4s, ml]                   # each at <tag url>/<name>
    stacks:
      e4s: https://elsewhere/e4s        # a mirror of its own
      ml: {view: ml}                    # a buildcache view of the tag's root mirror
      hpc: {url: ./other, view: hpc}    # a view of another mirror
    views: all                          # every view of the tag's mirror (folders only)
    views: [ml, hpc]                    # the same as {view: NAME} for each
"""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path
from typing import TypeGuard
from urllib.parse import SplitResult, urlsplit

import msgspec

from ..values import ROOT_STACK, MirrorRef, check_label, short_repr

__all__ = [
    "LISTABLE_SCHEMES",
    "URL_SCHEMES",
    "RegistryAuth",
    "TagConfig",
    "check_url",
    "check_variables",
    "host_and_port",
    "is_path_text",
    "local_path",
    "mirror_place",
    "parse_registries",
    "parse_tag",
    "resolve_url",
]

#: Schemes a mirror URL may have (besides a plain path): OCI registries as Spack names
#: them, ``oci+http`` for a registry without TLS.
URL_SCHEMES = ("http", "https", "file", "oci", "oci+http")

#: Buckets Spack names by their store's scheme (``spack mirror add s3://...``), and the
#: HTTPS URL that serves a public one; a bucket that is not public needs the store's
#: signed requests, which cachedex does not make.
_BUCKETS = {
    "s3": "https://{bucket}.s3.amazonaws.com{path}",
    "gs": "https://storage.googleapis.com/{bucket}{path}",
}
#: An S3 bucket whose name has a dot is served path-style: ``*.s3.amazonaws.com``'s
#: certificate covers no name with more dots.
_DOTTED_S3 = "https://s3.amazonaws.com/{bucket}{path}"
#: The public build cache's bucket, and where it is served (as cache.spack.io reads it).
_PUBLIC_BUCKET = ("s3", "spack-binaries", "https://binaries.spack.io{path}")


def _bucket_hint(scheme: str, parts: SplitResult) -> str:
    """What to write instead of a bucket's ``scheme://bucket/path`` (``parts``); a
    bucket name no store has (credentials or a port in it) is told no URL."""
    bucket, path = parts.netloc, parts.path
    if (scheme, bucket) == _PUBLIC_BUCKET[:2]:
        return f"Spack's public bucket is served at {_PUBLIC_BUCKET[2].format(path=path)}: give that URL"
    pattern = _DOTTED_S3 if scheme == "s3" and "." in bucket else _BUCKETS[scheme]
    # (no user, password or port: a bucket's name is lowercase; a path said in full once)
    named = bucket == parts.hostname and len(path) <= 200
    https = f" ({pattern.format(bucket=bucket, path=path)} if it is public" if named else " (if it is public"
    other = ", or an S3-compatible store's own endpoint" if scheme == "s3" else ""
    return (
        f"a bucket ({scheme}://) is read over HTTPS: give its https:// URL{https}{other}); "
        "a private bucket's signed requests are not supported"
    )


#: Where the folder of views can be listed: local folders only (HTTP cannot list).
LISTABLE_SCHEMES = ("", "file")


class TagConfig(msgspec.Struct, frozen=True):
    """One tag: its root mirror first, then one mirror per stack. With
    ``discover_views``, the views found in the root mirror are added when it is read."""

    name: str
    mirrors: tuple[MirrorRef, ...]
    discover_views: bool = False

    @property
    def reads_root_views(self) -> bool:
        """Whether a stack reads a view of the root's own mirror: then the root may have
        no index of its own (a mirror of views only). A view of another mirror says
        nothing of the root: a root URL with a typo was read as such a mirror."""
        root = mirror_place(self.mirrors[0].url)
        return any(ref.view and mirror_place(ref.url) == root for ref in self.mirrors[1:])


def mirror_place(url: str) -> str:
    """A mirror's place, however written: a folder's path, file:///x/m or /x/m alike."""
    parts = urlsplit(url)  # (its scheme lower-cased, as the other checks read it: FILE: is file:)
    return (parts.path if parts.scheme == "file" else url).rstrip("/")


class RegistryAuth(msgspec.Struct, frozen=True):
    """Where the credentials of one host are (an OCI registry, or a private http(s)
    mirror's server): the NAMES of environment variables, never the secrets (a config
    file is shared and copied; the environment is not)."""

    host: str
    username_env: str | None = None
    password_env: str | None = None
    token_env: str | None = None


#: An environment variable in a path: ``$NAME`` or ``${NAME}``.
_VARIABLE = re.compile(r"\$(?:(\w+)|\{(\w+)\})")


def local_path(value: str, base: Path) -> Path:
    """A path the config gives: relative to its folder ``base``; ``~`` or ``~user``
    starts one in that home folder, and ``$NAME`` or ``${NAME}`` is that environment
    variable's value, as in a shell and in Spack's own config (taken as they are, they
    once made a folder named "~" or "$HOME" beside the config)."""
    return base / os.path.expanduser(os.path.expandvars(value))


def check_variables(key: str, value: str, problems: list[str]) -> bool:
    """Whether every environment variable that the path ``value`` names is set (to
    something); else the problem is added."""
    unset = [m[1] or m[2] for m in _VARIABLE.finditer(value) if not os.environ.get(m[1] or m[2])]
    if unset:
        problems.append(f"'{key}': environment variable ${unset[0]} is not set (or empty): {short_repr(value)}")
    return not unset


def resolve_url(value: str, base: Path) -> str:
    """A mirror URL with plain relative paths made absolute against the config's folder."""
    scheme = urlsplit(value).scheme
    if scheme == "file":
        return value
    if scheme in URL_SCHEMES:
        return value.rstrip("/")
    return str(local_path(value, base).resolve())


def is_path_text(value: object) -> TypeGuard[str]:
    """Whether ``value`` can name a file or URL: a non-blank string without NUL or other
    control characters (the operating system refuses a path with NUL, and a terminal
    would act on the others when a message quotes it)."""
    return isinstance(value, str) and bool(value.strip()) and value.isprintable()


def check_url(key: str, value: object, problems: list[str], *, mirror: bool = True) -> bool:
    """Whether ``value`` is a path or a URL cachedex reads (a ``mirror``'s, or a file's);
    else the problem is added."""
    if value is None:  # left out, or given no value
        problems.append(f"'{key}': missing: expected a path or URL")
        return False
    if not is_path_text(value):
        problems.append(f"'{key}': expected a path or URL, got {short_repr(value)}")
        return False
    if value != value.strip():  # ("https://h/m " made its stacks "https://h/m /e4s")
        problems.append(f"'{key}': spaces before or after the path or URL: {short_repr(value)}")
        return False
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018  # (a port out of range raises only when asked for)
    except ValueError as exc:  # an unbalanced "[" of an IPv6 host, say
        problems.append(f"'{key}': not a valid URL ({exc}): {short_repr(value)}")
        return False
    scheme = parts.scheme
    if scheme in _BUCKETS and parts.netloc:
        problems.append(f"'{key}': {_bucket_hint(scheme, parts)}, got {short_repr(value)}")
        return False
    if len(scheme) > 1 and scheme not in URL_SCHEMES:
        # (a folder whose name holds ":" reads as a URL's scheme: "snap-09:30" as snap-09:)
        folder = "" if "://" in value else f"; a folder whose name holds ':' is written {short_repr('./' + value)}"
        problems.append(
            f"'{key}': expected a path, file://, http(s)://, oci:// or oci+http:// URL, got {short_repr(value)}{folder}"
        )
        return False
    if not mirror and scheme in ("oci", "oci+http"):  # (it was read as a local path)
        problems.append(f"'{key}': expected a path, file:// or http(s):// URL, got {short_repr(value)}")
        return False
    if scheme not in URL_SCHEMES and not check_variables(key, value, problems):
        return False
    if len(scheme) <= 1 and _VARIABLE.match(value):
        # (the scheme is read before variables are expanded, so "$MIRROR_URL" holding
        # https://... was read as a local folder named "https:")
        expanded = urlsplit(os.path.expandvars(value)).scheme
        if expanded in URL_SCHEMES or expanded in _BUCKETS:  # (not any "x:": a folder "snap-09:30" is one)
            problems.append(
                f"'{key}': environment variables are expanded in paths only, and this one holds a "
                f"{expanded}:// URL; write the URL itself: {short_repr(value)}"
            )
            return False
    if scheme == "file" and (parts.netloc not in ("", "localhost") or not parts.path.startswith("/")):
        # (file://mirrors/x is the file /x on a host "mirrors", and file:mirrors/x a path
        # relative to the current folder, not to the config's: each read another folder)
        problems.append(
            f"'{key}': a file:// URL takes an absolute path (file:///srv/mirror); a path relative to "
            f"the config is written plain (./mirror): got {short_repr(value)}"
        )
        return False
    if scheme in ("http", "https", "oci", "oci+http") and not parts.hostname:
        # ("https:///develop", "https:h/m" and "http://" were taken, and failed at each sync)
        problems.append(f"'{key}': a {scheme}:// URL names its host ({scheme}://HOST/PATH): {short_repr(value)}")
        return False
    if scheme in ("http", "https", "oci", "oci+http") and " " in value:
        # (no client sends one as it is: libcurl said only "URL rejected: Bad path")
        problems.append(f"'{key}': a URL holds no spaces; write each as %20: {short_repr(value)}")
        return False
    # A mirror's URL is printed in messages, stored, and published on every page that
    # links to its files: a password in it would be too. Credentials are named under
    # 'registries' instead. (OCI URLs are checked as their source reads them.)
    if scheme in ("http", "https") and "@" in parts.netloc:
        problems.append(
            f"'{key}': credentials in a URL would be printed (and a mirror's published) with it; "
            f"name the environment variables holding them under 'registries: {{{parts.hostname}: ...}}'"
        )
        return False
    if mirror and scheme in ("http", "https", "file") and (parts.query or parts.fragment or value.endswith(("?", "#"))):
        # (a file:// one's too: each stack's URL was joined after its query, and read the root)
        problems.append(
            f"'{key}': a mirror's URL is the folder of its build cache, with no ?query or #fragment "
            f"(its files' paths are added to it): {short_repr(value)}"
        )
        return False
    return True


def _join(url: str, stack: str) -> str:
    return f"{url.rstrip('/')}/{stack}"


def parse_tag(raw: object, key: str, base: Path, problems: list[str]) -> TagConfig | None:
    """One entry of ``tags``, or None with its problems added."""
    if not isinstance(raw, dict):
        problems.append(f"'{key}': expected a mapping with name, url, stacks; got {short_repr(raw)}")
        return None
    for extra in raw.keys() - {"name", "url", "stacks", "views"}:
        problems.append(f"unknown key '{key}.{extra}' (known: name, url, stacks, views)")
    before = len(problems)
    name = raw.get("name")
    why = check_label(name)
    if why:
        problems.append(f"'{key}.name': {why}")
    url = raw.get("url")
    url_ok = check_url(f"{key}.url", url, problems)
    root_url = resolve_url(str(url), base) if url_ok else ""
    mirrors: list[MirrorRef] = []
    seen: set[str] = set()
    stacks = raw.get("stacks")  # (None: left out, or given no value)
    for stack, value in _stack_entries([] if stacks is None else stacks, key, problems):
        if isinstance(stack, str) and stack in seen:
            problems.append(f"'{key}.stacks': stack {short_repr(stack)} is listed twice")
            continue
        ref = _stack(str(name), stack, value, root_url, f"{key}.stacks", base, problems)
        seen.add(str(stack))
        if ref is not None:
            mirrors.append(ref)
    views = raw.get("views")
    discover = views == "all"
    if discover and url_ok and urlsplit(root_url).scheme in ("oci", "oci+http"):
        problems.append(f"'{key}.views': OCI registries have no views (a view is a v3 mirror's index of a subset)")
    elif discover and url_ok and urlsplit(root_url).scheme not in LISTABLE_SCHEMES:
        problems.append(
            f"'{key}.views': 'all' needs a mirror in a folder (it lists v3/manifests/index/); "
            f"over {urlsplit(root_url).scheme}://, name the views: views: [name, ...]"
        )
    elif isinstance(views, list):
        for view in views:
            if isinstance(view, str) and view in seen:
                problems.append(f"'{key}.views': stack {short_repr(view)} is listed twice")
                continue
            ref = _stack(str(name), view, {"view": view}, root_url, f"{key}.views", base, problems)
            seen.add(str(view))
            if ref is not None:
                mirrors.append(ref)
    elif views is not None and not discover:
        problems.append(f"'{key}.views': expected 'all' or a list of view names, got {short_repr(views)}")
    if len(problems) > before:
        return None
    return TagConfig(str(name), (MirrorRef(str(name), ROOT_STACK, root_url), *mirrors), discover_views=discover)


def _stack_entries(stacks: object, key: str, problems: list[str]) -> list[tuple[object, object]]:
    if isinstance(stacks, list):
        return [(stack, None) for stack in stacks]
    if isinstance(stacks, dict):
        return list(stacks.items())
    problems.append(f"'{key}.stacks': expected a list of names or a mapping name: url, got {short_repr(stacks)}")
    return []


def _stack(
    tag: str, stack: object, value: object, root_url: str, key: str, base: Path, problems: list[str]
) -> MirrorRef | None:
    """A stack's mirror: ``value`` is None (at <root>/<stack>), a URL, or {url?, view?}."""
    why = check_label(stack)
    if why:
        problems.append(f"'{key}': stack {why}")
        return None
    name = str(stack)
    if name == ROOT_STACK:
        problems.append(f"'{key}': 'root' is the tag's own mirror (its url), not a stack")
        return None
    if value is None:
        return MirrorRef(tag, name, _join(root_url, name)) if root_url else None
    if isinstance(value, str):
        return MirrorRef(tag, name, resolve_url(value, base)) if check_url(f"{key}.{name}", value, problems) else None
    if not isinstance(value, dict) or not value.keys() <= {"url", "view"} or "view" not in value:
        problems.append(f"'{key}.{name}': expected a URL or a mapping with view (and url), got {short_repr(value)}")
        return None
    view = value["view"]
    why = check_label(view)
    if why:
        problems.append(f"'{key}.{name}.view': {why}")
        return None
    url = value.get("url")
    if url is not None and not check_url(f"{key}.{name}.url", url, problems):
        return None
    mirror = resolve_url(str(url), base) if url is not None else root_url
    if urlsplit(mirror).scheme in ("oci", "oci+http"):
        problems.append(f"'{key}.{name}': OCI registries have no views")
        return None
    return MirrorRef(tag, name, mirror, view=str(view)) if mirror else None


def host_and_port(host: str) -> tuple[str, int | None]:
    """A ``registries`` key as (host name, port or None for every port): ``ghcr.io``,
    ``ghcr.io:443``, ``::1`` or ``[::1]``, ``[::1]:8080``. ValueError if it is none of those."""
    if "?" in host or "#" in host:  # (an empty query or fragment is none to urlsplit: "ghcr.io?" was taken)
        raise ValueError(host)
    if host.count(":") > 1 and not host.startswith("["):  # an IPv6 address, bare
        ipaddress.IPv6Address(host)  # ("ghcr.io:443:1" was taken for one, and matched no URL)
        return host.lower(), None
    parts = urlsplit("//" + host)
    if not parts.hostname or host.endswith(":") or parts.username is not None or parts.path or parts.port == 0:
        raise ValueError(host)  # (port 0: no URL's, so the entry would never be used)
    return parts.hostname, parts.port  # (port: ValueError when not a number in range)


def parse_registries(raw: object, problems: list[str]) -> tuple[RegistryAuth, ...]:
    """``registries: {HOST: {username_env, password_env, token_env}}``."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        problems.append(f"'registries': expected a mapping of host -> credentials, got {short_repr(raw)}")
        return ()
    found: list[RegistryAuth] = []
    fields = ("username_env", "password_env", "token_env")
    seen: dict[tuple[str, int | None], str] = {}  # (hosts are matched as URLs name them: ignoring case)
    for host, entry in raw.items():
        try:
            # (a host with a space was taken, and matched no URL: its mirror was read without them)
            well_formed = isinstance(host, str) and "/" not in host and is_path_text(host) and " " not in host
            endpoint = host_and_port(host) if well_formed else None
        except ValueError:
            endpoint = None
        if not isinstance(host, str) or endpoint is None:
            problems.append(
                f"'registries': expected a host name (such as ghcr.io or ghcr.io:443), got {short_repr(host)}"
            )
            continue
        if endpoint in seen:
            problems.append(
                f"'registries': {short_repr(seen[endpoint])} and {short_repr(host)} name one host "
                "(host names ignore case); keep one"
            )
            continue
        seen[endpoint] = host
        # (no value of an entry is quoted back: one written where its variable's name goes,
        # or under a field of its own, is likely the secret itself, and would go to a log)
        if not isinstance(entry, dict):
            problems.append(f"'registries.{host}': expected a mapping of {', '.join(fields)}")
            continue
        unknown = sorted(str(field) for field in entry.keys() - set(fields))
        if unknown:
            problems.append(f"'registries.{host}': unknown field {short_repr(unknown[0])} (known: {', '.join(fields)})")
            continue
        names = {field: entry.get(field) for field in fields}
        bad = [f for f, v in names.items() if v is not None and (not isinstance(v, str) or not v.isidentifier())]
        if bad:
            problems.append(
                f"'registries.{host}.{bad[0]}': expected the NAME of an environment variable (letters, "
                "digits and _), which holds the secret; the value given is not one (not shown: it may be the secret)"
            )
            continue
        if all(name is None for name in names.values()):  # (its mirror was read without credentials)
            problems.append(
                f"'registries.{host}': names no credentials: give token_env, or username_env and password_env"
            )
            continue
        if (names["username_env"] is None) != (names["password_env"] is None):
            problems.append(f"'registries.{host}': username_env and password_env go together")
            continue
        if names["token_env"] is not None and names["username_env"] is not None:  # (the token was used, silently)
            problems.append(f"'registries.{host}': token_env, or username_env and password_env; not both")
            continue
        found.append(RegistryAuth(host, **names))
    return tuple(found)
