"""The software v1model target. Its per-packet modules run compiled when built (``hotpath``)."""

from p4switch import hotpath

hotpath.install()
