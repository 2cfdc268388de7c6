"""cachedex: what is in the Spack build cache?

Read Spack binary mirrors (build caches) into a local SQLite catalog and publish it.
The pipeline, one subpackage a stage; each imports only from the lines below it::

    cli/        the ``cachedex`` command: load the config, call one library function, print
    demo/       sample mirrors written as real build caches; ``cachedex demo``
    ingest/     mirrors -> catalog: sources (local, HTTP, OCI), layouts and views, index decoding, sync
    publish/    catalog -> pages -> a static site, Jekyll data, a live server with an API
    catalog/    the SQLite catalog: schema, row shapes, reads, search, the tag writer
    query_text.py      a query written back as Spack syntax (the search page's, the hints')
    diff.py     what changed between tags, or in a tag since a date
    reuse.py    which specs of a Spack environment (its lockfile) each tag has as binaries, and why not
    reuse_nodes.py     what two spec nodes differ in beyond a listing (flags, recipe, namespace)
    config/     the configuration file (tags, stacks and views, mirror URLs, HTTP, limits)
    query.py    Spack's spec syntax for built binaries, parsed once, matched anywhere
    progress.py what long work reports while it runs (a protocol; the CLI draws it)
    query_refusals.py  what the parser says of Spack syntax a question about binaries does not take
    query_targets.py   targets and their ranges by archspec's family tree (``target=:zen3``)
    values.py   small immutable values and facts shared by every stage
    versions.py Spack's version order and ranges; the order people look for tags in
    errors.py   the one exception family
    _perf.py    the few process-level tricks that keep it fast (GC pauses, bounded memos)
"""

__version__ = "0.1.0"
