"""Small immutable values shared by every pipeline stage.

They are ``msgspec.Struct(frozen=True)`` rather than dataclasses: a sync builds
hundreds of thousands of them and Struct construction is several times cheaper.
"""

from __future__ import annotations

import functools
import re
import reprlib
from collections.abc import Sequence
from typing import Protocol

import msgspec

__all__ = [
    "DAG_HASH",
    "DEPTYPE_BITS",
    "FLAG_NAMES",
    "LINK_RUN",
    "MAX_NAME_BYTES",
    "ROOT_STACK",
    "SPEC_MEDIA_TYPE",
    "TARBALL_MEDIA_TYPE",
    "Dependency",
    "MirrorRef",
    "SpecRecord",
    "check_label",
    "check_name",
    "compilers_text",
    "counted",
    "decode_variants",
    "deptypes_from_mask",
    "deptypes_to_mask",
    "format_version",
    "human_size",
    "is_dag_hash",
    "json_visible",
    "page_visible",
    "shared_variants",
    "short_repr",
    "size_change_text",
    "size_text",
    "spec_manifest_path",
    "stack_order",
    "tarball_path_v2",
    "total_size_text",
    "variant_name",
    "visible",
]


def format_version(written: object) -> int | None:
    """The version of a file format (an index's Database version, a manifest's) as
    written, a number or text, if it is a whole number in ASCII digits; else None.
    ``int()`` also reads " 8" and the Arabic-Indic "٨", which Spack does not write."""
    text = str(written)
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else None


#: A Spack DAG hash: 32 lowercase base32 characters (``is_dag_hash`` checks one).
DAG_HASH = re.compile(r"[a-z0-9]{32}")

#: The stack name of a tag's own mirror.
ROOT_STACK = "root"


def stack_order(stack: str) -> tuple[bool, str]:
    """The key that sorts a tag's stacks as every page and answer shows them: ``root``
    first, then by name."""
    return stack != ROOT_STACK, stack


#: Dependency types as bits, so an edge stores one small integer (format doc §3.3).
DEPTYPE_BITS: dict[str, int] = {"build": 1, "link": 2, "run": 4, "test": 8}

#: Link and run: the edges that installing a binary follows (what it downloads).
LINK_RUN = DEPTYPE_BITS["link"] | DEPTYPE_BITS["run"]

#: ``parameters`` keys that are compiler flags, not variants, in the order Spack
#: writes them after the variants (format doc §3.4).
FLAG_NAMES = ("cflags", "cppflags", "cxxflags", "fflags", "ldflags", "ldlibs")

#: Media types of a v3 spec manifest's blobs (format doc §5.3).
TARBALL_MEDIA_TYPE = "application/vnd.spack.install.v2.tar+gzip"
SPEC_MEDIA_TYPE = "application/vnd.spack.spec.v5+json"

#: A spec's variants as the catalog stores them (a JSON list of display strings).
decode_variants = msgspec.json.Decoder(tuple[str, ...]).decode


@functools.lru_cache(maxsize=8192)  # pages and indexes ask for the same few hundred strings again and again
def variant_name(text: str) -> str:
    """The name of a variant as a spec shows it (``+mpi``, ``~x``, ``a=b``, ``a:=b,c``)."""
    return text[1:] if text[:1] in "+~" else text.split("=", 1)[0].rstrip(":")


class _Varied(Protocol):
    @property
    def variants(self) -> tuple[str, ...]: ...


def shared_variants(specs: Sequence[_Varied]) -> set[str]:
    """The variants (as the specs show them: ``+mpi``) every one of ``specs`` holds."""
    if not specs:
        return set()
    return set(specs[0].variants).intersection(*(spec.variants for spec in specs[1:]))  # (in C)


def is_dag_hash(text: object) -> bool:
    """True if ``text`` looks like a DAG hash (32 characters of ``[a-z0-9]``)."""
    return isinstance(text, str) and DAG_HASH.fullmatch(text) is not None


def deptypes_to_mask(deptypes: list[str] | tuple[str, ...] | str | None) -> int:
    """Encode a list of dependency types (unknown ones are ignored) as a bit mask."""
    if deptypes is None:
        return 0
    if isinstance(deptypes, str):
        deptypes = [deptypes]
    mask = 0
    for kind in deptypes:
        mask |= DEPTYPE_BITS.get(kind, 0)
    return mask


def deptypes_from_mask(mask: int) -> tuple[str, ...]:
    """Decode :func:`deptypes_to_mask` back into Spack's names, in Spack's order."""
    return tuple(kind for kind, bit in DEPTYPE_BITS.items() if mask & bit)


