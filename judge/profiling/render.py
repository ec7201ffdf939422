"""The profile of the timed cases in a terminal (`opjudge judge`, `opjudge status`): one compact
table, a row per case and tool, with its headline figures or the reason the tool could not run."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.table import Table


def profile_table(profiles: list[dict[str, Any]]) -> Table | None:
    """None when the run has no profile (test runs, failed runs, no public timed case)."""
    if not profiles:
        return None
    table = Table(title="profile (untimed calls after timing, public cases)", title_justify="left",
                  header_style="bold", box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)  # fmt: skip
    table.add_column("case", no_wrap=True)
    table.add_column("tool", no_wrap=True)
    table.add_column("figures", overflow="fold")
    for profile in profiles:
        for section in profile.get("sections", []):
            if section.get("available"):
                figures = "; ".join(f"{m['name']} {m['value']}{(' ' + m['unit']) if m.get('unit') else ''}"
                                    for m in section.get("metrics", [])[:4])  # fmt: skip
            else:
                figures = section.get("reason", "")
            table.add_row(str(profile.get("case", "")), str(section.get("tool", "")), figures)
    return table
