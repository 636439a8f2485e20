#!/usr/bin/env python3
"""The chart of bench/RESULTS.md: every recorded tuning result as a bar.

  results_chart.py [--csv bench/results/gains.csv] [--out bench/results/gains.svg]
  results_chart.py --markdown      # the summary table of bench/RESULTS.md, on stdout

Reads the summary of the recorded runs (bench/results/gains.csv, one row
per measurement, every number copied from the run log or the raw files
beside it) and writes an SVG by hand (no plotting library): one horizontal
bar per row, in the CSV's order, its length the speedup (default time over
tuned time) on a logarithmic axis, coloured by what was measured (the
suite, a bundled example, a program nobody here wrote). A row that shipped
nothing is drawn as an empty bar at 1.00x and says so. The speedup is the
row's own `speedup` where the log states one, else default/tuned, else
1 / (1 + change_pct / 100); nothing else is computed.
"""
import argparse
import csv
import math
import os
import sys
from xml.sax.saxutils import escape

COLOURS = {"suite": "#3b6ea8", "example": "#5b9a55", "foreign": "#c0642f"}
KIND_NAMES = {"suite": "ciq's benchmark suite", "example": "bundled example", "foreign": "a program nobody here wrote"}
AXIS_MAX = 3.0  # the largest speedup recorded is 2.65x
TICKS = [1.0, 1.1, 1.2, 1.5, 2.0, 3.0]


def speedup(row):
    """The row's speedup (default over tuned, > 1 is faster), or None: nothing shipped or measured."""
    if row["speedup"]:
        return float(row["speedup"])
    if row["default"] and row["tuned"]:
        return float(row["default"]) / float(row["tuned"])
    if row["change_pct"]:
        return 1.0 / (1.0 + float(row["change_pct"]) / 100.0)
    return None


def read_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for n, row in enumerate(rows, start=2):
        if row["kind"] not in COLOURS:
            sys.exit(f"{path}:{n}: kind '{row['kind']}' is not one of {', '.join(COLOURS)}")
    return rows


def render(rows):
    label_w, plot_w, right_w, bar_h, gap, top, bottom = 500, 400, 130, 12, 4, 58, 46
    height = top + len(rows) * (bar_h + gap) + bottom
    width = label_w + plot_w + right_w
    log_max = math.log(AXIS_MAX)

    def x_of(value):
        return label_w + plot_w * max(0.0, math.log(max(value, 1.0))) / log_max

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="10" y="20" font-size="14" font-weight="bold">ciq: speedup of each recorded tuning result '
        f'(default time / tuned time; bench/RESULTS.md)</text>',
    ]
    legend_x = 10
    for kind, colour in COLOURS.items():
        out.append(f'<rect x="{legend_x}" y="30" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{legend_x + 14}" y="39">{escape(KIND_NAMES[kind])}</text>')
        legend_x += 14 + 7 * len(KIND_NAMES[kind]) + 20
    axis_bottom = top + len(rows) * (bar_h + gap)
    for t in TICKS:
        x = x_of(t)
        out.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{axis_bottom}" stroke="#ddd"/>')
        out.append(f'<text x="{x:.1f}" y="{axis_bottom + 14}" text-anchor="middle">{t:g}x</text>')
    out.append(f'<text x="{label_w + plot_w / 2:.0f}" y="{axis_bottom + 32}" text-anchor="middle">'
               f'speedup, logarithmic axis</text>')
    for i, row in enumerate(rows):
        y = top + i * (bar_h + gap)
        s = speedup(row)
        label = f"{row['subject']}, {row['card']}, {row['date']}"
        out.append(f'<text x="{label_w - 6}" y="{y + bar_h - 2}" text-anchor="end">{escape(label)}</text>')
        title = f"<title>{escape(label)}: {escape(row['measure'])}; shipped: {escape(row['shipped'])}</title>"
        colour = COLOURS[row["kind"]]
        if s is None or row["shipped"].startswith("nothing"):
            value = "nothing shipped" if s is None else f"{s:.3f}x, nothing shipped"
            out.append(f'<rect class="bar" data-row="{i}" x="{label_w}" y="{y}" width="2" height="{bar_h}" '
                       f'fill="white" stroke="{colour}">{title}</rect>')
            out.append(f'<text x="{label_w + 8}" y="{y + bar_h - 2}" fill="#666">{escape(value)}</text>')
        else:
            w = max(2.0, x_of(s) - label_w)
            out.append(f'<rect class="bar" data-row="{i}" x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" '
                       f'fill="{colour}">{title}</rect>')
            out.append(f'<text x="{label_w + w + 4:.1f}" y="{y + bar_h - 2}">{s:.3f}x</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def anchor(heading):
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    kept = "".join(c for c in heading.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def markdown(rows, log):
    """The summary table: one line per row, its gain, confidence, what shipped, the command and the log section."""
    lines = ["| program or kernel | card | date | gain (measure) | confidence | shipped | command | log |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        s = speedup(row)
        if s is None:
            gain = "none"
        elif row["default"] and row["tuned"]:
            gain = f"**{s:.3f}x** ({row['default']} -> {row['tuned']} {row['unit']}; {row['measure']})"
        elif row["change_pct"]:
            gain = f"**{s:.3f}x** ({row['change_pct']} %; {row['measure']})"
        else:
            gain = f"**{s:.3f}x** ({row['measure']})"
        cells = [row["subject"], row["card"], row["date"], gain, row["confidence"], row["shipped"],
                 f"`{row['command']}`", f"[log]({log}#{anchor(row['section'])})"]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", default=os.path.join(here, "results", "gains.csv"))
    parser.add_argument("--out", default=os.path.join(here, "results", "gains.svg"))
    parser.add_argument("--markdown", action="store_true", help="print the summary table instead of writing the SVG")
    parser.add_argument("--log", default="results/log-2026-12.md", help="the run log the table links to, from bench/")
    args = parser.parse_args()
    if args.markdown:
        sys.stdout.write(markdown(read_rows(args.csv), args.log))
        return
    svg = render(read_rows(args.csv))
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(svg)


if __name__ == "__main__":
    main()
