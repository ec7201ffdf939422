"""Where the roofline's labels go (api/web/pages/chart_labels.py), checked on the estimated boxes; the real
boxes in Chromium are checked by tests/e2e/test_report_chart.py."""

from __future__ import annotations

import re

from api.web.pages.chart_labels import Box, Placed, place_labels, text_box, text_width
from api.web.pages.charts import HEIGHT, LABEL_FONT, WIDTH, RooflinePoint, rate_bars_svg, roofline_svg

AREA = Box(0, 0, 400, 200)


def boxes(placed: list[Placed | None], texts: list[str]) -> list[Box]:
    return [text_box(p.x, p.baseline, t, LABEL_FONT) for p, t in zip(placed, texts, strict=True) if p]


def test_a_lone_point_is_named_right_beside_it_without_a_leader() -> None:
    [spot] = place_labels([(100.0, 100.0)], ["b01"], size=13, area=AREA, obstacles=[], marker=6)
    assert spot is not None and spot.leader is None
    assert 100 < spot.x <= 110 and abs(spot.baseline - (100 + 13 * 0.35)) < 3  # right of it, on its level


def test_a_point_at_the_right_edge_is_named_on_its_left() -> None:
    [spot] = place_labels([(395.0, 100.0)], ["b01_long_name"], size=13, area=AREA, obstacles=[], marker=6)
    assert spot is not None and spot.x + text_width("b01_long_name", 13) <= 395 - 6


def test_points_on_one_spot_get_labels_apart_inside_the_area_with_leaders_that_cross_nothing() -> None:
    texts = [f"case_{n}" for n in range(8)]
    obstacle = Box(0, 0, 150, 20)
    placed = place_labels([(120.0, 60.0)] * 8, texts, size=13, area=AREA, obstacles=[obstacle], marker=6)
    found = boxes(placed, texts)
    assert len(found) >= 6  # most fit near the pile
    for i, box in enumerate(found):
        assert box.within(AREA) and not box.cuts(obstacle)
        assert not any(box.cuts(other) for other in found[i + 1:])
    spots = [p for p in placed if p]
    assert any(p.leader for p in spots)
    for p, own in zip(spots, found, strict=True):  # a leader ends at its own label and crosses no other
        assert p.leader is None or not any(box.crossed_by(p.leader) for box in found if box is not own)


def test_no_room_means_no_label_rather_than_an_overlap() -> None:
    tight = Box(0, 0, 60, 40)
    placed = place_labels([(30.0, 20.0)], ["a_name_wider_than_the_area"], size=13, area=tight, obstacles=[],
                          marker=6)  # fmt: skip
    assert placed == [None]


def test_a_label_is_never_nearer_another_point_than_its_own() -> None:
    points = [(100.0, 100.0), (135.0, 100.0)]  # the right-hand spot of the first is next to the second
    placed = place_labels(points, ["aaaaaaaa", "b"], size=13, area=AREA, obstacles=[], marker=6)
    first = placed[0]
    assert first is not None
    box = text_box(first.x, first.baseline, "aaaaaaaa", 13)
    assert box.distance(*points[0]) < box.distance(*points[1])


def test_the_roofline_numbers_what_it_cannot_name_and_keeps_every_label_in_the_plot() -> None:
    names = [f"p{n:02d}_causal_dense_bs64" for n in range(12)]
    svg = str(roofline_svg([RooflinePoint(name, 5.0 + n * 0.01, 50.0) for n, name in enumerate(names)],
                           peak_gflops=1200.0, peak_gbps=40.0, measured_gbps=None))  # fmt: skip
    drawn = re.findall(r'<text class="(lbl|key)" x="([\d.]+)" y="([\d.]+)">([^<]+)</text>', svg)
    named = {text for css, _, _, text in drawn if css == "lbl"}
    legend = re.findall(r'<tspan class="key">(\d+)</tspan> ([^<]+)</text>', svg)
    assert named and legend and named | {name for _, name in legend} == set(names)  # each named once, one way
    assert [key for key, _ in legend] == [str(n) for n in range(1, len(legend) + 1)]
    height = float(re.search(r'viewBox="0 0 \d+ ([\d.]+)"', svg).group(1))  # type: ignore[union-attr]
    assert height > HEIGHT  # the legend's rows are below the axis title
    placed = [text_box(float(x), float(y), text, LABEL_FONT) for _, x, y, text in drawn]
    for i, box in enumerate(placed):
        assert box.within(Box(62, 14, WIDTH - 18, HEIGHT - 42))
        assert not any(box.cuts(other) for other in placed[i + 1:])


def test_rate_bars_leave_room_for_long_case_names() -> None:
    names = ["p01_dsa_d512_mode0", "b03_batch_mode0", "a_case_name_far_too_long_for_any_column_of_the_chart_at_all"]
    svg = str(rate_bars_svg([(n, 10.0 * (i + 1)) for i, n in enumerate(names)], peak_gflops=None))
    labels = re.findall(r'<text class="lbl" x="([0-9.]+)" y="[0-9.]+" text-anchor="end">([^<]+)</text>', svg)
    assert [text for _, text in labels][:2] == names[:2]  # short enough: whole
    assert labels[2][1].endswith("…") and names[2].startswith(labels[2][1][:-1])  # shortened
    assert f"<title>{names[2]}: " in svg  # the bar's tooltip keeps the whole name
    for x, text in labels:  # right-aligned at x: each name starts inside the chart
        assert float(x) - text_width(text, LABEL_FONT) >= 0
