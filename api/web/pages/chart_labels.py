"""Where the text of a server-drawn chart goes, so that no two labels cut each other or the plot's edge.

The server has no font metrics, so a text's box is estimated from its
characters with widths at or above those of DejaVu Sans (the widest of the
fonts the pages name), and the font's full line height: a box here holds the
text as a browser draws it. `place_labels` puts each point's label at the free
spot nearest the point (greedy, in a fixed order, so the same data always gives
the same chart); a label that found no spot is left out (None), for the chart
to name that point some other way (a short key and a legend).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Segment = tuple[float, float, float, float]  # x0, y0, x1, y1

ASCENT, DESCENT = 1.0, 0.3  # of the font size, above and below the baseline (DejaVu's are 0.93 and 0.24)
NARROW, WIDE = set("fijlrt.,:;!|'` "), set("mwMW@%")
PAD = 1.0  # kept free between two boxes


def text_width(text: str, size: float) -> float:
    """At least the width a browser gives `text` at `size` px in the pages' sans font."""
    ems = sum(0.42 if c in NARROW else 1.0 if c in WIDE else 0.8 if c.isupper() else 0.66 for c in text)
    return ems * size


@dataclass(frozen=True)
class Box:
    left: float
    top: float
    right: float
    bottom: float

    def cuts(self, other: Box) -> bool:
        return (self.left < other.right + PAD and other.left < self.right + PAD
                and self.top < other.bottom + PAD and other.top < self.bottom + PAD)  # fmt: skip

    def within(self, area: Box) -> bool:
        return (area.left <= self.left and self.right <= area.right
                and area.top <= self.top and self.bottom <= area.bottom)  # fmt: skip

    def distance(self, x: float, y: float) -> float:
        """From the point (x, y) to the nearest point of the box (0 inside)."""
        return math.hypot(x - min(max(x, self.left), self.right), y - min(max(y, self.top), self.bottom))

    def nearest(self, x: float, y: float) -> tuple[float, float]:
        return min(max(x, self.left), self.right), min(max(y, self.top), self.bottom)

    def crossed_by(self, segment: Segment) -> bool:
        """Whether the segment passes through the box (Liang-Barsky clipping)."""
        x0, y0, x1, y1 = segment
        low, high = 0.0, 1.0
        for step, room in ((x0 - x1, x0 - self.left), (x1 - x0, self.right - x0),
                           (y0 - y1, y0 - self.top), (y1 - y0, self.bottom - y0)):  # fmt: skip
            if step == 0:
                if room < 0:
                    return False
                continue
            t = room / step
            low, high = (max(low, t), high) if step < 0 else (low, min(high, t))
            if low > high:
                return False
        return True


def text_box(x: float, baseline: float, text: str, size: float, anchor: str = "start") -> Box:
    """The box of `text` drawn at (x, baseline) with this text-anchor."""
    width = text_width(text, size)
    left = x - {"start": 0.0, "middle": width / 2, "end": width}[anchor]
    return Box(left, baseline - ASCENT * size, left + width, baseline + DESCENT * size)


@dataclass(frozen=True)
class Placed:
    x: float  # the text's left end (text-anchor start)
    baseline: float
    leader: Segment | None  # from the marker's edge to the text, when it is not beside its point


def place_labels(points: list[tuple[float, float]], texts: list[str], *, size: float, area: Box,
                 obstacles: list[Box], marker: float, reach: float = 90.0) -> list[Placed | None]:
    """A spot for each text near its point, inside `area`, cutting no obstacle, no marker (a square of
    half-side `marker` on each point) and no text placed before it; None where there is none within
    `reach` of the point. A text set apart from its point gets a leader line, which crosses no other text
    and no other leader. Texts are placed in the order given."""
    markers = [Box(x - marker, y - marker, x + marker, y + marker) for x, y in points]
    room = _Room(area, list(obstacles) + markers, [], [], points)
    placed: list[Placed | None] = []
    for (x, y), text in zip(points, texts, strict=True):
        spot = _free_spot(x, y, text_width(text, size), size, room=room, marker=marker, reach=reach)
        if spot is None:
            placed.append(None)
            continue
        box, leader = spot
        room.texts.append(box)
        if leader:
            room.leaders.append(leader)
        placed.append(Placed(box.left, box.top + ASCENT * size, leader))
    return placed


