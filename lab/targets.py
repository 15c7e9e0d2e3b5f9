"""Start a switch target on given interfaces and push a P4 program to it, for either target.

Shared by the PTF harness, the Mininet switch node and the switch's end-to-end tests, so that
"which target, which command line, how to compile" lives in one place:

- ``ours``: ``p4switch-compile`` builds the P4Info and our device config; ``p4switch`` runs;
- ``bmv2``: ``p4c --target bmv2 --arch v1model`` builds P4Info and BMv2 JSON;
  ``simple_switch_grpc`` runs. Both are C++ programs that must be installed; if they are not,
  :class:`TargetUnavailable` says so.
The command lines are the same apart from the binary: ``-i N@ifname ... --device-id
--thrift-port -- --grpc-server-addr --cpu-port --priority-queues``.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from lab.p4rt_client import P4RuntimeClient
from p4rt.p4info import load_p4info

VENV_BIN = Path(sys.executable).parent
TARGETS = ("ours", "bmv2")


class TargetUnavailable(RuntimeError):
    pass


def free_tcp_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tool(name: str) -> str:
    """A program of the project's virtual environment, else of PATH; TargetUnavailable if neither."""
    local = VENV_BIN / name
    if local.exists():
        return str(local)
    found = shutil.which(name)
    if found is None:
        raise TargetUnavailable(f"{name} is not installed")
    return found


def bmv2_cli() -> str:
    """BMv2's runtime CLI (``simple_switch_CLI``, Thrift): queue rates and depths on BMv2."""
    try:
        return tool("simple_switch_CLI")
    except TargetUnavailable:
        raise TargetUnavailable("the bmv2 target needs simple_switch_CLI (BMv2); it is not installed") from None


@dataclass
class Compiled:
    p4info_path: Path
    device_config_path: Path


def compile_program(target: str, program: str | Path, out_dir: str | Path,
                    include_dirs: list[str] | None = None) -> Compiled:
    """Compile ``program`` for ``target`` into ``out_dir`` (P4Info text + device config)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = Path(program).stem
    p4info = out / f"{stem}.p4info.txtpb"
    config = out / f"{stem}.json"
    incs = [a for d in include_dirs or [] for a in ("-I", str(d))]
    if target == "ours":
        cmd = [tool("p4switch-compile"), str(program), *incs, "--p4runtime-files", str(p4info), "-o", str(config)]
    elif target == "bmv2":
        try:
            p4c = tool("p4c")
        except TargetUnavailable:
            raise TargetUnavailable("the bmv2 target needs p4c (the reference P4 compiler); it is not installed") from None
        cmd = [p4c, "--target", "bmv2", "--arch", "v1model", *incs, "--p4runtime-files", str(p4info),
               "-o", str(out), str(program)]
    else:
        raise ValueError(f"unknown target {target!r} (choose from {', '.join(TARGETS)})")
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"compiling {program} for {target} failed:\n{res.stdout}{res.stderr}")
    return Compiled(p4info, config)


def switch_command(target: str, interfaces: dict[int, str], device_id: int, grpc_addr: str, thrift_port: int,
                   cpu_port: int | None = None, priority_queues: int = 1, time_dilation: float = 1.0,
                   pcap_dir: str | None = None, program: str | None = None, log_console: bool = True,
                   backend: str | None = None) -> list[str]:
    """The command line that starts ``target`` as simple_switch_grpc would be started
    (``backend``: ours only, the one that runs the generated code, see ``p4switch --backend``)."""
    if target == "ours":
        binary = tool("p4switch")
    elif target == "bmv2":
        try:
            binary = tool("simple_switch_grpc")
        except TargetUnavailable:
            raise TargetUnavailable("the bmv2 target needs simple_switch_grpc (BMv2); it is not installed") from None
    else:
        raise ValueError(f"unknown target {target!r} (choose from {', '.join(TARGETS)})")
    cmd = [binary, program] if program else [binary, "--no-p4"]
    for port, ifname in sorted(interfaces.items()):
        cmd += ["-i", f"{port}@{ifname}"]
    cmd += ["--device-id", str(device_id), "--thrift-port", str(thrift_port)]
    if pcap_dir:
        cmd += ["--pcap", pcap_dir]
    if log_console:
        cmd += ["--log-console"]
    if target == "ours" and time_dilation != 1.0:
        cmd += ["--time-dilation", str(time_dilation)]
    elif time_dilation != 1.0:
        raise TargetUnavailable("BMv2 has no time dilation")
    if backend is not None:
        if target != "ours":
            raise TargetUnavailable("only our switch has backends")
        cmd += ["--backend", backend]
    cmd += ["--", "--grpc-server-addr", grpc_addr]
    if cpu_port is not None:
        cmd += ["--cpu-port", str(cpu_port)]
    if priority_queues != 1:
        cmd += ["--priority-queues", str(priority_queues)]
    return cmd


@dataclass
class SwitchProcess:
    """A running switch, stopped by PID (never by name)."""

    proc: subprocess.Popen
    grpc_addr: str
    thrift_port: int
    log_path: Path | None = None

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Until the gRPC port accepts connections; raises with the log if the switch died."""
        host, port = self.grpc_addr.rsplit(":", 1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the switch exited with status {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with socket.create_connection((host, int(port)), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"the switch did not open {self.grpc_addr} within {timeout:.0f} s:\n{self.log_tail()}")

    def cpu_seconds(self) -> float:
        """CPU time the switch process has used so far, all its threads (utime + stime of
        /proc/PID/stat): what forwarding costs the machine, whatever else runs on it."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def log_tail(self, lines: int = 40) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self, timeout: float = 10.0, sig: int = signal.SIGTERM) -> int | None:
        """Signal the switch (SIGTERM by default), wait, SIGKILL if it hangs; its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def start_switch(cmd: list[str], grpc_addr: str, thrift_port: int, log_path: str | Path) -> SwitchProcess:
    log = open(log_path, "wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    log.close()
    return SwitchProcess(proc, grpc_addr, thrift_port, Path(log_path))


def push_pipeline(grpc_addr: str, device_id: int, compiled: Compiled, election_id: int = 1) -> P4RuntimeClient:
    """Connect as primary controller and install the program; returns the connected client."""
    client = P4RuntimeClient(grpc_addr, device_id=device_id, election_id=election_id)
    client.set_pipeline(load_p4info(compiled.p4info_path), compiled.device_config_path.read_bytes())
    return client
