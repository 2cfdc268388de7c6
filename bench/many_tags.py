"""Many tags sharing most of their specs, as snapshots of one branch do.

Generates (once, under bench/out/many/) ten tags from ``bench/ingest.py``'s generator:
the first is its tag; each next one replaces 20 % of the previous tag's records with new
ones (new hashes; dependents point to the new hashes, as a rebuild would), so that any
two neighbours share 80 % of their specs. Every tag's spec manifests live in one shared
folder (each tag links to it), as the specs of a branch's snapshots do. Then, in one run:

  (a) the first tag's first sync                      (each spec stored once, ever)
  (b) the tenth tag's first sync, after the nine before it   target: <= 30 % of (a)
  (c) the catalog's size with ten tags, against one tag's
  (b') with --pairs N: (a) and (b) again, side by side, N times: the first tag into an
      empty catalog, then the tenth into a copy of the catalog of the nine before it
      (copied before the clock starts); the median of the N ratios. Single runs of (a)
      and (b) drift with the machine over the syncs between them.
  (b'') with --pairs N --bound: in each pair, the tenth tag also into a copy whose
      secondary indexes that new specs and members keep up are dropped (all but the
      hash index and the unsized specs'): not a catalog cachedex could serve, but the
      most any change to those indexes could win.
  (d) with --site: the whole website of all the tags (``cachedex site`` into an empty
      folder, then again over it unchanged): seconds, files and bytes on disk. Mind the
      disk: one 250,000-record tag's site takes ~7 GB, ten such tags' about three times that.

    python bench/many_tags.py [--records N] [--tags N] [--pairs N [--bound]] [--site]
"""

from __future__ import annotations

import argparse
import base64
import gc
import glob
import json
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from cachedex.catalog.schema import BULK_INDEXES, BULK_MEMBER_INDEXES

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.ingest import _write_v3_index, generate  # noqa: E402

GENERATOR = 2
_MANIFEST = (
    '{{"version":3,"data":[{{"contentLength":{size},"mediaType":"application/vnd.spack.install.v2.tar+gzip",'
    '"compression":"gzip","checksumAlgorithm":"sha256","checksum":"{zeros}"}}]}}'
)


def _write_manifests(shared: Path, installs: dict[str, Any], done: set[str]) -> None:
    """A spec manifest, in the shared folder, for each listed record not written yet."""
    for dag_hash, record in installs.items():
        if dag_hash in done or not record.get("in_buildcache"):
            continue
        node = record["spec"]
        name, version = node["name"], str(node["version"])
        folder = shared / name
        folder.mkdir(parents=True, exist_ok=True)
        size = 1000 + int(dag_hash[:6], 36) % 10**8
        text = _MANIFEST.format(size=size, zeros="0" * 64)
        (folder / f"{name}-{version}-{dag_hash}.spec.manifest.json".replace("/", "_")).write_text(text)
        done.add(dag_hash)


def _index(mirror: Path) -> dict[str, Any]:
    (blob,) = glob.glob(str(mirror / "blobs/sha256/*/*"))
    return json.loads(Path(blob).read_bytes())  # type: ignore[no-any-return]


def _next_tag(index: dict[str, Any], seed: int, share: float = 0.2) -> dict[str, Any]:
    """``index`` with ``share`` of its records rebuilt: new hashes, dependents repointed."""
    rng = random.Random(seed)
    installs = index["database"]["installs"]
    renamed = {
        h: base64.b32encode(rng.randbytes(20)).decode().lower()[:32]
        for h in rng.sample(sorted(installs), int(len(installs) * share))
    }
    out: dict[str, Any] = {}
    for dag_hash, record in installs.items():
        node = dict(record["spec"])
        new_hash = renamed.get(dag_hash, dag_hash)
        node["hash"] = new_hash
        deps = node.get("dependencies") or []
        if any(d.get("hash") in renamed for d in deps):
            node["dependencies"] = [{**d, "hash": renamed.get(d.get("hash"), d.get("hash"))} for d in deps]
        out[new_hash] = {**record, "spec": node}
    return {"database": {"version": index["database"]["version"], "installs": out}}


def _prepare(out: Path, records: int, tags: int) -> list[Path]:
    facts = out / "facts.json"
    wanted = {"generator": GENERATOR, "records": records, "tags": tags}
    folders = [out / f"t{n}" for n in range(tags)]
    if facts.exists() and json.loads(facts.read_text()) == wanted:
        return folders
    shutil.rmtree(out, ignore_errors=True)
    generate(out / "gen", records, 1)
    index = _index(out / "gen" / "root")
    shutil.rmtree(out / "gen")
    shared = out / "spec-manifests"
    written: set[str] = set()
    gc.disable()
    for n, folder in enumerate(folders):
        if n:
            index = _next_tag(index, seed=n)
        _write_v3_index(folder, json.dumps(index, separators=(",", ":")).encode())
        _write_manifests(shared, index["database"]["installs"], written)
        (folder / "v3/manifests/spec").symlink_to(shared)
    gc.enable()
    facts.write_text(json.dumps(wanted))
    return folders


