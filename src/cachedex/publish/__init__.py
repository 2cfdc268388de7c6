"""Publish: the catalog as pages (HTML with JSON twins), a static site, Jekyll data, a server.

``pages`` builds each page's data from the catalog, ``render`` turns it into HTML, and
``site``, ``jekyll`` and ``serve`` write or serve it; ``files`` writes output trees safely.
"""

__all__: list[str] = []
