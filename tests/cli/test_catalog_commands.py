"""Keeping the catalog over months: a tag removed from (or renamed in) the config is
said, forgotten with its history and pages; the space of unneeded specs comes back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cachedex.catalog import Catalog
from cachedex.cli import main
from cachedex.publish.feeds import all_tags_feed
from tests.helpers import fixture_index, integrity_check, record, write_tag, write_v2_mirror


def _config(path: Path, tags: list[str]) -> Path:
    entries = "".join(f"  - name: {tag}\n    url: ./m-{tag}\n" for tag in tags)
    path.write_text(f"tags:\n{entries}")
    return path


def run(config: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--config", str(config), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def two_tags(mirrors: Path, tmp_path: Path) -> Path:
    """Tags a and b synced, then b removed from the config (as a renamed or retired tag)."""
    index = fixture_index(mirrors)
    write_v2_mirror(tmp_path / "m-a", index)
    first = next(iter(index["database"]["installs"]))  # type: ignore[index]
    write_v2_mirror(tmp_path / "m-b", fixture_index(mirrors, drop=(first,)))
    config = _config(tmp_path / "cachedex.yaml", ["a", "b"])
    assert run(config, "sync")[0] == 0
    assert run(config, "site", str(tmp_path / "site"))[0] == 0
    assert run(config, "jekyll", str(tmp_path / "jekyll"))[0] == 0
    return _config(config, ["a"])


def test_a_tag_the_config_no_longer_names_is_said_then_forgotten(two_tags: Path) -> None:
    folder = two_tags.parent
    code, _, err = run(two_tags, "sync")
    assert code == 0 and "warning: tag b is in the catalog but not in" in err and "'cachedex forget b'" in err
    assert "warning: tag b" in run(two_tags, "stats")[2]
    code, _, err = run(two_tags, "forget", "a")
    assert code == 2 and "a: still in" in err  # the next sync would read it again
    code, _, err = run(two_tags, "forget", "nope")
    # (not in the catalog: exit code 1, in the words of every command that reads it; it was 2)
    assert (code, err) == (1, "error: no tag 'nope' in the catalog (tags: a, b)\n")
    assert run(two_tags, "forget", "nope", "nah")[2] == "error: no tags 'nope', 'nah' in the catalog (tags: a, b)\n"
    with Catalog(folder / "cachedex.sqlite", readonly=True) as catalog:
        token = catalog.state_token()[0]
    code, out, _ = run(two_tags, "forget", "b")
    assert code == 0 and out.startswith("forgot b (") and "removed 0 specs nothing needed" in out
    with Catalog(folder / "cachedex.sqlite", readonly=True) as catalog:
        assert catalog.tag_names() == ["a"] and catalog.state_token()[0] != token
        tables = ("mirrors", "members", "syncs", "changes")
        for table in tables:  # nothing of b's is left behind
            orphans = catalog._db.execute(
                f"SELECT count(*) FROM {table} WHERE "
                + (
                    "tag_id NOT IN (SELECT id FROM tags)"
                    if table in ("mirrors", "syncs")
                    else "mirror_id NOT IN (SELECT id FROM mirrors)"
                )
            ).fetchone()[0]
            assert orphans == 0, table
        assert integrity_check(catalog) == "ok"
    assert "warning" not in run(two_tags, "sync")[2]
    code, _, err = run(two_tags, "search", "libelf", "--tag", "b")
    assert code == 1 and "no tag 'b'" in err
    # The next builds remove its pages: the site's tag folder, the Jekyll tag and its _data entries.
    assert run(two_tags, "site", str(folder / "site"))[0] == 0
    assert not (folder / "site/tags/b").exists() and (folder / "site/tags/a/index.html").is_file()
    code, out, _ = run(two_tags, "jekyll", str(folder / "jekyll"))
    assert code == 0 and "b: no longer in the catalog: its " in out
    assert not (folder / "jekyll/_cache/b").exists() and (folder / "jekyll/_cache/a").is_dir()
    import yaml

    tags = yaml.safe_load((folder / "jekyll/_data/tags.yaml").read_text())
    meta = yaml.safe_load((folder / "jekyll/_data/meta.yaml").read_text())
    assert [t["name"] for t in tags] == ["a"] and sorted(meta) == ["a", "all"]


def test_a_jekyll_tag_cachedex_did_not_write_stays(two_tags: Path) -> None:
    """A tag folder without cachedex's record (written by hand, or by another tool) is
    the site's own: a tag that leaves the catalog removes only what cachedex wrote."""
    folder = two_tags.parent
    own = folder / "jekyll/_cache/by-hand"
    own.mkdir()
    (own / "notes.md").write_text("mine")
    assert run(two_tags, "forget", "b")[0] == 0
    assert run(two_tags, "jekyll", str(folder / "jekyll"))[0] == 0
    assert (own / "notes.md").read_text() == "mine"


