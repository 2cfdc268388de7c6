"""cachedex: what is in the Spack build cache?

Read Spack binary mirrors (build caches) into a local SQLite catalog and publish it.
The command line (``cachedex``) is a thin layer over this library:

- :mod:`cachedex.config`  the configuration file (tags, stacks, mirror URLs)
- :mod:`cachedex.sources` reading files from local folders and HTTP
- :mod:`cachedex.mirror`  mirror layouts (v2, v3), checksums, spec manifests
- :mod:`cachedex.index`   decoding index.json into records
- :mod:`cachedex.catalog` the SQLite catalog (all SQL lives there)
- :mod:`cachedex.sync`    one sync: mirrors -> catalog, one transaction per tag
"""

__version__ = "0.1.0"
