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
Views of one mirror (and tags reading it) share its manifests and key index: one sync
reads each of those files once, for all of them (:class:`SigningReads`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future

from ..errors import CachedexError, IndexFormatError, SourceNotFound, TooBig
from ..values import spec_manifest_path
from .index import RawIndex
from .records import name_version_in
from .signatures import is_clearsigned
from .sizes import manifest_path_safe
from .sources import Source
from .verify_keys import KEY_INDEX_V3

__all__ = ["SAMPLED", "SAMPLES", "SigningReads", "sampled_specs", "usable"]

#: Listed specs whose manifests are read, spread over the index (its first, middle and
#: last with a usable name).
SAMPLED = 3
#: The most records looked at from each of those places for one whose manifest path can
#: be made (a hostile index may list none with a usable name).
SAMPLES = 64


class SigningReads:
    """What one sync read to tell its mirrors' signing, each file once: views of one
    mirror (and tags reading it) share its spec manifests and its key index, which each
    view read again. Each view is still told from its own samples, as before: Spack adds
    each view as a mirror of its own, and a view of plain specs beside signed ones is
    one to add with ``--unsigned``. Only the reads are shared.
    Stacks are read in threads: a file another thread is reading is waited for."""

    def __init__(self, *, limit: int) -> None:
        self._limit = limit  #: the most bytes of a manifest
        self._lock = threading.Lock()  # (guards the dict; never held over a read)
        self._reads: dict[str, Future[bool | CachedexError]] = {}  # by the file's URL

    def signs_binaries(self, source: Source, samples: Sequence[tuple[str, str, str]]) -> tuple[bool | None, bool]:
        """Whether the mirror at ``source`` signs its binaries (see the module doc), from
        the manifests of ``samples`` (:func:`sampled_specs`) and its key index: True when
        a manifest is clearsigned or the mirror publishes a key index, False when every
        manifest read is plain and it publishes none, None when that cannot be told (no
        usable listed spec, nothing readable: a sync does not fail for it); and whether
        a passing failure (:func:`_passing`) kept it from telling, so that the next sync
        asks again."""
        paths = [spec_manifest_path(name, version, dag_hash) for dag_hash, name, version in samples]
        found = self._read(source, paths, _clearsigned)
        if True in found:
            return True, False
        if False not in found:
            return None, any(map(_passing, found))
        (keys,) = self._read(source, [KEY_INDEX_V3], _published)
        if isinstance(keys, SourceNotFound):
            return False, False
        if isinstance(keys, CachedexError):
            return None, _passing(keys)  # (neither said: not known)
        return True, False

    def _read(
        self, source: Source, paths: Sequence[str], decode: Callable[[str, bytes | bytearray], bool]
    ) -> list[bool | CachedexError]:
        """``decode`` of each of ``paths`` of ``source``, or the error that ended its read:
        the files no read of this sync asked for yet read at once, the others as found."""
        futures: list[Future[bool | CachedexError]] = []
        mine: dict[str, Future[bool | CachedexError]] = {}
        with self._lock:
            for path in paths:
                url = source.join(path)
                future = self._reads.get(url)
                if future is None:
                    future = self._reads[url] = mine[path] = Future()
                futures.append(future)
        try:
            if mine:
                for path, result in source.read_many(((path, path) for path in mine), decode, limit=self._limit):
                    mine[path].set_result(result)
        finally:  # (a read that raised: the threads waiting for its files are not left waiting)
            for path, future in mine.items():
                if not future.done():
                    future.set_result(CachedexError(f"{source.join(path)}: not read"))
        return [future.result() for future in futures]


def _passing(found: bool | CachedexError) -> bool:
    """Whether a read's failure may pass (a server error, a timeout, a 403 that is not
    "missing"): not a file missing, too big or not a manifest, which the same index
    would answer again."""
    return isinstance(found, CachedexError) and not isinstance(found, (SourceNotFound, TooBig, IndexFormatError))


def _clearsigned(url: str, data: bytes | bytearray) -> bool:
    return is_clearsigned(data)


def _published(url: str, data: bytes | bytearray) -> bool:
    return True  # (its being there is what counts)


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
