"""Pictures of simulation results (matplotlib, Agg backend; no screen needed)."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from mbcompose.dynamics.tolerances import PLOT_LOG_FLOOR, SINGULAR_FLOOR  # noqa: E402


#: up to this many coordinates the legend sits inside the plot; beyond, beside it in columns of LEGEND_ROWS
LEGEND_INSIDE, LEGEND_ROWS = 12, 30


def simulation_figure(result, title: str = ""):
    """Joint coordinates, joint velocities and the energy change (relative to the energy scale) against time.

    result : :class:`dynamics.simulation.SimulationResult`.
    """
    rows = 3 if result.closure is None else 4
    n = max(len(result.columns), len(result.velocity_columns))
    cols = 0 if n <= LEGEND_INSIDE else int(np.ceil(n / LEGEND_ROWS))
    fig, axes = plt.subplots(rows, 1, figsize=(8 + 2.0 * cols, max(2.3 * rows, 0.12 * min(n, LEGEND_ROWS)) + 0.6),
                             sharex=True, constrained_layout=True)
    t = result.t
    for i, name in enumerate(result.columns):
        axes[0].plot(t, result.q[:, i], label=name)
    axes[0].set_ylabel("q [rad or m]")
    for i, name in enumerate(result.velocity_columns):
        axes[1].plot(t, result.v[:, i], label=name)
    axes[1].set_ylabel("v [rad/s or m/s]")
    scale = max(result.energy_scale(), SINGULAR_FLOOR)
    axes[2].plot(t, (result.energy - result.energy[0]) / scale, color="k")
    axes[2].set_ylabel("(E - E0) / energy scale")
    axes[2].ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))
    if result.closure is not None:
        axes[3].semilogy(t, np.maximum(result.closure, PLOT_LOG_FLOOR), color="tab:red")
        axes[3].set_ylabel("loop closure error")
    axes[-1].set_xlabel("time [s]")
    for ax in axes[:2]:
        if not cols:
            ax.legend(fontsize=7, loc="upper right", ncol=2)
        else:   # many coordinates (a large robot): every name, beside the plot
            ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=cols, borderaxespad=0)
    for ax in axes:
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    return fig


def png_bytes(fig, dpi: int = 110) -> bytes:
    """Render a figure to PNG bytes and close it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    return buf.getvalue()