@dataclass
class _Room:
    area: Box
    fixed: list[Box]  # the obstacles and the markers
    texts: list[Box]  # labels placed so far
    leaders: list[Segment]
    points: list[tuple[float, float]]

    def fits(self, box: Box, leader: Segment | None, x: float, y: float, marker: float) -> bool:
        if any(box.cuts(other) for other in self.texts) or any(box.cuts(other) for other in self.fixed):
            return False
        # Nearer its own point than any other (but those drawn on top of it), so no one reads it as theirs.
        own = box.distance(x, y)
        if any(box.distance(px, py) <= own for px, py in self.points if math.hypot(px - x, py - y) > 2 * marker):
            return False
        if any(box.crossed_by(line) for line in self.leaders):
            return False
        return leader is None or not any(
            other.crossed_by(leader) for other in self.texts) and not any(_cross(leader, line) for line in self.leaders)


def _leader(box: Box, x: float, y: float, marker: float) -> Segment | None:
    """A line from the marker's edge to the box, when the box is not right beside the point."""
    if box.distance(x, y) <= marker + 6:
        return None
    end_x, end_y = box.nearest(x, y)
    length = math.hypot(end_x - x, end_y - y)
    return x + (end_x - x) * marker / length, y + (end_y - y) * marker / length, end_x, end_y


def _cross(a: Segment, b: Segment) -> bool:
    """Whether two segments cross (touching ends count as crossing: leaders from one point may share it)."""
    def side(p: tuple[float, float], q: tuple[float, float], r: tuple[float, float]) -> float:
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    a0, a1, b0, b1 = (a[0], a[1]), (a[2], a[3]), (b[0], b[1]), (b[2], b[3])
    return side(a0, a1, b0) * side(a0, a1, b1) < 0 and side(b0, b1, a0) * side(b0, b1, a1) < 0


def _free_spot(x: float, y: float, width: float, size: float, *, room: _Room, marker: float,
               reach: float) -> tuple[Box, Segment | None] | None:
    """The free box nearest (x, y); beside the point a step up or down costs half a step sideways (so
    crowded labels stack in a column beside their points); right wins a tie, then left, above, below."""
    height = (ASCENT + DESCENT) * size
    gap, steps, rows = marker + 3, int(reach // 6) + 1, math.ceil(3 * reach / height) + 2
    spots: list[tuple[int, float, float]] = []  # (preference, left, top)
    for i in range(steps):  # beside the point: columns of spots a third of a line apart, 6 px further each
        for j in range(-rows, rows + 1):
            top = y - height / 2 + j * height / 3
            spots += [(0, x + gap + 6 * i, top), (1, x - gap - 6 * i - width, top)]
    for i in range(steps):  # above and below, centred on the point or leaning right or left of it
        for lean in (0.5, 0.1, 0.9):
            spots += [(2, x - width * lean, y - gap - height - 6 * i), (3, x - width * lean, y + gap + 6 * i)]
    area, scored = room.area, []
    for preference, left, top in spots:
        if left < area.left or left + width > area.right or top < area.top or top + height > area.bottom:
            continue
        dx, dy = max(left - x, 0.0, x - left - width), max(top - y, 0.0, y - top - height)
        if math.hypot(dx, dy) <= reach:
            cost = math.hypot(dx, dy / 2 if preference < 2 else dy)  # a column beside the point is cheaper
            scored.append((round(cost, 1), preference, abs(top + height / 2 - y), left, top))
    scored.sort()
    for *_, left, top in scored:
        box = Box(left, top, left + width, top + height)
        leader = _leader(box, x, y, marker)
        if room.fits(box, leader, x, y, marker):
            return box, leader
    return None
