"""``python -m cachedex``: the command line."""

from cachedex.cli import main

if __name__ == "__main__":
    main()
