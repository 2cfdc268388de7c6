"""What a sync reports, per tag and per mirror: the values ``cachedex sync`` prints and
library callers inspect."""

from __future__ import annotations

import msgspec

__all__ = ["MirrorOutcome", "TagOutcome"]


class MirrorOutcome(msgspec.Struct, frozen=True):
    """What one mirror's read found."""

    stack: str
    url: str
    changed: bool
    layout: int
    db_version: int | None
    records: int | None


class TagOutcome(msgspec.Struct, frozen=True):
    """What a sync did to one tag; ``error`` is set when the tag was left unchanged."""

    tag: str
    error: str | None
    seconds: float
    mirrors: tuple[MirrorOutcome, ...] = ()
    records: int = 0
    specs: int = 0
    packages: int = 0
    stacks: int = 0
    added: int = 0
    removed: int = 0
    #: the tag's first sync (of its root mirror): ``added`` and ``removed`` compare nothing
    first: bool = False
    new_specs: int = 0
    sizes_fetched: int = 0
    sized: int = 0  #: listed specs whose size is known, after this sync
    dropped_stacks: tuple[str, ...] = ()  #: stacks removed because the config no longer lists them
    warnings: tuple[str, ...] = ()
    phases: tuple[tuple[str, float], ...] = ()  # (phase, seconds), for --debug and bench/

    @property
    def ok(self) -> bool:
        """True when the tag was written."""
        return self.error is None

    @property
    def changed(self) -> bool:
        """True when some mirror of the tag changed, or a stack was dropped."""
        return bool(self.dropped_stacks) or any(m.changed for m in self.mirrors)
