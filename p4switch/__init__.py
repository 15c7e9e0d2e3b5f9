"""The software v1model target. Its per-packet modules run compiled when built (``HOTPATH``;
``netbase.hotpath``)."""

from netbase.hotpath import HotPath

HOTPATH = HotPath("p4switch", ("p4switch.switch.pfc", "p4switch.switch.tm", "p4switch.exec.stack", "p4switch.exec.externs",
                               "p4switch.exec.pipeline", "p4switch.switch.device"))
HOTPATH.install()
