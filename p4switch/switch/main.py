"""``p4switch``: the switch process, started the way BMv2's ``simple_switch_grpc`` is.

    p4switch [PROGRAM.json | PROGRAM.p4 | --no-p4] -i 1@veth1 -i 2@veth2 ... --device-id N
             --cpu-port P --priority-queues Q --pcap DIR --log-console [--log-level L]
             [--thrift-port 9090] [--time-dilation D] [--timestamp-unit us|ns]
             [--queue-bytes-register NAME] -- --grpc-server-addr 127.0.0.1:9559

Flags shared with simple_switch_grpc mean the same; target options (``--grpc-server-addr``,
``--cpu-port``, ``--priority-queues``) are accepted before or after ``--``. PROGRAM is our
device config JSON (``p4switch-compile -o``) or a P4 source file compiled at start-up; either
way a controller may replace it with SetForwardingPipelineConfig. The P4Runtime server listens
on loopback unless told otherwise; BMv2's Thrift runtime API (``p4switch-cli``) on ``--thrift-port``.
Our own target options: ``--timestamp-unit`` (the v1model timestamps in microseconds, BMv2's
unit and the default, or nanoseconds) and ``--queue-bytes-register`` (a register the switch
fills with each port's queued bytes; p4src/README.md, "Target options").
SIGINT/SIGTERM stop the switch cleanly (sockets closed, pcap files complete).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from netbase.clock import DilatedClock
from netbase.packet_socket import PacketSocketPort
from p4switch.exec import LoadedProgram, native
from p4switch.frontend import compile_file
from p4switch.p4info import generate_p4info
from p4switch.p4runtime import P4RuntimeServer
from p4switch.switch.device import Device, check_device_config
from p4switch.switch.loop import SwitchLoop, share_the_gil_promptly
from p4switch.switch.ports import parse_interface
from p4switch.switch.thrift_server import DEFAULT_PORT, ThriftServer

log = logging.getLogger("p4switch")

LOG_LEVELS = {"trace": logging.DEBUG, "debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
              "warning": logging.WARNING, "error": logging.ERROR, "critical": logging.CRITICAL, "off": logging.CRITICAL + 10}
DEFAULT_GRPC_ADDR = "127.0.0.1:9559"

# --timestamp-unit -> nanoseconds per tick of the v1model timestamps
TIMESTAMP_UNITS = {"us": 1000, "ns": 1}


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="p4switch", description="Software v1model switch (simple_switch_grpc-compatible)")
    ap.add_argument("program", nargs="?", help="device config JSON (p4switch-compile -o) or a .p4 file")
    ap.add_argument("--no-p4", action="store_true", help="start without a program; wait for P4Runtime")
    ap.add_argument("-i", "--interface", action="append", default=[], metavar="N@IFNAME", help="attach port N to IFNAME")
    ap.add_argument("--device-id", type=int, default=0)
    ap.add_argument("--cpu-port", type=int, default=None, help="port number of the CPU (packet-in/out)")
    ap.add_argument("--priority-queues", type=int, default=1, help="egress queues per port (1..8)")
    ap.add_argument("--pcap", nargs="?", const=".", default=None, metavar="DIR", help="capture every port into DIR")
    ap.add_argument("--log-console", action="store_true", help="log to the console")
    ap.add_argument("-L", "--log-level", default="info", choices=sorted(LOG_LEVELS))
    ap.add_argument("--log-file", default=None, help="log to this file")
    ap.add_argument("--thrift-port", type=int, default=DEFAULT_PORT, help="Thrift runtime port (default 9090)")
    ap.add_argument("--grpc-server-addr", default=DEFAULT_GRPC_ADDR, help="P4Runtime address (default 127.0.0.1:9559)")
    ap.add_argument("--time-dilation", type=float, default=1.0, metavar="D", help="fabric time = wall time / D")
    ap.add_argument("-I", "--include", action="append", default=[], metavar="DIR", help="include path for a .p4 PROGRAM")
    ap.add_argument("--timestamp-unit", choices=sorted(TIMESTAMP_UNITS), default="us",
                    help="unit of the v1model timestamps (default us, as BMv2)")
    ap.add_argument("--queue-bytes-register", default=None, metavar="NAME",
                    help="program register (by port) the switch keeps the queued bytes in")
    ap.add_argument("--link-seed", type=int, default=0, help="seed of the link-loss generators")
    ap.add_argument("--backend", choices=native.CHOICES, default=None,
                    help="what runs the P4: python (the generated code), mypyc (it compiled to C, "
                         "built once per program and cached) or auto (mypyc if the program's module is "
                         "built, else python); default $P4SWITCH_BACKEND or auto")
    return ap


def parse_args(argv: list[str]) -> argparse.Namespace:
    # simple_switch_grpc splits generic options from target options with "--"; we know both.
    merged = [a for a in argv if a != "--"]
    args = build_parser().parse_args(merged)
    if args.program is None and not args.no_p4:
        build_parser().error("give a PROGRAM (.json or .p4) or --no-p4")
    if args.program is not None and args.no_p4:
        build_parser().error("--no-p4 and a PROGRAM exclude each other")
    return args


def load_program(device: Device, path: str, include_dirs: list[str]) -> None:
    """Install PROGRAM at start-up, with its P4Info when we can generate one."""
    p = Path(path)
    if p.suffix == ".p4":
        checked = compile_file(str(p), include_dirs=include_dirs)
    else:
        checked = check_device_config(p.read_bytes())
    device.set_program(LoadedProgram.from_checked(checked), generate_p4info(checked))


def setup_logging(args: argparse.Namespace) -> None:
    level = LOG_LEVELS[args.log_level]
    handlers: list[logging.Handler] = []
    if args.log_console:
        handlers.append(logging.StreamHandler(sys.stderr))
    if args.log_file:
        handlers.append(logging.FileHandler(args.log_file))
    if not handlers:  # like BMv2 without logging: quiet, but errors still reach the console
        handlers.append(logging.StreamHandler(sys.stderr))
        level = logging.ERROR
    logging.basicConfig(level=level, handlers=handlers, format="[%(asctime)s] [%(name)s] %(levelname)s: %(message)s")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    setup_logging(args)
    if args.backend:
        native.use_backend(args.backend)
    try:
        device = Device(device_id=args.device_id, cpu_port=args.cpu_port, priority_queues=args.priority_queues,
                        clock=DilatedClock(args.time_dilation), link_seed=args.link_seed,
                        timestamp_unit_ns=TIMESTAMP_UNITS[args.timestamp_unit],
                        queue_bytes_register=args.queue_bytes_register)
        port_specs = [parse_interface(s) for s in args.interface]
    except ValueError as e:
        print(f"p4switch: {e}", file=sys.stderr)
        return 2
    ports: dict[int, PacketSocketPort] = {}
    resources: list[Any] = []
    try:
        try:
            for num, ifname in port_specs:
                port = PacketSocketPort(ifname)
                ports[num] = port
                device.add_port(num, port, ifname)
                log.info("Adding interface %s as port %d", ifname, num)
            if args.pcap is not None:
                device.enable_pcap(args.pcap)
            if args.program is not None:
                load_program(device, args.program, args.include)
        except (ValueError, OSError) as e:
            print(f"p4switch: {e}", file=sys.stderr)
            return 1
        except Exception as e:  # CompileError and friends: their text is the message
            print(f"p4switch: cannot load {args.program}:\n{e}", file=sys.stderr)
            return 1
        loop = SwitchLoop(device, ports)
        share_the_gil_promptly()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: loop.stop())
        try:
            resources.append(ThriftServer(device, args.thrift_port))
            log.info("Thrift server was started on 127.0.0.1:%d", args.thrift_port)
            resources.append(P4RuntimeServer(device, args.grpc_server_addr).start())
            log.info("P4Runtime server listening on %s", args.grpc_server_addr)
        except (OSError, RuntimeError) as e:
            print(f"p4switch: cannot start servers: {e}", file=sys.stderr)
            return 1
        loop.run()
        log.info("stopping")
        return 0
    finally:
        for r in reversed(resources):
            _close(r)
        for p in ports.values():
            p.close()
        device.close()


def _close(resource: Any) -> None:
    """Stop a server: the Thrift server has close(), the P4Runtime server stop()."""
    if isinstance(resource, ThriftServer):
        resource.close()
    else:
        resource.stop()


if __name__ == "__main__":
    sys.exit(main())
