"""RoCEv2 RNIC model: a sans-IO transport core (nicmodel.nic.Nic) with verbs-like queue
pairs, Go-Back-N and selective-repeat reliability, PFC obedience and DCQCN's notification
point; congestion control in nicmodel.cc. See nicmodel/README.md. The per-packet modules run
compiled when built (``HOTPATH``; ``netbase.hotpath``)."""

from netbase.hotpath import HotPath

HOTPATH = HotPath("nicmodel", ("nicmodel.psn", "nicmodel.counters", "nicmodel.roce", "nicmodel.int_md",
                               "nicmodel.loss_detection", "nicmodel.cc.base", "nicmodel.cc.dcqcn",
                               "nicmodel.cc.hpcc", "nicmodel.cc.timely", "nicmodel.qp", "nicmodel.requester",
                               "nicmodel.responder", "nicmodel.nic", "nicmodel.workloads"))
HOTPATH.install()

from nicmodel.nic import Nic  # noqa: E402 (after the finder, which may import it from its build)
from nicmodel.qp import QueuePair  # noqa: E402
from nicmodel.verbs import (  # noqa: E402
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
