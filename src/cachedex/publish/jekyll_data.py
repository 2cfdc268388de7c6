"""The ``_data`` files of a Jekyll tree (``tags.yaml``, ``meta.yaml``), what each tag adds
to them (:class:`TagSummary`), and the record of the state a tag's pages were written
from (:class:`Record`, in ``_cache/<tag>/.cachedex-jekyll``): see :mod:`.jekyll`."""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import stat
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import yaml

from .. import __version__
from ..catalog import Catalog
from ..errors import JekyllError
from .jekyll_pages import JekyllDumper

__all__ = [
    "ALL_KEY",
    "RECORD",
    "Record",
    "TagSummary",
    "meta_yaml",
    "read_record",
    "read_yaml",
    "tag_state",
    "tags_yaml",
]

#: The key of meta.yaml that sums every tag; a tag of that name would overwrite it.
ALL_KEY = "all"
#: Beside a tag's package folders: the state its pages were written from (see :mod:`.jekyll`).
RECORD = ".cachedex-jekyll"


@dataclass
class TagSummary:
    """A tag's entry of meta.yaml."""

    version: str  # Database version of the root index
    count: int  # binaries the root index lists (its records, when it lists none)
    compilers: Counter[str] = field(default_factory=Counter)
    parameters: Counter[str] = field(default_factory=Counter)

    def as_yaml_entry(self) -> dict[str, Any]:
        """version, count, specs per compiler and per truthy variant name, and the
        number of each as formatted strings (as cache.spack.io's generator writes)."""
        return {
            "version": self.version,
            "count": self.count,
            "compilers": dict(self.compilers),
            "compiler_count": f"{len(self.compilers):,}",
            "parameters": dict(self.parameters),
            "parameter_count": f"{len(self.parameters):,}",
        }


class Record(msgspec.Struct):
    """What ``_cache/<tag>/.cachedex-jekyll`` holds: the state the pages were written
    from, and what a run that finds the same state reports without reading them."""

    state: bytes
    pages: int
    specs: int
    skipped: tuple[str, ...]
    version: str
    count: int
    compilers: dict[str, int]
    parameters: dict[str, int]
    #: the id of the catalog that wrote the pages (``Catalog.identity``): a tag that
    #: leaves it has them removed, never a tag another catalog wrote into the same tree
    catalog: str = ""


@functools.cache
def _code_stamp() -> bytes:
    """What the pages depend on besides the catalog: this code."""
    digest = hashlib.sha256(__version__.encode())
    here = Path(__file__)
    for module in ("jekyll.py", "jekyll_pages.py", "jekyll_shares.py", here.name):
        digest.update(here.with_name(module).read_bytes())
    return digest.digest()


def tag_state(catalog: Catalog, tag: str) -> bytes:
    """The tag's state as its pages show it: its totals and its mirrors' rows (a sync
    changes their read time, a size recorded changes its totals), and this code."""
    return _code_stamp() + catalog.page_inputs().tag_states([tag]).get(tag, b"")


def read_record(path: Path) -> Record | None:
    try:
        with open(path, "rb") as record:
            return msgspec.msgpack.decode(record.read(1 << 24), type=Record)
    except (OSError, msgspec.ValidationError, msgspec.DecodeError):
        return None


#: The most bytes of a ``_data`` file read (cache.spack.io's are a few kilobytes).
DATA_FILE_BYTES = 64 * 1024 * 1024


def read_yaml(path: Path, expected: type) -> Any:
    """The parsed content of one of our ``_data`` files, or None if it does not exist.
    Not read through a symlink (it is replaced by the file written, as every output is:
    its target's content was published in the new file) nor past :data:`DATA_FILE_BYTES`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        why = "a symlink: cachedex reads and writes its files, not another's" if exc.errno == errno.ELOOP else None
        raise JekyllError(f"{path}: {why or f'cannot read ({exc.strerror or exc})'}") from exc
    try:
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                raise JekyllError(f"{path}: not a file")
            data = file.read(DATA_FILE_BYTES + 1)
    except OSError as exc:
        raise JekyllError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if len(data) > DATA_FILE_BYTES:
        raise JekyllError(f"{path}: larger than {DATA_FILE_BYTES:,} bytes; fix or delete it")
    try:
        content = yaml.safe_load(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise JekyllError(f"{path}: not UTF-8 text; fix or delete it") from exc
    except (yaml.YAMLError, RecursionError) as exc:
        raise JekyllError(f"{path}: not valid YAML; fix or delete it") from exc
    if content is not None and not isinstance(content, expected):
        raise JekyllError(f"{path}: expected a YAML {expected.__name__}; fix or delete it")
    return content


def tags_yaml(previous: list[Any] | None, stacks: Mapping[str, list[str]]) -> bytes:
    """tags.yaml: ``- name: <tag>`` + sorted ``stacks`` (root included) per tag, sorted by
    name; entries of tags not written in this run are kept as they were."""
    entries = {str(e["name"]): e for e in previous or () if isinstance(e, dict) and "name" in e}
    for tag, names in stacks.items():
        entries[tag] = {"name": tag, "stacks": sorted(names)}
    document = [entries[name] for name in sorted(entries)]
    return yaml.dump(document, Dumper=JekyllDumper, default_flow_style=False, allow_unicode=False).encode("utf-8")


def meta_yaml(previous: dict[str, Any] | None, summaries: Mapping[str, TagSummary]) -> bytes:
    """meta.yaml: per tag version, count, compiler and parameter counts; ``all`` sums them.
    Entries of tags not written in this run are kept as they were."""
    entries = {k: v for k, v in (previous or {}).items() if k != ALL_KEY and isinstance(v, dict)}
    for tag, summary in summaries.items():
        entries[tag] = summary.as_yaml_entry()
    compilers: Counter[str] = Counter()
    parameters: Counter[str] = Counter()
    count = 0
    for entry in entries.values():
        count += _count(entry.get("count"))
        for key, totals in (("compilers", compilers), ("parameters", parameters)):
            value = entry.get(key)
            if isinstance(value, dict):  # an entry written by hand may hold anything
                totals.update({str(name): _count(times) for name, times in value.items()})
    entries[ALL_KEY] = {
        "version": ALL_KEY,
        "count": count,
        "compiler_count": f"{len(compilers):,}",
        "parameter_count": f"{len(parameters):,}",
    }
    return yaml.dump(entries, Dumper=JekyllDumper, default_flow_style=False, allow_unicode=False).encode("utf-8")


def _count(value: object) -> int:
    """A count read back from meta.yaml; 0 for anything that is not a whole number."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
