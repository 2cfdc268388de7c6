"""What covers what: a tag's specs counted per stack and architecture, per package and
target family (``tags/<tag>/coverage/``, ``/api/tags/{tag}/coverage``, ``cachedex
coverage``), and a package's versions per architecture (its page's bottle table).

A *family* is where a binary runs: ``darwin`` (any macOS target), else the
microarchitecture family archspec gives the target (``x86_64`` for ``x86_64_v3``,
``zen4`` or ``haswell``; ``aarch64`` for ``neoverse_v1`` or ``a64fx``; ``ppc64le``;
``ppc64`` for ``power9``; ``x86`` for ``i686``; ``riscv64`` for ``u74mc``), with the
platform in front when it is neither linux nor darwin.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any, Protocol

import msgspec

from ..catalog import Catalog
from ..values import ROOT_STACK, stack_order
from ..versions import version_key

__all__ = [
    "AXES",
    "Arch",
    "BottleTable",
    "CoveragePage",
    "CoverageRow",
    "bottle_table",
    "coverage_page",
    "pivot",
    "target_family",
]

_X86 = re.compile(
    r"x86(_64)?(_v\d)?|i686|nocona|core2|nehalem|westmere|sandybridge|ivybridge|haswell|broadwell|skylake.*"
    r"|cascadelake|cannonlake|cooperlake|icelake|tigerlake|alderlake|sapphirerapids|emeraldrapids|mic_knl"
    r"|k10|bulldozer|piledriver|steamroller|excavator|zen\d*"
)
_ARM = re.compile(r"aarch64|arm.*|neoverse.*|a64fx|graviton\d*|thunderx\d*|cortex.*|m\d|apple.*")
_PPC = re.compile(r"ppc64le|power\d+le")


@lru_cache(maxsize=4096)
def target_family(platform: str, target: str) -> str:
    """Where a binary of ``platform`` and ``target`` runs: ``darwin``, the family
    archspec gives the target (``x86_64``, ``aarch64``, ``ppc64le``, ``ppc64``, ``x86``,
    ``riscv64`` ...), for a target archspec does not know the family its name suggests,
    or the target itself (``<platform> <family>`` off linux)."""
    import archspec.cpu

    if platform == "darwin":
        return "darwin"
    known = archspec.cpu.TARGETS.get(target)
    if known is not None:
        family = str(known.family.name)
    elif _X86.fullmatch(target):
        family = "x86_64"
    elif _ARM.fullmatch(target):
        family = "aarch64"
    elif _PPC.fullmatch(target):
        family = "ppc64le"
    else:
        family = target
    return family if platform == "linux" else f"{platform} {family}"


class Arch(msgspec.Struct, frozen=True, gc=False):
    """A column: one platform-os-target."""

    platform: str
    os: str
    target: str

    @property
    def label(self) -> str:
        """``platform-os-target``, as Spack prints an arch."""
        return f"{self.platform}-{self.os}-{self.target}"


class CoverageRow(msgspec.Struct, frozen=True):
    """A row of a matrix: a stack or a package, and its spec count per column."""

    name: str
    counts: tuple[int, ...]  #: one per column (``archs`` or ``families``)
    total: int
    #: bytes of its listed specs whose size is known (null when none is), and how many
    #: those are (how much room a stack's, or a package's, binaries take)
    size: int | None = None
    sized: int = 0


class CoveragePage(msgspec.Struct, frozen=True, tag_field="page", tag="coverage"):
    """What covers what in a tag: listed specs per stack and platform-os-target
    (``root``: the whole tag), and per package and target family."""

    tag: str
    archs: tuple[Arch, ...]  #: the columns of ``stacks``, sorted
    stacks: tuple[CoverageRow, ...]  #: ``root`` first
    families: tuple[str, ...]  #: the columns of ``packages``, the commonest first
    packages: tuple[CoverageRow, ...]  #: by name


def _family_order(counts: Counter[str]) -> list[str]:
    return sorted(counts, key=lambda f: (-counts[f], f))


def coverage_page(catalog: Catalog, tag: str) -> CoveragePage:
    """A tag's coverage matrices; UnknownTag if there is no such tag."""
    catalog.require_tag(tag)
    # The root's cells are the package rows summed: the tag's listing is read once for both.
    packages = catalog.package_coverage(tag, versions=False)
    root: Counter[Arch] = Counter()
    for found in packages:
        root[Arch(found.platform, found.os, found.target)] += found.specs
    cells = catalog.coverage_cells(tag, root=False)
    archs = sorted(
        root.keys() | {Arch(c.platform, c.os, c.target) for c in cells}, key=lambda a: (a.platform, a.os, a.target)
    )
    column = {arch: n for n, arch in enumerate(archs)}
    # Every stack of the tag is a row, one that lists nothing too (its counts all 0).
    per_stack: dict[str, list[int]] = {m.stack: [0] * len(archs) for m in catalog.mirrors(tag)}
    sizes: dict[str, tuple[int, int]] = dict.fromkeys(per_stack, (0, 0))  # stack -> (bytes known, specs sized)
    if root or ROOT_STACK in per_stack:
        per_stack[ROOT_STACK] = [root[arch] for arch in archs]
        (totals,) = catalog.tag_stats([tag])  # (the root's, kept with the tag)
        sizes[ROOT_STACK] = (totals.size, totals.sized)
    for cell in cells:  # by stack name
        row = per_stack.setdefault(cell.stack, [0] * len(archs))
        row[column[Arch(cell.platform, cell.os, cell.target)]] += cell.specs
        size, sized = sizes.get(cell.stack, (0, 0))
        sizes[cell.stack] = (size + cell.size, sized + cell.sized)
    per_package: dict[str, Counter[str]] = defaultdict(Counter)
    bytes_known: Counter[str] = Counter()  # package -> bytes of its specs whose size is known
    bytes_sized: Counter[str] = Counter()  # package -> those specs
    families: Counter[str] = Counter()
    for found in packages:
        family = target_family(found.platform, found.target)
        per_package[found.name][family] += found.specs
        families[family] += found.specs
        bytes_known[found.name] += found.size
        bytes_sized[found.name] += found.sized
    ordered = _family_order(families)
    return CoveragePage(
        tag,
        tuple(archs),
        tuple(
            CoverageRow(stack, tuple(row), sum(row), sizes[stack][0] if sizes[stack][1] else None, sizes[stack][1])
            for stack, row in sorted(per_stack.items(), key=lambda item: stack_order(item[0]))
        ),
        tuple(ordered),
        tuple(
            CoverageRow(
                name,
                tuple(counts[f] for f in ordered),
                sum(counts.values()),
                bytes_known[name] if bytes_sized[name] else None,
                bytes_sized[name],
            )
            for name, counts in sorted(per_package.items())
        ),
    )


