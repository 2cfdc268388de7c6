"""Whether a mirror signs its binaries, as a sync can tell at the cost of one read.

Spack checks a signature on every binary it installs from a mirror unless the mirror
was added with ``spack mirror add --unsigned``; pushed with ``--unsigned`` (as most
private mirrors are), every install from a mirror added plainly stops. The commands the
pages give must know which. ``cachedex verify`` checks every spec's signature; a sync
reads one listed spec's v3 manifest of a mirror whose signing it does not know yet (its
first sync, or the first after it moved, or until one could be read): clearsigned when
``spack buildcache push`` signed it, plain JSON when not (format doc §5.3). One spec
stands for its mirror: Spack signs all of a push or none. Spec files of older layouts
are not read (their mirror stays "not known", which the pages take as signed, Spack's
default), nor OCI registries (never signed, which their URL says).
"""

from __future__ import annotations

from ..errors import CachedexError
from ..values import spec_manifest_path
from .index import RawIndex
from .records import name_version_in
from .signatures import is_clearsigned
from .sizes import is_path_safe
from .sources import Source

__all__ = ["SAMPLES", "signs_binaries"]

#: The most records looked at for a listed one whose manifest path can be made (a
#: hostile index may list none, or none with a usable name): one file is read at most.
SAMPLES = 64


def signs_binaries(source: Source, index: RawIndex, layout: int | None, *, limit: int) -> bool | None:
    """Whether the first listed spec of ``index`` with a usable name has a clearsigned
    manifest at ``source``; None when that cannot be told (another layout, no such
    spec, or its manifest unreadable: a sync does not fail for it). ``limit``: the
    most bytes of a manifest."""
    if layout != 3:
        return None
    name_version = name_version_in(index)
    for tried, (dag_hash, record) in enumerate(index.records.items()):
        if tried >= SAMPLES:
            return None
        found = name_version(dag_hash) if record.in_buildcache else None
        if found is None or not is_path_safe(found[0]) or not is_path_safe(found[1].replace("/", "_")):
            continue
        try:
            data = source.read(spec_manifest_path(*found, dag_hash), limit=limit)
        except CachedexError:
            return None
        return is_clearsigned(data)
    return None
