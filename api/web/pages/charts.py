"""Charts of the submission report as inline SVG, drawn on the server (no chart library, no script).

- `roofline_svg`: each timed case's achieved GFLOP/s against its arithmetic
  intensity (FLOP per byte of least traffic), under the device's compute roof
  and, when the worker recorded it, its bandwidth roof; without one, the best
  bandwidth measured in the run is drawn as an empirical roof and labelled so.
- `rate_bars_svg`: when the run recorded no memory traffic, each case's
  achieved GFLOP/s as a bar on a log scale against the compute roof.
- `history_svg`: the team's score on this problem across its submissions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from markupsafe import Markup, escape

from api.web.pages.chart_labels import Box, place_labels, text_box, text_width

WIDTH, HEIGHT = 640, 300
LEFT, RIGHT, TOP, BOTTOM = 62, 18, 14, 42
FONT, LABEL_FONT = 12, 13  # px: a chart's text, and a point's name (.chart text and .chart .lbl in the CSS)
MARKER = 5  # a point's radius
LEGEND_ROW = 17  # the roofline's legend of numbered points: its rows' height


@dataclass(frozen=True)
class RooflinePoint:
    label: str  # the case's name
    intensity: float  # FLOP per byte
    gflops: float  # achieved GFLOP/s at the median time


@dataclass(frozen=True)
class HistoryPoint:
    submission_id: int
    score: float | None  # None counts as 0 (a failed submission has no score)
    accepted: bool
    current: bool  # the submission the report is about


class _LogScale:
    def __init__(self, low: float, high: float, start: float, end: float) -> None:
        self.low, self.high = math.floor(math.log10(low)), math.ceil(math.log10(high))
        if self.high == self.low:
            self.high += 1
        self.start, self.end = start, end

    def __call__(self, value: float) -> float:
        frac = (math.log10(value) - self.low) / (self.high - self.low)
        return self.start + frac * (self.end - self.start)

    def decades(self) -> list[float]:
        return [10.0**e for e in range(self.low, self.high + 1)]


def _num(value: float) -> str:
    """Axis labels: 1e-3, 0.01, 0.1, 1, 10, 100, 1k, 10k, 1M, 1G, 1e12 (at most five characters)."""
    if value < 0.01 or value >= 1e12:
        return f"{value:.0e}".replace("e-0", "e-").replace("e+", "e")
    if value >= 1e9:
        return f"{value / 1e9:g}G"
    if value >= 1e6:
        return f"{value / 1e6:g}M"
    if value >= 1e3:
        return f"{value / 1e3:g}k"
    return f"{value:g}"


def _svg(body: list[str], label: str, height: int = HEIGHT) -> Markup:
    head = (f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(label)}" '
            'xmlns="http://www.w3.org/2000/svg">')  # fmt: skip
    return Markup(head + "".join(body) + "</svg>")


def roofline_svg(points: list[RooflinePoint], *, peak_gflops: float | None, peak_gbps: float | None,
                 measured_gbps: float | None) -> Markup:
    """The roofline chart; `measured_gbps` stands in for the bandwidth roof when `peak_gbps` is unknown."""
    points = [p for p in points if p.intensity > 0 and p.gflops > 0]
    if not points:
        return Markup("")
    xs = [p.intensity for p in points]
    ys = [p.gflops for p in points] + ([peak_gflops] if peak_gflops else [])
    roof_bw = peak_gbps or measured_gbps
    if peak_gflops and roof_bw:
        xs.append(peak_gflops / roof_bw)  # the ridge point: both roofs and their corner stay inside the plot
    x = _LogScale(min(xs) / 4, max(xs) * 4, LEFT, WIDTH - RIGHT)
    y = _LogScale(min(ys) / 4, max(ys) * 2, HEIGHT - BOTTOM, TOP)
    body = _axes(x, y, "arithmetic intensity (FLOP/byte)", "GFLOP/s")
    roof_labels: list[Box] = []  # the point labels keep clear of these
    x0, x1 = 10.0**x.low, 10.0**x.high
    if roof_bw:
        # The bandwidth roof y = bw * intensity, clipped by the compute roof when there is one.
        ridge = (peak_gflops / roof_bw) if peak_gflops else x1
        end = min(ridge, x1)
        css = "roof" if peak_gbps else "roof-measured"
        y_start = max(roof_bw * x0, 10.0**y.low)
        x_start = y_start / roof_bw
        body.append(f'<line class="{css}" x1="{x(x_start):.1f}" y1="{y(y_start):.1f}" '
                    f'x2="{x(end):.1f}" y2="{y(min(roof_bw * end, 10.0**y.high)):.1f}"/>')  # fmt: skip
        what = f"{'peak bandwidth' if peak_gbps else 'best measured bandwidth'}: {roof_bw:.1f} GB/s"
        body.append(f'<text class="roof-lbl" x="{LEFT + 6}" y="{TOP + 12}">{what}</text>')
        roof_labels.append(text_box(LEFT + 6, TOP + 12, what, FONT))
    if peak_gflops:
        start = (peak_gflops / roof_bw) if roof_bw else x0
        body.append(f'<line class="roof" x1="{x(max(start, x0)):.1f}" y1="{y(peak_gflops):.1f}" '
                    f'x2="{x(x1):.1f}" y2="{y(peak_gflops):.1f}"/>')  # fmt: skip
        what = f"peak {_num(peak_gflops)} GFLOP/s"
        body.append(f'<text class="roof-lbl" x="{WIDTH - RIGHT - 4}" y="{y(peak_gflops) - 6:.1f}" '
                    f'text-anchor="end">{what}</text>')  # fmt: skip
        roof_labels.append(text_box(WIDTH - RIGHT - 4, y(peak_gflops) - 6, what, FONT, "end"))
    at = [(x(p.intensity), y(p.gflops)) for p in points]
    for i, (p, (px, py)) in enumerate(zip(points, at, strict=True)):
        share = f", {100 * p.gflops / peak_gflops:.2g}% of peak" if peak_gflops else ""
        tip = f"{p.label}: {p.gflops:.3g} GFLOP/s at {p.intensity:.3g} FLOP/byte{share}"
        body.append(f'<circle class="pt{" alt" if i % 2 else ""}" cx="{px:.1f}" cy="{py:.1f}" r="{MARKER}">'
                    f'<title>{escape(tip)}</title></circle>')  # fmt: skip
    labels, (legend, rows) = _point_labels(at, [p.label for p in points], roof_labels)
    return _svg(body + labels + legend, "roofline: achieved GFLOP/s per case against the device's roofs",
                height=HEIGHT + (LEGEND_ROW * rows + 4 if rows else 0))


def _point_labels(at: list[tuple[float, float]], names: list[str],
                  obstacles: list[Box]) -> tuple[list[str], tuple[list[str], int]]:
    """Each point's name beside it (a leader line when it had to move off); where names crowd too much
    for one to fit, a number instead, and a legend of those numbers below the axis title."""
    area = Box(LEFT + 2, TOP, WIDTH - RIGHT, HEIGHT - BOTTOM - 2)
    named = place_labels(at, names, size=LABEL_FONT, area=area, obstacles=obstacles, marker=MARKER + 1, reach=40)
    keyed = [i for i, spot in enumerate(named) if spot is None]
    keys = {i: str(n) for n, i in enumerate(keyed, start=1)}
    taken = obstacles + [text_box(s.x, s.baseline, names[i], LABEL_FONT) for i, s in enumerate(named) if s]
    key_spots = place_labels([at[i] for i in keyed], [keys[i] for i in keyed], size=LABEL_FONT, area=area,
                             obstacles=taken, marker=MARKER + 1, reach=90)  # fmt: skip
    body = []
    for i, spot in [*enumerate(named), *zip(keyed, key_spots, strict=True)]:
        if spot is None:  # not even a number fits (points piled on one spot): the legend still names it
            continue
        if spot.leader:
            body.append('<line class="leader" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>'.format(*spot.leader))
        css, text = ("key", keys[i]) if i in keys else ("lbl", names[i])
        body.append(f'<text class="{css}" x="{spot.x:.1f}" y="{spot.baseline:.1f}">{escape(text)}</text>')
    return body, _legend([(keys[i], names[i]) for i in keyed])


def _legend(entries: list[tuple[str, str]]) -> tuple[list[str], int]:
    """Rows of "number name" under the axis title, in as many columns as the longest entry leaves room
    for, and how many rows; a name wider than the whole plot is cut short (its point's tooltip has it)."""
    if not entries:
        return [], 0
    span = WIDTH - LEFT - RIGHT
    column = min(span, max(120.0, max(text_width(f"{key} {name}", FONT) for key, name in entries) + 18))
    columns = int(span // column)
    body = []
    for n, (key, name) in enumerate(entries):
        row, col = divmod(n, columns)
        name = _fit(name, FONT, span - text_width(f"{key} ", FONT))  # widths add up by character
        body.append(f'<text class="legend" x="{LEFT + col * column:.1f}" y="{HEIGHT + 12 + row * LEGEND_ROW}">'
                    f'<tspan class="key">{escape(key)}</tspan> {escape(name)}</text>')  # fmt: skip
    return body, math.ceil(len(entries) / columns)


def rate_bars_svg(rates: list[tuple[str, float]], *, peak_gflops: float | None) -> Markup:
    """Achieved GFLOP/s per case (name, rate) as bars on a log scale, with the device's peak as a line."""
    rates = [(name, rate) for name, rate in rates if rate > 0]
    if not rates:
        return Markup("")
    # The names' column is as wide as the widest name (a case name such as p01_dsa_d512_mode0 was cut
    # by a fixed 118), up to a third of the chart; a longer name is shortened, its bar's tooltip whole.
    widest = WIDTH / 3
    shown = [_fit(name, LABEL_FONT, widest - 8) for name, _ in rates]
    label_w = max(118.0, min(widest, max(text_width(name, LABEL_FONT) for name in shown) + 12))
    row_h = max(34, min(60, 200 // len(rates)))
    height = TOP + 10 + BOTTOM + row_h * len(rates)
    top_value = max([r for _, r in rates] + ([peak_gflops] if peak_gflops else [])) * 2
    x = _LogScale(min(r for _, r in rates) / 4, top_value, label_w, WIDTH - RIGHT)
    body = []
    for value in x.decades():
        px = x(value)
        body.append(f'<line class="grid" x1="{px:.1f}" y1="{TOP}" x2="{px:.1f}" y2="{height - BOTTOM}"/>')
        body.append(f'<text x="{px:.1f}" y="{height - BOTTOM + 16}" text-anchor="middle">{_num(value)}</text>')
    for i, (name, rate) in enumerate(rates):
        y = TOP + 10 + i * row_h + 6
        share = f" · {100 * rate / peak_gflops:.2g}% of peak" if peak_gflops else ""
        middle = y + (row_h - 14) / 2 + 4
        body.append(f'<text class="lbl" x="{label_w - 8:.1f}" y="{middle:.1f}" '
                    f'text-anchor="end">{escape(shown[i])}</text>')
        body.append(f'<rect class="pt{" alt" if i % 2 else ""}" x="{label_w}" y="{y}" width="{x(rate) - label_w:.1f}" '
                    f'height="{row_h - 14}" rx="3"><title>{escape(name)}: {rate:.3g} GFLOP/s{share}</title></rect>')
        body.append(f'<text x="{x(rate) + 6:.1f}" y="{middle:.1f}">{rate:.3g}{share}</text>')  # fmt: skip
    if peak_gflops:
        px = x(peak_gflops)
        body.append(f'<line class="roof" x1="{px:.1f}" y1="{TOP - 4}" x2="{px:.1f}" y2="{height - BOTTOM}"/>')
        body.append(f'<text x="{px - 4:.1f}" y="{TOP + 4}" text-anchor="end">peak {_num(peak_gflops)}</text>')
    body.append(f'<text x="{(label_w + WIDTH - RIGHT) / 2:.0f}" y="{height - 6}" text-anchor="middle">GFLOP/s '
                '(log scale)</text>')  # fmt: skip
    head = (f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" role="img" '
            'aria-label="achieved GFLOP/s per case against the device peak" xmlns="http://www.w3.org/2000/svg">')
    return Markup(head + "".join(body) + "</svg>")


def _fit(text: str, size: float, width: float) -> str:
    """`text`, shortened with an ellipsis until it is at most `width` px wide at `size` px."""
    while len(text) > 1 and text_width(text, size) > width:
        text = text[:-2] + "…"
    return text


def _axes(x: _LogScale, y: _LogScale, x_label: str, y_label: str) -> list[str]:
    """Grid, ticks and titles of a log-log plot. A decade's tick is labelled only as often as the labels
    keep apart; the x ticks' labels sit low enough to clear the lowest y tick's label in the corner."""
    body = []
    decades = x.decades()
    room = (WIDTH - LEFT - RIGHT) / max(1, len(decades) - 1)
    every = math.ceil(max(text_width(_num(v), FONT) for v in decades) / max(1.0, room - 6))
    for n, value in enumerate(decades):
        px = x(value)
        body.append(f'<line class="grid" x1="{px:.1f}" y1="{TOP}" x2="{px:.1f}" y2="{HEIGHT - BOTTOM}"/>')
        if n % every == 0:
            body.append(f'<text x="{px:.1f}" y="{HEIGHT - BOTTOM + 19}" text-anchor="middle">{_num(value)}</text>')
    decades = y.decades()
    every = math.ceil(FONT * 1.4 / ((HEIGHT - TOP - BOTTOM) / max(1, len(decades) - 1)))
    for n, value in enumerate(decades):
        py = y(value)
        body.append(f'<line class="grid" x1="{LEFT}" y1="{py:.1f}" x2="{WIDTH - RIGHT}" y2="{py:.1f}"/>')
        if n % every == 0:
            body.append(f'<text x="{LEFT - 8}" y="{py + 4:.1f}" text-anchor="end">{_num(value)}</text>')
    body.append(f'<line class="axis" x1="{LEFT}" y1="{HEIGHT - BOTTOM}" x2="{WIDTH - RIGHT}" y2="{HEIGHT - BOTTOM}"/>')
    body.append(f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{HEIGHT - BOTTOM}"/>')
    body.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2:.0f}" y="{HEIGHT - 4}" text-anchor="middle">{x_label}</text>')
    body.append(f'<text x="14" y="{(TOP + HEIGHT - BOTTOM) / 2:.0f}" text-anchor="middle" '
                f'transform="rotate(-90 14 {(TOP + HEIGHT - BOTTOM) / 2:.0f})">{y_label}</text>')  # fmt: skip
    return body


def history_svg(points: list[HistoryPoint]) -> Markup:
    """Score per judged submission, oldest first; failed submissions sit at 0 in red."""
    if not points:
        return Markup("")
    top = max([100.0] + [p.score or 0.0 for p in points]) * 1.1
    n = len(points)
    span = WIDTH - LEFT - RIGHT

    def px(i: int) -> float:
        return LEFT + (span / 2 if n == 1 else 12 + i * (span - 24) / (n - 1))

    def py(score: float) -> float:
        return HEIGHT - BOTTOM - (score / top) * (HEIGHT - TOP - BOTTOM)

    body = []
    step = 25 if top <= 150 else 50
    for tick in range(0, int(top) + 1, step):
        body.append(f'<line class="grid" x1="{LEFT}" y1="{py(tick):.1f}" x2="{WIDTH - RIGHT}" y2="{py(tick):.1f}"/>')
        body.append(f'<text x="{LEFT - 8}" y="{py(tick) + 4:.1f}" text-anchor="end">{tick}</text>')
    body.append(f'<line class="axis" x1="{LEFT}" y1="{HEIGHT - BOTTOM}" x2="{WIDTH - RIGHT}" y2="{HEIGHT - BOTTOM}"/>')
    line = " ".join(f"{px(i):.1f},{py(p.score or 0.0):.1f}" for i, p in enumerate(points))
    if n > 1:
        body.append(f'<polyline class="line" points="{line}"/>')
    label_every = max(1, math.ceil(n / 12))
    for i, p in enumerate(points):
        css = "current" if p.current else ("" if p.accepted else "fail")
        score = f"{p.score or 0.0:.2f}" + ("" if p.accepted else " (failed)")
        radius = 6 if p.current else 4.5
        body.append(f'<circle class="pt {css}" cx="{px(i):.1f}" cy="{py(p.score or 0.0):.1f}" r="{radius}">'
                    f'<title>#{p.submission_id}: {score}</title></circle>')  # fmt: skip
        if i % label_every == 0 or p.current:
            body.append(f'<text x="{px(i):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">'
                        f'#{p.submission_id}</text>')  # fmt: skip
    body.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2:.0f}" y="{HEIGHT - 6}" text-anchor="middle">submission</text>')
    body.append(f'<text x="14" y="{(TOP + HEIGHT - BOTTOM) / 2:.0f}" text-anchor="middle" '
                f'transform="rotate(-90 14 {(TOP + HEIGHT - BOTTOM) / 2:.0f})">score vs baseline</text>')  # fmt: skip
    return _svg(body, "the team's score on this problem across its submissions")
