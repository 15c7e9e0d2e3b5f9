"""RoCEv2 RNIC model: a sans-IO transport core (nicmodel.nic.Nic) with verbs-like queue
pairs, Go-Back-N and selective-repeat reliability, PFC obedience and DCQCN's notification
point; congestion control in nicmodel.cc. See nicmodel/README.md. The per-packet modules run
compiled when built (``netbase.hotpath.DATA_PATH``: netbase, imported first, installs its finder)."""

import netbase  # noqa: F401 (before any of this package's modules: it installs their finder)
from nicmodel.nic import Nic
from nicmodel.qp import QueuePair
from nicmodel.verbs import (
                            Access,
                            Completion,
                            LossDetection,
                            MemoryRegion,
                            QpConfig,
                            QpState,
                            Reliability,
                            VerbsError,
                            WcOpcode,
                            WcStatus,
)

__all__ = ["Nic", "QueuePair", "Access", "Completion", "LossDetection", "MemoryRegion", "QpConfig",
           "QpState", "Reliability", "VerbsError", "WcOpcode", "WcStatus"]