def test_a_jekyll_run_of_some_tags_leaves_a_forgotten_tag_s_pages_to_a_whole_run(two_tags: Path) -> None:
    """``--tag a`` writes a's pages and leaves the others as they are, a forgotten tag's
    too (``jekyll --help``); a run of every tag removes them."""
    import yaml

    folder = two_tags.parent / "jekyll"
    assert run(two_tags, "forget", "b")[0] == 0
    assert run(two_tags, "jekyll", "--tag", "a", str(folder))[0] == 0
    assert (folder / "_cache/b").is_dir() and [
        t["name"] for t in yaml.safe_load((folder / "_data/tags.yaml").read_text())
    ] == ["a", "b"]
    assert run(two_tags, "jekyll", str(folder))[0] == 0
    assert not (folder / "_cache/b").exists() and [
        t["name"] for t in yaml.safe_load((folder / "_data/tags.yaml").read_text())
    ] == ["a"]


def test_a_jekyll_run_stopped_after_a_forget_leaves_the_tag_to_the_next(
    two_tags: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The forgotten tag's record went before _data was written: a run stopped between
    (Ctrl-C, kill, an error in another tag's folder) left the tag in _data for good, as
    no later run knew this catalog wrote it."""
    import yaml

    from cachedex.publish import jekyll

    folder = two_tags.parent
    assert run(two_tags, "forget", "b")[0] == 0

    def stopped(*_: object) -> None:
        raise OSError(5, "stopped", str(folder / "jekyll/_cache/a"))

    with monkeypatch.context() as patch:
        patch.setattr(jekyll, "_write_tag", stopped)
        code, _, said = run(two_tags, "jekyll", str(folder / "jekyll"))
        assert (code, said.splitlines()[-1]) == (1, f"error: {folder / 'jekyll/_cache/a'}: stopped")  # (whose, why)
    assert run(two_tags, "jekyll", str(folder / "jekyll"))[0] == 0
    tags = yaml.safe_load((folder / "jekyll/_data/tags.yaml").read_text())
    assert [t["name"] for t in tags] == ["a"] and not (folder / "jekyll/_cache/b").exists()


def test_a_jekyll_tag_a_stopped_run_began_is_known_as_this_catalog_s(
    two_tags: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run removed a tag's record before writing its pages: stopped then, the pages it
    had written named no catalog, and a later `forget` of the tag left them for good."""
    from cachedex.publish import jekyll, jekyll_shares

    folder, tree = two_tags.parent, two_tags.parent / "fresh-jekyll"
    write_pages = jekyll_shares.write_pages

    def stopped(rows: object, tag: str, where: str, *rest: object) -> object:
        if tag == "b":
            (Path(where) / "libelf").mkdir()
            (Path(where) / "libelf" / "specs.md").write_text("---\ntitle: half\n---")
            raise OSError(5, "stopped", where)
        return write_pages(rows, tag, where, *rest)  # type: ignore[arg-type]

    _config(two_tags, ["a", "b"])
    with monkeypatch.context() as patch:
        patch.setattr(jekyll, "write_pages", stopped)
        assert run(two_tags, "jekyll", str(tree))[0] == 1
    assert (tree / "_cache/b/libelf/specs.md").is_file()
    _config(two_tags, ["a"])
    assert run(two_tags, "forget", "b")[0] == 0
    assert run(two_tags, "jekyll", str(tree))[0] == 0
    assert not (tree / "_cache/b").exists() and (tree / "_cache/a").is_dir()
    assert folder.is_dir()


def test_cos8_gc_gives_back_the_space_of_specs_nothing_needs(mirrors: Path, tmp_path: Path) -> None:
    """A mirror that replaces builds leaves the old ones behind; once no history names
    them (a forgotten tag's), gc removes them."""
    config = _config(tmp_path / "cachedex.yaml", ["a", "b"])
    index = fixture_index(mirrors)
    write_v2_mirror(tmp_path / "m-a", {"database": {"version": "6", "installs": {}}})
    write_v2_mirror(tmp_path / "m-b", index)
    assert run(config, "sync")[0] == 0
    _config(config, ["a"])
    code, out, _ = run(config, "forget", "b")
    specs = len(index["database"]["installs"])  # type: ignore[index]
    assert code == 0 and f"removed {specs:,} specs nothing needed" in out
    code, out, _ = run(config, "gc")
    assert code == 0 and out.startswith("removed 0 specs nothing needed; the catalog is ")


def test_the_all_tags_feed_keeps_its_entries_through_quiet_syncs(mirrors: Path, tmp_path: Path) -> None:
    """It read the newest ten times as many syncs as it shows and kept those with
    changes: a cron job's no-op syncs emptied it."""
    config = _config(tmp_path / "cachedex.yaml", ["a"])
    index = fixture_index(mirrors)
    write_v2_mirror(tmp_path / "m-a", index)
    assert run(config, "sync")[0] == 0
    first = next(iter(index["database"]["installs"]))  # type: ignore[index]
    write_v2_mirror(tmp_path / "m-a", fixture_index(mirrors, drop=(first,)))
    assert run(config, "sync")[0] == 0  # the one that changed something
    for _ in range(25):
        assert run(config, "sync")[0] == 0
    with Catalog(tmp_path / "cachedex.sqlite", readonly=True) as catalog:
        assert all_tags_feed(catalog, limit=2).count(b"<entry>") == 1


def test_no_state_after_a_forget_takes_a_token_an_earlier_one_had(two_tags: Path) -> None:
    """The ids of a forgotten tag's syncs were given again: forgetting the newest synced
    tag and syncing it under its new name brought back the very token (and ETags) of
    the catalog before, with other content."""
    folder = two_tags.parent
    catalog_path = folder / "cachedex.sqlite"
    seen = []
    with Catalog(catalog_path, readonly=True) as catalog:
        seen.append(catalog.state_token()[0])
    _config(two_tags, ["a", "c"])
    (folder / "m-c").symlink_to(folder / "m-b")  # b renamed c: the same mirror
    assert run(two_tags, "forget", "b")[0] == 0
    for step in (["sync", "c"], ["forget", "c"], ["sync", "c"]):
        if step[0] == "forget":
            _config(two_tags, ["a"])
        else:
            _config(two_tags, ["a", "c"])
        assert run(two_tags, *step)[0] == 0, step
        with Catalog(catalog_path, readonly=True) as catalog:
            token = catalog.state_token()[0]
        assert token not in seen, (step, token, seen)
        seen.append(token)


def test_jekyll_removes_only_what_its_own_catalog_wrote(two_tags: Path, mirrors: Path) -> None:
    """Two catalogs writing one Jekyll tree (each its tags): a tag the other catalog
    wrote is no tag this one forgot."""
    folder = two_tags.parent
    other = folder / "other"
    other.mkdir()
    write_v2_mirror(other / "m-z", fixture_index(mirrors))
    other_config = _config(other / "cachedex.yaml", ["z"])
    assert run(other_config, "sync")[0] == 0
    assert run(other_config, "jekyll", str(folder / "jekyll"))[0] == 0
    code, out, _ = run(two_tags, "jekyll", str(folder / "jekyll"))
    assert code == 0 and "no longer in the catalog" not in out
    assert (folder / "jekyll/_cache/z/.cachedex-jekyll").is_file()


def test_forgetting_a_catalog_s_last_tag_removes_its_jekyll_pages(two_tags: Path) -> None:
    folder = two_tags.parent
    assert run(two_tags, "forget", "b")[0] == 0
    _config(two_tags, ["x"])
    code, out, _ = run(two_tags, "forget", "a")
    assert code == 0, out
    code, out, _ = run(two_tags, "jekyll", str(folder / "jekyll"))
    assert code == 0 and "a: no longer in the catalog" in out
    assert not (folder / "jekyll/_cache/a").exists() and not (folder / "jekyll/_cache/b").exists()


def test_a_tag_tags_from_names_is_not_forgotten(mirrors: Path, tmp_path: Path) -> None:
    """Its next sync would read it again, as a first sync, its history gone."""
    write_v2_mirror(tmp_path / "m", fixture_index(mirrors))
    index = (tmp_path / "m/build_cache/index.json").as_uri()
    (tmp_path / "found.json").write_text(json.dumps({"d": [{"label": "root", "url": index}]}))
    config = tmp_path / "cachedex.yaml"
    config.write_text("tags_from: found.json\n")
    assert run(config, "sync")[0] == 0
    code, _, err = run(config, "forget", "d")
    assert code == 2 and "d: still in" in err


def test_tags_tags_from_names_are_not_said_to_be_left_over(mirrors: Path, tmp_path: Path) -> None:
    """A tag only its tags_from file names is configured: neither a sync of every tag,
    nor of one, nor stats says it is "in the catalog but not in" the config."""
    write_v2_mirror(tmp_path / "m", fixture_index(mirrors))
    index = (tmp_path / "m/build_cache/index.json").as_uri()
    found = {tag: [{"label": "root", "url": index}] for tag in ("d", "e")}
    (tmp_path / "found.json").write_text(json.dumps(found))
    config = tmp_path / "cachedex.yaml"
    config.write_text("tags_from: found.json\n")
    for args in (["sync"], ["sync", "d"], ["stats"]):
        code, _, err = run(config, *args)
        assert code == 0 and "warning" not in err, (args, err)
    with Catalog(tmp_path / "cachedex.sqlite", readonly=True) as catalog:
        assert catalog.tag_names() == ["d", "e"]


def test_gc_gives_the_space_back_while_a_reader_has_the_catalog_open(tmp_path: Path) -> None:
    """VACUUM in WAL mode leaves the rewritten file in the log, which only the last
    connection's close checkpoints: with a server reading, `forget` said "the catalog is
    37.2 MB (was 37.2 MB)" and the log held as much again."""
    import sqlite3

    config = _config(tmp_path / "cachedex.yaml", ["a"])
    catalog_path = tmp_path / "cachedex.sqlite"
    with Catalog(catalog_path) as catalog:
        write_tag(catalog, "a", [record("a" * 32, "zlib")])
        write_tag(catalog, "b", [record(f"{n:032d}", f"p{n:05d}") for n in range(4000)])
    before = catalog_path.stat().st_size
    reader = sqlite3.connect(f"file:{catalog_path}?mode=ro", uri=True)
    try:
        reader.execute("SELECT count(*) FROM specs").fetchone()  # open, idle: as a server's
        code, out, _ = run(config, "forget", "b")
        wal = tmp_path / "cachedex.sqlite-wal"
        assert code == 0 and catalog_path.stat().st_size < before / 2, out
        assert not wal.exists() or wal.stat().st_size == 0
    finally:
        reader.close()


def test_the_size_gc_says_the_catalog_was_counts_its_write_ahead_log(two_tags: Path) -> None:
    """`gc` gives back the log's space too (a server kept the file open: the log held
    a rewrite): counting the file alone, a catalog that shrank was said to grow."""
    import sqlite3

    from cachedex.values import human_size

    catalog = two_tags.parent / "cachedex.sqlite"
    holder = sqlite3.connect(catalog)  # as a server holds it open, the log stays
    try:
        holder.execute("PRAGMA wal_autocheckpoint=0")
        holder.execute("UPDATE specs SET size = size")  # every page of specs into the log
        holder.commit()
        log = catalog.parent / "cachedex.sqlite-wal"
        was = catalog.stat().st_size + log.stat().st_size
        assert log.stat().st_size > 0
        code, out, _ = run(two_tags, "gc")
    finally:
        holder.close()
    assert code == 0 and f"(was {human_size(was)})" in out, (out, was)


def test_gc_and_forget_make_no_catalog_where_there_is_none(tmp_path: Path) -> None:
    """Before any sync there is nothing to collect or forget: said in one line, as every
    reading command says it, and no empty catalog (nor its folder) is left behind; gc
    said "removed 0 specs ... (was 0 B)", forget "not in the catalog (tags: none)"."""
    config = tmp_path / "cachedex.yaml"
    config.write_text("catalog: ./not-yet/cachedex.sqlite\ntags:\n  - name: a\n    url: ./m-a\n")
    line = f"error: {tmp_path / 'not-yet/cachedex.sqlite'}: no catalog here yet; run 'cachedex sync' first\n"
    for args in (["gc"], ["forget", "b"]):
        assert run(config, *args) == (1, "", line), args
        assert not (tmp_path / "not-yet").exists(), args
    code, _, err = run(config, "forget", "a")  # (a tag the config names is refused first, as before)
    assert code == 2 and "a: still in" in err and not (tmp_path / "not-yet").exists()


def test_forget_counts_one_spec_as_one_spec(tmp_path: Path) -> None:
    """It says "forgot old (1 spec listed)", not "1 specs"."""
    catalog = Catalog(tmp_path / "cachedex.sqlite")
    try:
        write_tag(catalog, "old", [record("z" * 32, "zlib")])
    finally:
        catalog.close()
    code, out, _ = run(_config(tmp_path / "cachedex.yaml", ["new"]), "forget", "old")
    assert code == 0 and out.startswith("forgot old (1 spec listed)\nremoved 1 spec nothing needed"), out


def test_gc_says_it_waits_for_a_sync_writing_the_catalog(two_tags: Path) -> None:
    """A sync holding the catalog's write lock: gc said nothing until it ended (seconds,
    minutes), as if it hung; it says why it waits, then does its work."""
    import sqlite3
    import threading
    import time

    catalog = two_tags.parent / "cachedex.sqlite"
    held = threading.Event()

    def hold() -> None:
        other = sqlite3.connect(catalog, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        held.set()
        time.sleep(1.0)
        other.execute("COMMIT")
        other.close()

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(10)
    code, out, err = run(two_tags, "gc")
    holder.join()
    assert code == 0 and out.startswith("removed ")
    assert err == "waiting for another process writing the catalog (a sync?) to finish ...\n"
    assert run(two_tags, "gc")[2] == ""  # (none to wait for: nothing said)
