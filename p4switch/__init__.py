"""The software v1model target. Its per-packet modules run compiled when built
(``netbase.hotpath.DATA_PATH``: netbase, imported first, installs its finder)."""

import netbase  # noqa: F401 (before any of this package's modules)