#: What ``cachedex coverage --by`` may count by.
AXES = ("stack", "arch", "platform", "os", "target", "family", "package", "version")


def pivot(catalog: Catalog, tag: str, rows: str, columns: str) -> tuple[list[str], list[tuple[str, list[int]]]]:
    """Listed specs of ``tag`` counted by two of :data:`AXES`: (column names, [(row
    name, counts)]). ``stack`` counts each stack's specs (``root``: the whole tag);
    ``package`` and ``version`` count the whole tag's."""
    for axis in (rows, columns):
        if axis not in AXES:
            raise ValueError(f"unknown axis {axis!r} (one of {', '.join(AXES)})")
    catalog.require_tag(tag)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    if "package" in (rows, columns) or "version" in (rows, columns):
        if "stack" in (rows, columns):
            raise ValueError("stack cannot be counted with package or version")
        for p in catalog.package_coverage(tag):
            values = _values(p.platform, p.os, p.target, package=p.name, version=p.version)
            counts[values[rows]][values[columns]] += p.specs
    else:
        for c in catalog.coverage_cells(tag):
            if "stack" not in (rows, columns) and c.stack != ROOT_STACK:
                continue
            values = _values(c.platform, c.os, c.target, stack=c.stack)
            counts[values[rows]][values[columns]] += c.specs
    # Every stack of the tag, one that lists nothing too (its counts all 0).
    stacks = [m.stack for m in catalog.mirrors(tag)] if "stack" in (rows, columns) else []
    if rows == "stack":
        for stack in stacks:
            counts.setdefault(stack, Counter())
    names = sorted(
        {name for row in counts.values() for name in row} | set(stacks if columns == "stack" else ()),
        key=_axis_key(columns),
    )
    ordered = sorted(counts, key=_axis_key(rows))
    return names, [(row, [counts[row][name] for name in names]) for row in ordered]


def _values(platform: str, os: str, target: str, **more: str) -> dict[str, str]:
    return {
        "arch": f"{platform}-{os}-{target}",
        "platform": platform,
        "os": os,
        "target": target,
        "family": target_family(platform, target),
        **more,
    }


def _axis_key(axis: str) -> Callable[[str], Any]:
    if axis == "stack":
        return stack_order
    if axis == "version":
        return lambda name: _Reversed(version_key(name))
    return lambda name: name


class _Reversed:
    """Sorts newest version first."""

    __slots__ = ("key",)

    def __init__(self, key: Any) -> None:
        self.key = key

    def __lt__(self, other: _Reversed) -> bool:
        return bool(other.key < self.key)


class BottleTable(msgspec.Struct, frozen=True):
    """A package's versions (rows, newest first) per platform-os-target (columns), in
    the manner of Homebrew's bottle table: how many specs of each."""

    archs: tuple[str, ...]
    versions: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]  #: [version][arch]


class _Built(Protocol):
    @property
    def version(self) -> str: ...
    @property
    def platform(self) -> str: ...
    @property
    def os(self) -> str: ...
    @property
    def target(self) -> str: ...


def bottle_table(specs: Iterable[_Built]) -> BottleTable:
    """The table of a package page's specs."""
    found: Counter[tuple[str, str]] = Counter()
    for spec in specs:
        found[spec.version, f"{spec.platform}-{spec.os}-{spec.target}"] += 1
    archs = sorted({arch for _, arch in found})
    versions = sorted({version for version, _ in found}, key=version_key, reverse=True)
    return BottleTable(tuple(archs), tuple(versions), tuple(tuple(found[v, a] for a in archs) for v in versions))
