"""Comparison table and PNG plots of workload runs (``fabricctl report``, the demo).

Plots: FCT CDF per run, slowdown percentiles per run, and a heat map of link utilisation
across the fabric (links x time) per run, so the effect of spraying versus ECMP on uplink
balance is visible at a glance.
"""

from __future__ import annotations

import csv
from pathlib import Path

from controller.results import RunResult
from controller.textfmt import table


def _pyplot():
    """matplotlib's pyplot on the file-only backend. Imported on first plot, not with this
    module: it takes about a second, and most ``fabricctl`` commands never draw."""
    import matplotlib

    matplotlib.use("Agg")  # files only; never needs a display
    import matplotlib.pyplot as plt

    return plt


def label(r: RunResult) -> str:
    return f"{r.workload}/{r.profile}"


def comparison_rows(runs: list[RunResult]) -> list[list[object]]:
    """[metric, value per run...] rows: the one definition of what a comparison shows."""
    rows: list[list[object]] = []

    def row(name: str, fn) -> None:
        rows.append([name, *(fn(r) for r in runs)])

    row("workload", lambda r: describe_params(r.params))  # runs of different sizes must not pass for alike
    row("completed", lambda r: "yes" if r.ok else "NO")
    row("completion time (us)", lambda r: round(r.completion_us, 1))
    row("aggregate goodput (Gb/s)", lambda r: round(r.goodput_gbps, 1))
    row("FCT p50 (us)", lambda r: round(r.fct_percentiles()["p50"], 1))
    row("FCT p99 (us)", lambda r: round(r.fct_percentiles()["p99"], 1))
    row("slowdown p50", lambda r: round(r.slowdown_percentiles()["p50"], 2))
    row("slowdown p99", lambda r: round(r.slowdown_percentiles()["p99"], 2))
    row("mean fabric link util", lambda r: f"{r.mean_link_util * 100:.1f}%")
    row("busiest link util", lambda r: f"{r.max_link_util * 100:.1f}%")
    row("retransmitted packets", lambda r: r.retransmissions)
    row("spurious retransmissions", lambda r: r.spurious_retransmissions)
    row("OOO packets reassembled", lambda r: r.ooo_reassembled)
    row("OOO packets dropped", lambda r: r.ooo_dropped)
    row("reorder peak (us)", lambda r: round(r.reorder_peak_us, 2))
    row("NAKs", lambda r: r.naks)
    row("CNPs", lambda r: r.cnps)
    row("PFC pauses sent", lambda r: r.pauses)
    row("PFC frames into NICs (rx_pause)", lambda r: r.nic_pause_frames_received)
    row("ECN marks", lambda r: r.ecn_marks)
    row("switch drops", lambda r: r.drops)
    row("kernel socket drops", lambda r: r.kernel_drops)
    row("INT reports", lambda r: r.int_reports)
    row("alerts: microburst/congestion/discards",
        lambda r: "/".join(str(sum(1 for a in r.alerts if a["kind"] == k)) for k in ("microburst", "congestion", "discards")))
    return rows


def source_lines(runs: list[RunResult]) -> list[str]:
    """Where the table's switch figures were read (``RunResult.sources``), rows grouped by
    source; the other rows are the NICs' statistics. Nothing for runs that did not record it."""
    by_row: dict[str, list[str]] = {}
    for r in runs:
        for row, source in r.sources.items():
            if source not in by_row.setdefault(row, []):
                by_row[row].append(source)
    rows: dict[str, list[str]] = {}
    for row, sources in by_row.items():
        rows.setdefault(" / ".join(sources), []).append(row)
    if not rows:
        return []
    return ([f"source of {', '.join(names)}: {source}" for source, names in rows.items()]
            + ["source of every other row: the NICs' statistics (management API)"])


