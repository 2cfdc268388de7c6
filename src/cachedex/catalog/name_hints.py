"""What a search that finds nothing says about a package name: the tags that list the
package, the record the catalog keeps of it without a binary, the namespace a name was
written with (``builtin.hdf5``), or the names close to it ("did you mean").

Apart from :mod:`.hints` because these read only names (the catalog's name index and
which names some mirror lists), not the searches the rest of the hints rerun.
"""

from __future__ import annotations

import sqlite3

from ..values import counted
from .facets import STATE_CACHE
from .names import NameIndex
from .reads import package_tags

__all__ = ["did_you_mean", "name_hint", "namespaced", "stacks_alone"]


def name_hint(
    db: sqlite3.Connection, path: str, token: str, name: str, scope: str, tag: str | None, stack: str | None = None
) -> str:
    """Why no spec of package ``name`` is found in ``scope`` (``tag``, its ``stack``): the
    tags that list it, and the stacks that list it where their tag's root does not; or
    the record the catalog has of it without a binary; or the names close to it that
    some mirror lists (the catalog's names include packages no mirror has a binary of)."""
    # (the searched tag too, when a stack of it was searched: another of its mirrors lists it)
    roots = package_tags(db, name)
    elsewhere = [f"{t} ({counted(n, 'spec')})" for t, n in roots if t != tag or stack]
    named = {t for t, _ in roots}
    alone = [(t, s, n) for t, s, n in db.execute(_STACKS_LISTING, (name,)) if t not in named]
    if elsewhere or alone:
        said = [f"it is in {', '.join(elsewhere)}"] if elsewhere else []
        if alone:
            said.append(
                stacks_alone(
                    [f"stack {s} of {t} lists {counted(n, 'spec')} of it that {t}'s root does not" for t, s, n in alone]
                )
            )
        return f"no package {name!r} {scope}; " + "; ".join(said)
    kept = db.execute(
        "SELECT s.hash, s.version, EXISTS (SELECT 1 FROM members mb WHERE mb.spec_id = s.id) AS held "
        "FROM specs s WHERE s.name = ? ORDER BY held DESC, s.hash LIMIT 1",
        (name,),
    ).fetchone()
    if kept is not None:
        dag_hash, version, held = kept
        spec = f"{name}@{version} /{dag_hash[:7]}"
        found = (
            f"mirrors hold {spec} only as a dependency, without one"
            if held
            else f"the catalog keeps {spec} from an earlier sync, no mirror holds it now"
        )
        return f"no spec of {name!r} {scope} has a binary; {found}"
    return f"no package {name!r} {scope}" + (namespaced(db, name) or did_you_mean(db, path, token, name))


def stacks_alone(said: list[str]) -> str:
    """What stacks list that their tag's root does not (a copy to the root not done yet):
    a tag's searches read its root's listing, which lacks it; a search of every tag
    finds it. ``""`` for none; else to follow a "; "."""
    return f"{'; '.join(said)} (a search of every tag finds {'it' if len(said) == 1 else 'them'})" if said else ""


def namespaced(db: sqlite3.Connection, name: str, written: str = "") -> str:
    """``"; ... search hdf5"`` for a name written with its repository's namespace
    (``builtin.hdf5``, as ``spack spec -N`` prints it) whose package some mirror lists:
    an index's nodes keep the namespace, but cachedex keys packages by name alone.
    ``written`` comes before the name (``^`` for a dependency)."""
    namespace, dot, package = name.rpartition(".")
    if not (dot and namespace and package) or db.execute(_LISTED_NAME, (package,)).fetchone() is None:
        return ""
    return f"; {namespace}. is a repository's namespace, which cachedex does not search: search {written}{package}"


def did_you_mean(db: sqlite3.Connection, path: str, token: str, name: str) -> str:
    """``"; did you mean a, b?"``: the names close to ``name`` that some mirror lists,
    the closest first; ``""`` when there are none. Compared in lower case, as Spack
    writes every package name: ``HDF5`` is ``hdf5`` mistyped."""
    close = [
        other
        for other in _name_index(db, path, token).close(name.lower(), n=2 * _CLOSE)
        if db.execute(_LISTED_NAME, (other,)).fetchone()
    ][:_CLOSE]
    return f"; did you mean {', '.join(close)}?" if close else ""


#: (tag, stack, listed specs) of the stacks that list specs of a package.
_STACKS_LISTING = (
    "SELECT t.name, m.stack, count(*) FROM specs s JOIN members mb ON mb.spec_id = s.id AND mb.listed "
    "JOIN mirrors m ON m.id = mb.mirror_id AND m.stack != 'root' JOIN tags t ON t.id = m.tag_id "
    "WHERE s.name = ? GROUP BY t.name, m.stack ORDER BY t.name, m.stack"
)
#: Names a "did you mean" offers, at most.
_CLOSE = 3
#: Whether some mirror lists a spec of a package (with a binary).
_LISTED_NAME = "SELECT 1 FROM specs s JOIN members mb ON mb.spec_id = s.id AND mb.listed WHERE s.name = ? LIMIT 1"


def _name_index(db: sqlite3.Connection, path: str, token: str) -> NameIndex:
    """Every package name of the catalog in state ``token``, for "did you mean"."""
    return STATE_CACHE.get(  # type: ignore[no-any-return]
        path, token, ("names",), lambda: NameIndex(row[0] for row in db.execute("SELECT DISTINCT name FROM specs"))
    )