class Dependency(msgspec.Struct, frozen=True, gc=False):
    """One edge of the DAG, from the node that holds it to ``hash``."""

    hash: str
    name: str
    deptypes: int  # bit mask, see DEPTYPE_BITS
    virtuals: str  # comma-separated virtuals this edge provides ("" when none)


class SpecRecord(msgspec.Struct, frozen=True):
    """One index record, normalised: what cache.spack.io shows plus what we add.

    ``variants`` is the list of display strings exactly as Spack 1.x prints them
    (``+shared``, ``build_system=cmake``, ``cuda_arch:=80``), in stored order.
    ``node`` is the raw JSON of the node dict as the index holds it: a ``msgspec.Raw``
    view into the index bytes (no copy), or ``bytes``.
    """

    hash: str
    name: str
    version: str
    platform: str
    os: str
    target: str
    compiler: str
    variants: tuple[str, ...]
    dependencies: tuple[Dependency, ...]
    in_buildcache: bool
    external: bool
    node: msgspec.Raw | bytes


class MirrorRef(msgspec.Struct, frozen=True):
    """A mirror as configured: which tag and stack it belongs to and where it is."""

    tag: str
    stack: str  # "root" for the tag's own mirror
    url: str
    view: str | None = None  #: a buildcache view of the mirror at ``url``, read as this stack


def size_text(size: int | None) -> str:
    """A size for people; "unknown" when no mirror told it (never "0 B")."""
    return "unknown" if size is None else human_size(size)


def total_size_text(size: int | None, sized: int, count: int) -> str:
    """A total of ``count`` sizes of which ``sized`` are known: "1.2 GB", "unknown",
    or "1.2 GB (3 of 5 known)"."""
    if not sized or size is None:
        return "unknown"
    return human_size(size) + ("" if sized >= count else f" ({sized:,} of {count:,} known)")


def size_change_text(change: int, sized: int, count: int) -> str:
    """The bytes ``count`` specs added and removed change, ``sized`` of whose sizes are
    known: "+1.2 GB", "size unknown", or "−1.2 GB (3 of 5 sizes known)"."""
    if not sized:
        return "size unknown"
    text = ("+" if change > 0 else "\u2212" if change < 0 else "\u00b1") + human_size(abs(change))
    return text if sized >= count else f"{text} ({sized:,} of {count:,} sizes known)"


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1 ("1 spec", "1,200 specs")."""
    return f"{n:,} {noun}{'s' * (n != 1)}"


def human_size(size: int | None) -> str:
    """Bytes for people, in powers of 1000 as Spack and browsers show them; "-" if unknown."""
    if size is None:
        return "-"
    if size < 1000:
        return f"{size} B"
    value = size / 1000
    for unit in ("kB", "MB", "GB"):
        shown = f"{value:.1f}"
        if value < 1000 and shown != "1000.0":  # (999,960 bytes rounded is 1.0 MB, not "1000.0 kB")
            return f"{shown} {unit}"
        value /= 1000
    return f"{value:.1f} TB"


# What a terminal or a page must show as escapes is what Python does not call printable
# (str.isprintable, in C): controls (C0, DEL, C1), format characters that reorder or hide
# text (U+202E right-to-left override, zero-width joiners, the tag block's invisible
# letters), line and paragraph separators, spaces other than " ", lone surrogates (no
# encoder writes them), private and unassigned code points. A list of them written out
# here missed ~130 format characters, U+2028 and every surrogate.


def visible(text: str) -> str:
    """``text`` with each control, invisible or text-reordering character written as
    its escape (``\\x1b``, ``\\n``, ``\\u202e``): a value from a mirror printed on a
    terminal must not move its cursor, retitle its window, start a line of its own or
    show its characters in another order."""
    return text if text.isprintable() else "".join(map(_shown, text))


def page_visible(text: str) -> str:
    """``text`` with each invisible or text-reordering character beyond ASCII written as
    its escape (``\\u202e``): a right-to-left override in a variant's value would show
    the rest of its line backwards on a web page, and a zero-width space hide itself.
    A page lays out ASCII's line breaks and tabs (and shows no other control): those
    stay. Printable or ASCII text (nearly every value) is returned at once."""
    if text.isascii() or text.isprintable():
        return text
    return "".join(char if char < "\x80" else _shown(char) for char in text)


def json_visible(text: str) -> str:
    """JSON ``text`` with the characters :func:`page_visible` escapes written as JSON
    escapes (``\\u202e``; beyond U+FFFF, the pair of surrogates JSON spells it with):
    parsed, the same values, exact; in a page's source (a data attribute its script
    reads back), none of them raw."""
    if text.isascii() or text.isprintable():
        return text
    return "".join(char if char < "\x80" or char.isprintable() else _json_escape(char) for char in text)


def _shown(char: str) -> str:
    if char.isprintable() or char == " ":
        return char
    return char.encode("unicode_escape").decode("ascii")


def _json_escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


#: Longest name in bytes (UTF-8): a file name's limit on every common file system.
MAX_NAME_BYTES = 255

#: What a tag or stack name may hold: it appears in folder names, URLs and the
#: ``spack mirror add`` commands users paste into a shell.
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+@=-]*")


def compilers_text(compiler: str, others: Sequence[str]) -> str:
    """A spec's compiler and the others that built it (its Fortran's gcc beside its C's
    apple-clang), as pages and the command line write them: ``apple-clang@16.0.0
    +gcc@14.2.0``."""
    return " ".join((compiler, *(f"+{other}" for other in others)))


def short_repr(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to about ``limit`` characters: messages quote values from
    outside, which may be huge (a YAML alias bomb expands to millions of strings)."""
    shown = reprlib.Repr()
    shown.maxstring = shown.maxother = limit
    shown.maxlist = shown.maxdict = 4
    shown.maxlevel = 2
    try:
        text = shown.repr(value)
    except ValueError:  # an int of more digits than Python writes out (4,300)
        text = f"<a number of about {int(value.bit_length() * 0.30103) if isinstance(value, int) else '?'} digits>"
    return text if len(text) <= limit + 10 else text[:limit] + "..."


