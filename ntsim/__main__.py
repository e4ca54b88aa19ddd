"""``python -m ntsim ...``: the same as the ``ntsim`` console script."""

from ntsim._console import main

raise SystemExit(main())