def _sync(config: Path, tag: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "cachedex", "-c", str(config), "sync", tag], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=250_000)
    parser.add_argument("--tags", type=int, default=10)
    parser.add_argument("--out", type=Path, default=HERE / "out" / "many")
    parser.add_argument(
        "--bound", action="store_true", help="with --pairs: the tenth tag also without the indexes it keeps up"
    )
    parser.add_argument("--site", action="store_true", help="also build the whole site of all the tags")
    parser.add_argument("--pairs", type=int, default=0, help="time the first and the last tag side by side N times")
    args = parser.parse_args()
    args.out = args.out.resolve()  # the config written there names paths relative to itself
    print(f"preparing {args.tags} tags of {args.records:,} records in {args.out} ...", flush=True)
    folders = _prepare(args.out, args.records, args.tags)
    catalog = args.out / "catalog.sqlite"
    for path in args.out.glob("catalog.sqlite*"):
        path.unlink()
    config = args.out / "cachedex.yaml"
    tags = [{"name": folder.name, "url": str(folder)} for folder in folders]
    config.write_text(yaml.safe_dump({"catalog": str(catalog), "tags": tags}))
    seconds = [_sync(config, folder.name) for folder in folders[:-1]]
    before_last = args.out / "before-last.sqlite"
    _backup(catalog, before_last)
    seconds.append(_sync(config, folders[-1].name))
    first_size = None
    for n, spent in enumerate(seconds):
        print(f"  {folders[n].name}: first sync {spent:.2f} s")
    one = args.out / "one.yaml"
    one.write_text(yaml.safe_dump({"catalog": str(args.out / "one.sqlite"), "tags": tags[:1]}))
    for path in args.out.glob("one.sqlite*"):
        path.unlink()
    _sync(one, folders[0].name)
    first_size = (args.out / "one.sqlite").stat().st_size
    print(f"(a) first tag's first sync: {seconds[0]:.2f} s")
    print(f"(b) tenth tag's first sync: {seconds[-1]:.2f} s = {seconds[-1] / seconds[0]:.0%} of (a)   [target <= 30 %]")
    size_all, size_one = catalog.stat().st_size / 1e6, first_size / 1e6
    print(f"(c) catalog: {size_all:.0f} MB with {len(folders)} tags, {size_one:.0f} MB with one")
    if args.pairs:
        _pairs(args.out, tags, before_last, args.pairs, bound=args.bound)
    before_last.unlink()
    if args.site:
        _whole_site(config, args.out / "site", len(folders))


def _backup(source: Path, copy: Path) -> None:
    """A consistent copy of a SQLite file, whatever its write-ahead log holds."""
    copy.unlink(missing_ok=True)
    with sqlite3.connect(source) as db, sqlite3.connect(copy) as into:
        db.backup(into)
    db.close()
    into.close()


#: The indexes a new spec or member of the tenth tag is inserted into at random, which
#: --bound drops: the schema's secondary indexes of specs, edges and members, all but the
#: hash index (the lookups need it) and the unsized specs' (asked with the ids).
_KEPT_UP = tuple(
    name for name in {**BULK_INDEXES, **BULK_MEMBER_INDEXES} if name not in ("specs_hash", "specs_unsized")
)


def _pairs(out: Path, tags: list[dict[str, str]], before_last: Path, pairs: int, *, bound: bool) -> None:
    first, last = out / "pair-first.sqlite", out / "pair-last.sqlite"
    first_config, last_config = out / "pair-first.yaml", out / "pair-last.yaml"
    first_config.write_text(yaml.safe_dump({"catalog": str(first), "tags": tags[:1]}))
    last_config.write_text(yaml.safe_dump({"catalog": str(last), "tags": tags}))
    ratios: list[float] = []
    bounds: list[float] = []
    for _ in range(pairs):
        for path in [*out.glob("pair-first.sqlite*"), *out.glob("pair-last.sqlite*")]:
            path.unlink()
        shutil.copyfile(before_last, last)
        spent_first = _sync(first_config, tags[0]["name"])
        spent_last = _sync(last_config, tags[-1]["name"])
        ratios.append(spent_last / spent_first)
        line = f"  pair: first tag {spent_first:.2f} s, tenth tag {spent_last:.2f} s = {ratios[-1]:.0%}"
        if bound:
            for path in out.glob("pair-last.sqlite*"):
                path.unlink()
            shutil.copyfile(before_last, last)
            with sqlite3.connect(last) as db:
                for name in _KEPT_UP:
                    db.execute(f"DROP INDEX {name}")
            db.close()
            spent_bound = _sync(last_config, tags[-1]["name"])
            bounds.append(spent_bound / spent_first)
            line += f"; without those indexes {spent_bound:.2f} s = {bounds[-1]:.0%}"
        print(line, flush=True)
    for path in [*out.glob("pair-first.*"), *out.glob("pair-last.*")]:
        path.unlink()
    print(f"(b') side by side, {pairs} pairs: median {statistics.median(ratios):.0%}   [target <= 30 %]")
    if bound:
        print(f"(b'') the tenth tag without the indexes it keeps up: median {statistics.median(bounds):.0%} of (a)")


def _whole_site(config: Path, site: Path, tags: int) -> None:
    shutil.rmtree(site, ignore_errors=True)
    command = [sys.executable, "-m", "cachedex", "-c", str(config), "site", str(site)]
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    first = time.perf_counter() - start
    files = [path for path in site.rglob("*") if path.is_file()]
    pages = sum(1 for path in files if path.suffix == ".html")
    on_disk = sum(path.stat().st_blocks * 512 for path in files) / 1e9
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    again = time.perf_counter() - start
    print(
        f"(d) whole site of the {tags} tags: {first:.1f} s, {pages:,} pages, {len(files):,} files, "
        f"{on_disk:.1f} GB on disk; unchanged, again: {again:.2f} s"
    )


if __name__ == "__main__":
    main()
