"""plot_style.py - the look shared by the main job's plots (plot_netpipe.py,
plot_fft.py): one colour per implementation, line styles per variant, axes
in bytes and powers of two, and the marks for series that stopped early or
did not run.

Colours: Telemem blue, ARMCI over Telemem green, ARMCI-MPI red, MPI purple,
NetPIPE's NPopenmpi grey -- in every figure.  Variants: touched (the data
read after each transfer, NetPIPE's --touch) dashed, untouched solid;
Telemem's polling path (TELEMEM_DIRECT=never, the paper's design) with
filled circles in the full colour, the auto path (the direct path where
it is faster) with open triangles in a lighter shade, the direct path alone
with open squares.  Needs only the standard library; the helpers that draw
take matplotlib's axes.
"""

import math
import os
import statistics

# Implementation -> (colour, lighter shade for the auto/direct variants).
COLOURS = {
    "telemem": ("#1f5fb4", "#5fa8ff"),
    "armci-telemem": ("#1e8a1e", "#7ccf5f"),
    "armci-mpi": ("#c62828", "#ff8a80"),
    "mpi": ("#7b3fa8", "#c39be0"),
    "npopenmpi": ("#707070", "#b0b0b0"),
}
PATH_WORDS = {"am": "polling", "": "polling", "auto": "auto",
              "direct": "direct"}
PATH_TITLE = {
    "am": "Telemem on the polling path (TELEMEM_DIRECT=never)",
    "auto": "Telemem with auto (direct path where faster, "
            "TELEMEM_DIRECT=auto)",
    "direct": "Telemem on the direct path alone (TELEMEM_DIRECT=always)",
}
MARKERS = {"am": ("o", True), "auto": ("^", False), "direct": ("s", False)}
BAND_ALPHA = 0.13


def colour(impl, path="am"):
    pair = COLOURS.get(impl, ("black", "grey"))
    return pair[0] if path in ("am", "", None) else pair[1]


def line_style(impl, path="am", touch=False, width=1.6):
    """matplotlib keyword arguments of one series."""
    c = colour(impl, path)
    marker, filled = MARKERS.get(path or "am", ("o", True))
    return {"color": c, "linestyle": "--" if touch else "-",
            "linewidth": width, "marker": marker, "markersize": 4.2,
            "markerfacecolor": c if filled else "white",
            "markeredgecolor": c, "markeredgewidth": 1.0}


def size_text(n):
    """1 B, 64 B, 4 KiB, 8 MiB; NetPIPE's perturbed sizes (8 MiB - 3)
    read as the size they perturb."""
    for unit, text in ((1 << 20, "MiB"), (1024, "KiB")):
        if n >= unit * 0.995:
            v = n / unit
            return (f"{round(v)} {text}" if abs(v - round(v)) < 0.005 * v
                    else f"{v:.1f} {text}")
    return f"{n:.0f} B"


def tick_text(n):
    if n >= 1 << 20:
        return f"{n >> 20}M"
    if n >= 1024:
        return f"{n >> 10}K"
    return f"{n}"


def bin_of(n):
    """The power of two nearest to n (in log scale): its bin."""
    return 1 << round(math.log2(n)) if n > 0 else 0


def bins(points):
    """[(n, value)] -> [(2^k, median, low, high)] where k = round(log2 n):
    the perturbation sizes (n-3, n, n+3) and the 3*2^j sizes of NetPIPE's
    schedule fall into the bin of their nearest power of two; low..high
    is the spread of the values in the bin."""
    by = {}
    for n, v in points:
        if n > 0 and v is not None and v > 0:
            by.setdefault(bin_of(n), []).append(v)
    return [(b, statistics.median(vs), min(vs), max(vs))
            for b, vs in sorted(by.items())]


def size_axis(ax, lo, hi, label="message size (bytes)", pow2=False):
    """log2 x axis with ticks in B/K/M every 3 powers of two, or (pow2)
    2^k every 2 powers of two."""
    ax.set_xscale("log", base=2)
    step, first = (2, 0) if pow2 else (3, 0)
    ticks = [1 << k for k in range(first, 34, step)
             if lo / 1.5 <= (1 << k) <= hi * 1.05]
    if ticks and hi & (hi - 1) == 0 and hi >= 4 * ticks[-1]:
        ticks.append(hi)  # the largest size, when it is a power of two
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"$2^{{{t.bit_length() - 1}}}$" if pow2
                        else tick_text(t) for t in ticks])
    ax.set_xlim(lo / 1.4, hi * 1.4)
    ax.set_xlabel(label)