def describe_params(params: dict) -> str:
    """What was run, in a few words: ``1024 KiB/host``, ``websearch load 0.5, 40 flows/host``,
    ``websearch load 0.5, 1000 us of arrivals``."""
    if params.get("kind") == "poisson":
        if params.get("duration_ns"):
            return f"{params.get('cdf')} load {params.get('load')}, {params['duration_ns'] / 1e3:g} us of arrivals"
        return f"{params.get('cdf')} load {params.get('load')}, {params.get('flows_per_host')} flows/host"
    size = params.get("size")
    if not isinstance(size, int):
        return "-"
    return f"{size // 1024} KiB/host" if size % 1024 == 0 else f"{size} B/host"


def comparison_table(runs: list[RunResult]) -> str:
    """One column per run, one row per metric (the demo's side-by-side view)."""
    return table(["metric", *(label(r) for r in runs)], comparison_rows(runs))


def write_csv(runs: list[RunResult], path: Path) -> Path:
    """The comparison as CSV (for spreadsheets and further plotting)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["metric", *(label(r) for r in runs)])
        w.writerows(comparison_rows(runs))
    return path


def plot(runs: list[RunResult], out_dir: Path) -> list[Path]:
    """Write the PNGs and comparison.csv; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = [write_csv(runs, out_dir / "comparison.csv")]
    plt = _pyplot()

    fig, ax = plt.subplots(figsize=(6, 4))
    for r in runs:
        fcts = sorted(m.fct_us for m in r.messages)
        if fcts:
            ax.step(fcts, [(i + 1) / len(fcts) for i in range(len(fcts))], where="post", label=label(r))
    ax.set_xlabel("flow completion time (us, fabric time)")
    ax.set_ylabel("CDF")
    ax.set_title("Flow completion times")
    ax.grid(alpha=0.3)
    ax.legend()
    paths.append(_save(fig, out_dir / "fct_cdf.png"))

    fig, ax = plt.subplots(figsize=(6, 4))
    names = ["p50", "p95", "p99"]
    width = 0.8 / max(1, len(runs))
    for i, r in enumerate(runs):
        pct = r.slowdown_percentiles()
        ax.bar([j + i * width for j in range(len(names))], [pct[n] for n in names], width, label=label(r))
    ax.set_xticks([j + width * (len(runs) - 1) / 2 for j in range(len(names))], names)
    ax.set_ylabel("slowdown (FCT / ideal)")
    ax.set_title("Slowdown percentiles")
    ax.legend()
    paths.append(_save(fig, out_dir / "slowdown.png"))

    with_links = [r for r in runs if r.links]
    if with_links:
        fig, axes = plt.subplots(1, len(with_links), figsize=(6 * len(with_links), 0.4 * len(with_links[0].links) + 2),
                                 squeeze=False)
        for ax, r in zip(axes[0], with_links):
            n = max(len(s.util) for s in r.links)
            grid = [s.util + [0.0] * (n - len(s.util)) for s in r.links]
            end = max((s.times_us[-1] for s in r.links if s.times_us), default=float(n)) or float(n)
            im = ax.imshow(grid, aspect="auto", vmin=0.0, vmax=1.0, cmap="viridis", interpolation="nearest",
                           extent=(0.0, end, len(r.links) - 0.5, -0.5))
            ax.set_yticks(range(len(r.links)), [s.name for s in r.links], fontsize=7)
            ax.set_xlabel("time (us, fabric time)")
            ax.set_title(f"link utilisation: {label(r)}")
            fig.colorbar(im, ax=ax, fraction=0.04)
        paths.append(_save(fig, out_dir / "link_util_heatmap.png"))

    with_q = [r for r in runs if any(r.queue_depth.values())]
    if with_q:
        fig, axes = plt.subplots(len(with_q), 1, figsize=(7, 3 * len(with_q)), squeeze=False)
        for ax, r in zip(axes[:, 0], with_q):
            for port, pts in sorted(r.queue_depth.items()):
                if pts:
                    ax.plot([t for t, _ in pts], [q for _, q in pts], ".", ms=3, label=port)
            ax.set_title(f"queue depth from INT: {label(r)}")
            ax.set_xlabel("time (us)")
            ax.set_ylabel("packets")
            ax.legend(fontsize=6, ncol=3)
        paths.append(_save(fig, out_dir / "queue_depth.png"))
    return paths


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    _pyplot().close(fig)
    return path