def check_name(name: object) -> str | None:
    """Why ``name`` cannot be a tag, stack or package name used as a folder; None if fine."""
    if name is None:  # a key left out, or given no value
        return "missing: expected a string"
    if not isinstance(name, str):
        return f"expected a string, got {type(name).__name__} {short_repr(name)}"
    if not name:
        return "must not be empty"
    # (the name quoted only in a message: a config of thousands of tags checks each)
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        why = f"is longer than {MAX_NAME_BYTES} bytes (it becomes a file name)"
    elif "/" in name or "\\" in name:
        why = "must not contain '/' or '\\' (it becomes a folder name)"
    elif ".." in name:
        why = "must not contain '..' (it becomes a folder name)"
    elif name.startswith("."):
        why = "must not start with '.' (it becomes a folder name)"
    elif not name.isprintable():  # (lone surrogates too: no file system can store them)
        why = "must not contain control, invisible or unassigned characters"
    else:
        return None
    return f"{short_repr(name)} {why}"


def check_label(name: object) -> str | None:
    """Why ``name`` cannot be a tag or stack name; None if fine. Stricter than
    :func:`check_name`: letters, digits and ``._+@=-`` only, so that no shell, URL or
    file name can read it as anything but one word."""
    why = check_name(name)
    if why is None and isinstance(name, str) and not _LABEL.fullmatch(name):
        why = f"{short_repr(name)} may hold only letters, digits and . _ + @ = - (starting with a letter or digit)"
    return why


# Where a spec's files are in a mirror, for the ingest that reads them and the pages
# that link to them.


def spec_manifest_path(name: str, version: str, dag_hash: str) -> str:
    """Path of a spec's v3 manifest (format doc §5.3); ``/`` in a version becomes ``_``."""
    stem = f"{name}-{version}-{dag_hash}".replace("/", "_")
    return f"v3/manifests/spec/{name}/{stem}.spec.manifest.json"


def tarball_path_v2(*, hash: str, name: str, version: str, compiler: str, platform: str, os: str, target: str) -> str:
    """Path of a spec's ``.spack`` tarball in a v2 mirror (format doc §5.2); a ``/`` in
    a field (a git branch's version: ``git.feature/x=1.0``) becomes ``_``, as Spack's
    ``format_path`` writes it."""
    version, compiler, platform, os, target = (
        field.replace("/", "_") for field in (version, compiler, platform, os, target)
    )
    cname, _, cversion = compiler.partition("@")
    compiler_part = f"{cname}-{cversion}" if cversion else "none-none"
    arch = f"{platform}-{os}-{target}"
    stem = f"{arch}-{compiler_part}-{name}-{version}"
    return f"build_cache/{arch}/{compiler_part}/{name}-{version}/{stem}-{hash}.spack"
