"""Writing output trees safely: atomic replacement, no rewrite of unchanged files, and
no folder outside the output folder, whatever a tag or package name says."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..errors import CachedexError, OutputError

__all__ = ["safe_folder", "same_bytes", "update_file", "write_atomically", "write_new"]


def same_bytes(path: str, data: bytes) -> bool:
    """True if ``path`` is a regular file (not a symlink) holding exactly ``data``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "rb") as handle:
            # One byte more than expected tells a longer file apart without reading it all.
            return handle.read(len(data) + 1) == data
    except OSError:
        return False


def write_atomically(path: str, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path``.

    Readers (a running ``jekyll serve``) see the old or the new file, never a part.
    """
    folder, name = os.path.split(path)
    temp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    try:
        fd = os.open(temp, flags, 0o644)
    except FileExistsError:  # left by a run of the same pid that was killed
        os.unlink(temp)
        fd = os.open(temp, flags, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def update_file(path: str, data: bytes) -> bool:
    """Make ``path`` hold ``data``; returns False (and touches nothing) if it already did."""
    if same_bytes(path, data):
        return False
    write_atomically(path, data)
    return True


def safe_folder(outdir: Path, *parts: str, error: type[CachedexError] = OutputError) -> Path:
    """``outdir/parts...``, created if needed; ``error`` if it is not a real folder
    inside ``outdir`` (a symlink leading elsewhere, or a file)."""
    folder = outdir
    for part in parts:
        folder = folder / part
        if folder.is_symlink():
            raise error(f"{folder}: is a symlink; cachedex does not write through it")
        try:
            folder.mkdir(exist_ok=True)
        except FileExistsError as exc:
            raise error(f"{folder}: exists and is not a folder") from exc
        except OSError as exc:
            raise error(f"{folder}: cannot create ({exc.strerror or exc})") from exc
    if not folder.resolve().is_relative_to(outdir):
        raise error(f"{folder}: leads outside {outdir}")
    return folder


def write_new(path: str, data: bytes) -> None:
    """Create ``path`` holding ``data`` (it must not exist): for a staging folder that no
    reader sees until it is renamed into place whole, where a temporary file and a rename
    per file would be wasted."""
    # Plain os.write: a file object around the descriptor costs more than the write.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
