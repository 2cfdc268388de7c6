"""Whether a mirror signs its binaries, as a sync can tell at the cost of a few reads.

Spack checks a signature on every binary it installs from a mirror unless the mirror
was added with ``spack mirror add --unsigned``; pushed with ``--unsigned`` (as most
private mirrors are), every install from a mirror added plainly stops. The commands the
pages give must know which, and a wrong ``--unsigned`` is the worse mistake: it turns
off the check that keeps a tampered binary out. ``cachedex verify`` checks every spec's
signature; a sync whose index changed reads the v3 manifests of a few listed specs,
spread over the index (one whose index did not change, of those the catalog lists, when
the catalog does not know yet): clearsigned when ``spack buildcache push`` signed them, plain JSON
when not (format doc §5.3). As verify decides, a mirror that signed any of them, or
that publishes a key index (verify asks for a key in it), signs (a plain spec there is
a problem, not the mirror's way); it is told unsigned only when every manifest read is
plain and it publishes no key index.
Spec files of older layouts are not read (their mirror stays "not known", which the
pages take as signed, Spack's default), nor OCI registries (never signed, which their
URL says).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import CachedexError, SourceNotFound
from ..values import spec_manifest_path
from .index import RawIndex
from .records import name_version_in
from .signatures import is_clearsigned
from .sizes import manifest_path_safe
from .sources import Source
from .verify_keys import KEY_INDEX_V3

__all__ = ["SAMPLED", "SAMPLES", "sampled_specs", "signs_binaries", "usable"]

#: Listed specs whose manifests are read, spread over the index (its first, middle and
#: last with a usable name).
SAMPLED = 3
#: The most records looked at from each of those places for one whose manifest path can
#: be made (a hostile index may list none with a usable name).
SAMPLES = 64


def signs_binaries(source: Source, samples: Sequence[tuple[str, str, str]], *, limit: int) -> bool | None:
    """Whether the mirror at ``source`` signs its binaries (see the module doc), from the
    manifests of ``samples`` (:func:`sampled_specs`, read at once) and its key index:
    True when a manifest is clearsigned or the mirror publishes a key index, False when
    every manifest read is plain and it publishes none, None when that cannot be told
    (no usable listed spec, nothing readable: a sync does not fail for it). ``limit``:
    the most bytes of a manifest."""
    paths = ((dag_hash, spec_manifest_path(name, version, dag_hash)) for dag_hash, name, version in samples)
    found = [result for _, result in source.read_many(paths, _clearsigned, limit=limit)]
    if True in found:
        return True
    if False not in found:
        return None
    try:
        source.read(KEY_INDEX_V3, limit=limit)
    except SourceNotFound:
        return False
    except CachedexError:
        return None  # (neither said: not known)
    return True


def _clearsigned(url: str, data: bytes | bytearray) -> bool:
    return is_clearsigned(data)


def sampled_specs(index: RawIndex) -> list[tuple[str, str, str]]:
    """(hash, name, version) of up to :data:`SAMPLED` listed specs of a v3 ``index``
    whose names can be part of a path, found from its first and middle listed spec on,
    and from its last one back."""
    listed = [dag_hash for dag_hash, record in index.records.items() if record.in_buildcache]
    name_version = name_version_in(index)
    found: dict[str, tuple[str, str, str]] = {}
    middle = len(listed) // 2
    for place in (listed[:SAMPLES], listed[middle : middle + SAMPLES], listed[: -SAMPLES - 1 : -1]):
        for dag_hash in place:
            named = name_version(dag_hash)
            if named is not None and manifest_path_safe(*named):
                found.setdefault(dag_hash, (dag_hash, *named))
                break
    return list(found.values())[:SAMPLED]


def usable(samples: Iterable[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """Those of ``samples`` (hash, name, version) whose name and version can be part of
    a path under a mirror (a catalog's specs came from mirrors: hostile)."""
    return [sample for sample in samples if manifest_path_safe(sample[1], sample[2])]