def ratio_axis(ax, values):
    """log2 y axis for ratios with ticks 1/8x .. 8x, room for the data."""
    vals = [v for v in values if v and v > 0]
    lo = min(vals + [0.5]) / 1.3
    hi = max(vals + [2.0]) * 1.3
    ax.set_yscale("log", base=2)
    ax.set_ylim(lo, hi)
    ticks = [2.0 ** k for k in range(-30, 31) if lo <= 2.0 ** k <= hi]
    while len(ticks) > 12:  # every 2nd, 4th... power of two, keeping 1
        step = 2 * round(math.log2(ticks[1] / ticks[0]))
        ticks = [t for t in ticks if round(math.log2(t)) % step == 0]
    ax.set_yticks(ticks)
    ax.set_yticklabels([(f"{t:g}" if t >= 1 else f"1/{1 / t:g}") + "×"
                        for t in ticks])
    ax.minorticks_off()
    ax.axhline(1.0, color="black", linewidth=1.1, zorder=1)


def draw_series(ax, pts, style, label, cut=None):
    """Median line with its spread band; pts = [(x, med, lo, hi)].  cut:
    text for a series that stopped early, drawn at its last point."""
    if not pts:
        return
    xs = [p[0] for p in pts]
    ax.fill_between(xs, [p[2] for p in pts], [p[3] for p in pts],
                    color=style["color"], alpha=BAND_ALPHA, linewidth=0)
    ax.plot(xs, [p[1] for p in pts], label=label, **style)
    if cut:
        ax.plot([xs[-1]], [pts[-1][1]], marker="X", markersize=11,
                color=style["color"], markeredgecolor="black",
                linestyle="none", zorder=5)
        ax.annotate(cut, (xs[-1], pts[-1][1]), xytext=(7, 0),
                    textcoords="offset points", fontsize=7.5,
                    color=style["color"], fontweight="bold",
                    va="center", ha="left")


def note_box(ax, lines, loc="lower right"):
    """Grey box in a corner listing series that did not run / were not
    compared."""
    if not lines:
        return
    x, ha = (0.98, "right") if "right" in loc else (0.02, "left")
    y, va = (0.03, "bottom") if "lower" in loc else (0.97, "top")
    ax.text(x, y, "\n".join(lines), transform=ax.transAxes, fontsize=7.5,
            ha=ha, va=va, color="#333333",
            bbox=dict(boxstyle="round,pad=0.35", facecolor="#fff3cd",
                      edgecolor="#c9a227", alpha=0.95), zorder=6)


def log_y(ax, fine=False):
    """log10 y axis labelled 0.01, 0.1, 1, 10, 100 (not 10^k); fine: also
    2 and 5 of each decade (for a range of a decade or two)."""
    import matplotlib.ticker as mt
    ax.set_yscale("log")
    if fine:
        ax.yaxis.set_major_locator(mt.LogLocator(base=10,
                                                 subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(mt.FuncFormatter(
        lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(mt.NullFormatter())
    ax.grid(True, which="minor", alpha=0.1)


def empty_note(ax, text):
    """A panel without data says so in its middle."""
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center",
            va="center", fontsize=10, color="#777777")


def load_text(loads, cores=None):
    """'load 2.1–3.3', and a warning when the 1-minute load was well above
    the cores (other jobs shared the CPUs: the figures say more about
    them).  The benchmark's own ranks poll, so they alone hold the load near
    the cores: only more than 1.5 runnable processes beyond that count."""
    if not loads:
        return "load not recorded"
    cores = cores or os.cpu_count() or 1
    text = f"load {min(loads):.1f}–{max(loads):.1f}"
    if max(loads) > cores + 1.5:
        text += f" on {cores} cores: busy, not representative"
    return text


def env_cores(dirs):
    """'cores: N' of the first env.txt of a bench script's directory."""
    for d in dirs:
        try:
            with open(os.path.join(d, "env.txt")) as f:
                for ln in f:
                    if ln.startswith("cores:"):
                        return int(ln.split(":")[1])
        except (OSError, ValueError):
            pass
    return None


def save_png(fig, path, dpi=110):
    """Write fig as a PNG of 256 colours (a third of the bytes of
    matplotlib's RGBA for these line plots, so the figures of a run can
    live in docs/results); plain savefig when PIL is missing."""
    import io
    try:
        from PIL import Image
    except ImportError:
        fig.savefig(path, dpi=dpi)
        return
    buf = io.BytesIO()
    fig.savefig(buf, dpi=dpi, format="png")
    buf.seek(0)
    with Image.open(buf) as im:
        im.convert("RGB").quantize(colors=256, dither=Image.Dither.NONE) \
            .save(path, optimize=True)
