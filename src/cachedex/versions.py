"""Versions as Spack orders them: one sort key (:func:`version_key`), containment in a
range (:func:`version_satisfies`), and the order people look for tags in
(:func:`tag_order`). ``cachedex-core.js`` has the twin of the sort key; both pass
``tests/publish/cases/version_order.json``."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

import msgspec

__all__ = [
    "RELEASE_TAG",
    "SNAPSHOT_TAG",
    "VersionKey",
    "VersionRange",
    "at_most",
    "git_ref",
    "tag_kind",
    "tag_order",
    "version_key",
    "version_satisfies",
]


class VersionRange(msgspec.Struct, frozen=True):
    """``low:high`` (either may be empty: open), or an exact version when ``exact``; with
    ``ref``, a git version (``git.abc=1.2``: ref ``abc``, exactly 1.2)."""

    low: str = ""
    high: str = ""
    exact: bool = False
    #: a git version asked: the reference a spec's version must be built from, ``low``,
    #: ``high`` and ``exact`` then the constraint on the Spack version it was given
    ref: str | None = None


#: Versions that name a branch, in Spack's order (``spack.version.common``): each sorts
#: after every numbered version and after those before it here (``develop`` is newest).
_INFINITY_VERSIONS = ("stable", "nightly", "trunk", "head", "master", "main", "develop")
#: Pre-release words and their rank; a version without one is ``final``.
_PRERELEASE = {"alpha": 0, "beta": 1, "rc": 2, "final": 3}
_FINAL: tuple[int, ...] = (3,)
_SEGMENT = re.compile(r"(?:([0-9]+)|([A-Za-z]+))[_.-]*")

#: What :func:`version_key` returns: (release components, pre-release).
VersionKey = tuple[tuple[tuple[int, int | str], ...], tuple[int, ...]]


#: A branch's dated snapshot: the branch and the day (``develop-2026-11-08``).
SNAPSHOT_TAG = re.compile(r"(.+)-(\d{4}-\d{2}-\d{2})", re.ASCII)
#: A release: a version, ``v`` first or not (``v1.0.2``, ``2026.06.0``).
RELEASE_TAG = re.compile(r"v?\d+(\.\d+)+", re.ASCII)


def tag_kind(name: str) -> str:
    """``snapshot`` for a name ending in a date, ``release`` for a version (``v1.0.2``),
    else ``branch``: the one reading of a tag's name, for the home page's groups,
    :func:`tag_order` and the comparisons of a series."""
    if SNAPSHOT_TAG.fullmatch(name):
        return "snapshot"
    return "release" if RELEASE_TAG.fullmatch(name) else "branch"


def tag_order(names: Iterable[str]) -> list[str]:
    """Tag names as people look for them: branches first (``develop``), each branch's
    dated snapshots newest first right after it, then releases (``v2026.06.0``,
    ``v0.23.1``) newest first in version order, then any other name alphabetically."""

    def key(name: str) -> tuple[int, str, int, object]:
        snapshot = SNAPSHOT_TAG.fullmatch(name)
        if snapshot is not None:  # develop-2026-11-08 follows develop, newest first
            branch, day = snapshot.groups()
            return (0, branch, 1, tuple(-ord(c) for c in day))
        if RELEASE_TAG.fullmatch(name):
            return (1, "", 0, _Newest(version_key(name.lstrip("v"))))
        return (0, name, 0, ()) if name in branches else (2, name, 0, ())

    names = list(names)
    branches = {m.group(1) for m in map(SNAPSHOT_TAG.fullmatch, names) if m} | {"develop", "main", "master"}
    return sorted(names, key=key)


class _Newest:
    """Sorts in the reverse order of the key it wraps (newest release first)."""

    __slots__ = ("key",)

    def __init__(self, key: VersionKey) -> None:
        self.key = key

    def __lt__(self, other: _Newest) -> bool:
        return other.key < self.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Newest) and other.key == self.key

    __hash__ = None  # type: ignore[assignment]


@lru_cache(maxsize=65536)
def version_key(version: str) -> VersionKey:
    """The sort key of a version, in Spack's order (``StandardVersion``): the one
    definition in Python; ``cachedex-core.js`` has its twin (``versionKey``), and both pass
    ``tests/publish/cases/version_order.json``.

    A version is split into numbers and words (``.``, ``-`` and ``_`` separate them, so
    ``1.0``, ``1-0`` and ``1_0`` are equal). Numbers compare as numbers (2.9.1 < 2.11.1),
    words as text, and a word before a number (``1.0a`` < ``1.0.1``); a version is
    before those it starts (``1.0`` < ``1.0.0`` < ``1.0a``). A trailing ``alpha``,
    ``beta`` or ``rc`` (with a number or not) makes a pre-release of what precedes it
    (``1.0rc1`` < ``1.0``). Branch names (``develop``, ``main``... as Spack lists them; case-sensitive)
    come after every number. A git version ``<ref>=<version>`` sorts as ``<version>``."""
    text = version.strip()
    if "=" in text[1:]:
        text = text.rsplit("=", 1)[1]
    segments: list[tuple[str, str]] = _SEGMENT.findall(text)
    prerelease: tuple[int, ...] = _FINAL
    if len(segments) >= 3 and segments[-2][1] in _PRERELEASE and segments[-1][0]:
        prerelease = (_PRERELEASE[segments[-2][1]], int(segments[-1][0]))
        segments = segments[:-2]
    elif len(segments) >= 2 and segments[-1][1] in _PRERELEASE:
        prerelease = (_PRERELEASE[segments[-1][1]],)
        segments = segments[:-1]
    release: list[tuple[int, int | str]] = []
    for number, word in segments:
        if number:
            release.append((2, int(number)))
        elif word in _INFINITY_VERSIONS:
            release.append((3, _INFINITY_VERSIONS.index(word)))
        else:
            release.append((1, word))
    return tuple(release), prerelease


def _next_bound(high: VersionKey) -> VersionKey:
    """The version right after every version a range ending at ``high`` holds (Spack's
    ``_next_version``): ``1.2`` -> ``1.3``, ``1.3rc1`` -> ``1.3rc2``, ``1.2a`` -> ``1.2b``,
    ``1.2z`` -> ``1.2zA``, ``develop`` -> the branch name after it."""
    release, pre = high
    if pre != _FINAL:
        return release, ((pre[0], pre[1] + 1) if len(pre) > 1 else (pre[0], 0))
    if not release:
        return ((1, "A"),), _FINAL
    kind, last = release[-1]
    if kind == 1:
        word = _next_word(str(last))
        while word in _INFINITY_VERSIONS:  # (those sort as branches, after every number)
            word = _next_word(word)
        return (*release[:-1], (1, word)), _FINAL
    return (*release[:-1], (kind, int(last) + 1)), _FINAL


def _next_word(word: str) -> str:
    """The next word of letters in Spack's order (``a`` -> ``b``, ``Z`` -> ``a``,
    ``z`` -> ``zA``)."""
    if word.endswith("z"):
        return word + "A"
    return word[:-1] + ("a" if word.endswith("Z") else chr(ord(word[-1]) + 1))


def at_most(version: str, high: str) -> bool:
    """``version`` lies in a range that ends at ``high``, as Spack reads one: below the
    version after it, so ``:1.2`` holds 1.2, 1.2.5 and 1.3rc1 (a pre-release of 1.3),
    not 1.3 nor 1.3.0rc1, and ``:1.2a`` holds 1.2a.1 and 1.2aa (before 1.2b)."""
    return version_key(version) < _next_bound(version_key(high))


#: A git commit's full SHA-1, which Spack reads as a git version without ``git.``.
_COMMIT = re.compile(r"[0-9a-f]{40}")


def git_ref(version: str) -> tuple[str, str] | None:
    """(reference, the Spack version given it or "") of a git version as Spack reads one
    (``git.<ref>``, ``<ref>=<version>``, a commit's 40 hex digits), else None."""
    ref, assigned, given = version.partition("=")
    if not (assigned and ref) and not version.startswith("git.") and not _COMMIT.fullmatch(version):
        return None
    return ref.removeprefix("git."), given


def _in_range(version: str, low: str, high: str) -> bool:
    return not (low and version_key(version) < version_key(low)) and not (high and not at_most(version, high))


def version_satisfies(version: str, ranges: tuple[VersionRange, ...]) -> bool:
    """Whether a concrete ``version`` lies in any of ``ranges`` (Spack's containment)."""
    for wanted in ranges:
        if wanted.ref is not None:
            # A git version asked (``@git.abc=1.2``, ``@git.abc``): only a spec built from
            # that very reference, its version in the constraint given (any when none).
            held = git_ref(version)
            if held is None or held[0] != wanted.ref:
                continue
            given = held[1]
            if wanted.exact:
                if given and version_key(given) == version_key(wanted.low):
                    return True
            elif (not wanted.low and not wanted.high) or (given and _in_range(given, wanted.low, wanted.high)):
                return True
            continue
        if wanted.exact:
            # Separators are equal (``@=1.1`` is ``1_1``), as in Spack; a git version is
            # its reference and its version (``git.abc=1.2`` is ``abc=1_2``), and no other.
            held, asked = git_ref(version), git_ref(wanted.low)
            if held is None and asked is None:
                same = version_key(version) == version_key(wanted.low)
            elif held is not None and asked is not None:
                same = held[0] == asked[0] and version_key(held[1]) == version_key(asked[1])
            else:
                same = False
            if same:
                return True
            continue
        if _in_range(version, wanted.low, wanted.high):
            return True
    return False
