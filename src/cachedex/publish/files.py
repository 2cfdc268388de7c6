"""Writing output trees safely: atomic replacement, no rewrite of unchanged files, and
no folder outside the output folder, whatever a tag or package name says."""

from __future__ import annotations

import contextlib
import fcntl
import os
import queue
import re
import shutil
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ..errors import CachedexError, OutputError
from ..values import check_name

__all__ = [
    "LOCK_FILE",
    "NAME_MAX",
    "OLD_FILES",
    "Replacer",
    "held_alone",
    "name_problem",
    "quoted",
    "remove_old_files",
    "remove_stale_temporaries",
    "remove_tree",
    "safe_folder",
    "same_bytes",
    "update_file",
    "write_atomically",
    "write_new",
]

#: The file in an output folder whose lock a run holds while it writes there.
LOCK_FILE = ".cachedex-lock"


@contextlib.contextmanager
def held_alone(outdir: Path, error: type[CachedexError] = OutputError) -> Iterator[None]:
    """Hold ``outdir``'s lock while the block writes it; ``error`` at once if another run
    holds it. Two runs writing one folder remove each other's staging and temporary
    files; the lock goes with the process, however it ends."""
    try:
        fd = os.open(outdir / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise error(f"{outdir / LOCK_FILE}: cannot open ({exc.strerror or exc})") from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise error(f"{outdir}: another cachedex run is writing this folder; run again once it has ended") from None
        yield
    finally:
        os.close(fd)


#: The longest file name, in bytes, that common file systems (ext4, XFS, btrfs, APFS) take.
NAME_MAX = 255


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a folder of an output tree, or None.

    :func:`~cachedex.values.check_name`'s rules, ASCII only, and at most :data:`NAME_MAX`
    bytes: publishers skip and report such a name (it has no page) rather than fail on
    it, whatever a catalog holds, even one written before ingest refused such names.

    ASCII, as Spack writes a package name (``spec_parser.py``'s IDENTIFIER) and as a tag
    is (:func:`~cachedex.values.check_label`): a name beyond it can be another's folder
    on a file system that folds case or Unicode forms (macOS's folds ``é`` written as one
    character and as ``e`` and an accent into one name), and so take over its page."""
    problem = check_name(name)
    if problem is not None:
        return problem
    if not name.isascii():
        return f"{quoted(name)} is not ASCII, as Spack's package names and tags are"
    try:
        size = len(os.fsencode(name))
    except UnicodeError:
        return f"{quoted(name)} cannot be encoded as a file name"
    if size > NAME_MAX:
        return f"{quoted(name)} is {size:,} bytes long; a file name holds at most {NAME_MAX}"
    return None


def quoted(name: str, limit: int = 60) -> str:
    """``repr(name)``, cut short: a warning names a hostile name, it need not hold all of it."""
    return repr(name) if len(name) <= limit else repr(name[:limit]) + f"... ({len(name):,} characters)"


def same_bytes(path: str, data: bytes) -> bool:
    """True if ``path`` is a regular file (not a symlink) holding exactly ``data``."""
    try:
        # Not blocking: a FIFO in a page's place must not stop a build (it is replaced).
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        # A file of another size differs, unread: a hub library's JSON twin that gained a
        # dependent is megabytes that need no reading.
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode) or found.st_size != len(data):
            return False
        # One byte more than expected tells a file that grew meanwhile apart.
        return _read_up_to(fd, len(data) + 1) == data
    except OSError:
        return False
    finally:
        os.close(fd)


# Pages are written and read through their descriptors, not file objects: one costs a
# second fstat and a buffer per file, ~10 % of the time a build takes to write its files.


def _read_up_to(fd: int, size: int) -> bytes:
    """The next ``size`` bytes of ``fd``, fewer at its end."""
    chunks = []
    while size > 0 and (chunk := os.read(fd, size)):
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)  # (one chunk: that chunk itself, not a copy)


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd``."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if not written:  # (a regular file takes some bytes or fails: never loop in place)
            raise OSError(f"no byte written of {len(view):,}")
        view = view[written:]


def write_atomically(path: str, data: bytes, replace: Callable[[str, str], None] | None = None) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path``
    (with ``replace``, such as :meth:`Replacer.replace`; default ``os.replace``).

    Readers (a running ``jekyll serve``) see the old or the new file, never a part.
    A new file's mode follows the umask; a replaced file keeps its mode, as ``cp``
    keeps it (:func:`_kept_mode`).
    """
    folder, name = os.path.split(path)
    temp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    kept = _kept_mode(path)
    try:
        fd = os.open(temp, flags, 0o644)
    except FileExistsError:  # left by a run of the same pid that was killed
        os.unlink(temp)
        fd = os.open(temp, flags, 0o644)
    try:
        try:
            if kept is not None:
                os.fchmod(fd, kept)
            _write_all(fd, data)
        finally:
            os.close(fd)
        (replace or os.replace)(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _kept_mode(path: str) -> int | None:
    """The permission bits of the regular file at ``path``, or None if there is none.

    A rename puts a new inode in the file's place: without them, a page a build rewrites
    gets the umask's mode while the pages it left alone keep theirs. Under a cron job's
    umask 077, a site its owner made readable (``chmod -R a+rX``) would then answer 403
    to the web server's user (nginx's workers) for exactly the pages that changed."""
    try:
        found = os.lstat(path)
    except OSError:
        return None
    return stat.S_IMODE(found.st_mode) & 0o777 if stat.S_ISREG(found.st_mode) else None


def update_file(path: str, data: bytes, replace: Callable[[str, str], None] | None = None) -> bool:
    """Make ``path`` hold ``data``; returns False (and touches nothing) if it already did."""
    if same_bytes(path, data):
        return False
    write_atomically(path, data, replace)
    return True


#: The folder a :class:`Replacer` keeps replaced files in until it removes them:
#: ``.cachedex-old-<pid>``, in the output folder.
OLD_FILES = re.compile(r"\.cachedex-old-([0-9]+)")


class Replacer:
    """Atomic replacement whose old files are removed later, by a thread of their own.

    Renaming a file over another frees the other's blocks inside the rename: 150-400 µs
    a file on this project's machines, mostly spent waiting for the disk (an ext4
    mounted with ``discard`` trims freed blocks at once), seconds for the 30,000 files
    a site rewrites after a nightly sync. Linked into a hidden folder first, the old
    file outlives the rename, which costs ~60 µs with the link; a thread then unlinks
    it while the build goes on. :meth:`close` waits for the thread and removes the
    folder; one a killed process left is removed by the next build
    (:func:`remove_old_files`)."""

    def __init__(self, outdir: str) -> None:
        self.folder = os.path.join(outdir, f".cachedex-old-{os.getpid()}")
        self._made = 0
        self._queue: queue.SimpleQueue[str | None] | None = None
        self._thread: threading.Thread | None = None

    def replace(self, temp: str, path: str) -> None:
        """``os.replace(temp, path)``, leaving ``path``'s old file for the thread to remove."""
        old = self._keep(path)
        os.replace(temp, path)
        if old is not None:
            assert self._queue is not None
            self._queue.put(old)

    def _keep(self, path: str) -> str | None:
        """A second name for ``path``'s file in the folder, or None (no such file, or a
        file system without hard links: the rename then frees it as usual)."""
        if self._queue is None:
            try:
                os.mkdir(self.folder, 0o700)
            except FileExistsError:  # left by a killed process of the same pid
                remove_tree(self.folder)
                os.mkdir(self.folder, 0o700)
            self._queue = queue.SimpleQueue()
            self._thread = threading.Thread(target=self._remove, args=(self._queue,), daemon=True)
            self._thread.start()
        self._made += 1
        old = os.path.join(self.folder, str(self._made))
        try:
            os.link(path, old, follow_symlinks=False)
        except OSError:
            return None
        return old

    @staticmethod
    def _remove(pending: queue.SimpleQueue[str | None]) -> None:
        while (old := pending.get()) is not None:
            with contextlib.suppress(OSError):
                os.unlink(old)

    def close(self) -> None:
        """Wait until every old file is removed, then remove the folder."""
        if self._queue is None or self._thread is None:
            return
        self._queue.put(None)
        self._thread.join()
        self._queue = self._thread = None
        remove_tree(self.folder)


def remove_tree(folder: str) -> None:
    """Remove ``folder`` and what it holds, if it exists (a symlink or a file in its
    place: that alone; a file left there made every later write of a page fail)."""
    if os.path.islink(folder):
        os.unlink(folder)
        return
    try:
        shutil.rmtree(folder)
    except FileNotFoundError:
        pass
    except NotADirectoryError:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(folder)


def remove_old_files(outdir: str) -> int:
    """Remove the folders of old files (:class:`Replacer`) that killed processes left in
    ``outdir``; returns how many."""
    removed = 0
    with os.scandir(outdir) as entries:
        found = [(entry.path, OLD_FILES.fullmatch(entry.name)) for entry in entries]
    for path, match in found:
        if match is not None and not _alive(int(match[1])):
            remove_tree(path)
            removed += 1
    return removed


def safe_folder(outdir: Path, *parts: str, error: type[CachedexError] = OutputError) -> Path:
    """``outdir/parts...``, created if needed; ``error`` if it is not a real folder
    inside ``outdir`` (a part that is not one plain name, a symlink, or a file)."""
    folder = str(outdir)
    try:
        for part in parts:
            if part in ("", ".", "..") or "/" in part or "\0" in part:
                raise error(f"{os.path.join(folder, part)}: leads outside {outdir}")
            folder = os.path.join(folder, part)
            # Each part a plain name, and each a real folder, not a symlink: the result
            # is inside ``outdir`` without resolving the whole path again (a lstat a part,
            # where a resolve took ~10 and a build asks for a folder twice a package).
            _real_folder(folder, error)
    except OSError as exc:
        # Even asking can fail (a name too long for the file system): an OSError here
        # is the user's output, reported as ``error`` like any other.
        raise error(f"{folder}: cannot create ({exc.strerror or exc})") from exc
    return Path(folder)


def _real_folder(folder: str, error: type[CachedexError]) -> None:
    """Make ``folder`` if it is missing; ``error`` if it is a symlink or not a folder."""
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        try:
            os.mkdir(folder)
            return
        except FileExistsError:  # made meanwhile (by another worker)
            mode = os.lstat(folder).st_mode
    if stat.S_ISLNK(mode):
        raise error(f"{folder}: is a symlink; cachedex does not write through it")
    if not stat.S_ISDIR(mode):
        raise error(f"{folder}: exists and is not a folder")


def write_new(path: str, data: bytes) -> None:
    """Create ``path`` holding ``data`` (it must not exist): for a staging folder that no
    reader sees until it is renamed into place whole, where a temporary file and a rename
    per file would be wasted."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


#: A temporary file of :func:`write_atomically`: ``.<name>.<pid>.tmp``.
_TEMPORARY = re.compile(r"\.(.+)\.([0-9]+)\.tmp")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # no signal: only asks whether the process exists
    except PermissionError:  # another user's process
        return True
    except (ProcessLookupError, OverflowError):
        return False
    return True


def remove_stale_temporaries(folders: Iterable[str], names: re.Pattern[str]) -> int:
    """Remove the temporary files of :func:`write_atomically` that a killed process left
    in ``folders`` (not recursive) for files whose name ``names`` matches; returns how
    many. A file whose process still runs is left alone: it may be writing it now. A
    killed run leaves them behind, and its pid is never this run's, so nothing else
    would ever remove them."""
    removed = 0
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            if entry.name[0] != "." or not entry.name.endswith(".tmp"):
                continue
            found = _TEMPORARY.fullmatch(entry.name)
            if found is None or not names.fullmatch(found[1]) or _alive(int(found[2])):
                continue
            # A symlink too (removed, not followed): a web server serves what it leads to.
            if entry.is_file(follow_symlinks=False) or entry.is_symlink():
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
                    removed += 1
    return removed
