"""Where a figure's texts are drawn, read from its SVG: the tests' check that no name runs past a figure's edge."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from reports.figures.layout import SMALL_PT, _text_inches


def past_the_edge(svg: bytes) -> list[str]:
    """The texts of ``svg`` drawn across (in part past) its left or right edge, as wide as the layout measures them
    (``_text_inches``); turned texts (the y-axis labels) aside."""
    root = ET.fromstring(svg)
    width = float(str(root.get("width")).removesuffix("pt"))  # points, the SVG's unit
    past = []
    for node in root.iter():
        if not node.tag.endswith("text") or not node.text:
            continue
        style, transform = node.get("style", ""), node.get("transform", "")
        turned = re.search(r"rotate\((-?[\d.]+)", transform)
        if turned and float(turned.group(1)) % 180:
            continue
        found = re.search(r"font-size: ([\d.]+)px", style)
        anchor = re.search(r"text-anchor: (\w+)", style)
        x = node.get("x") or re.search(r"translate\((-?[\d.]+)", transform).group(1)
        wide = _text_inches([node.text], float(found.group(1)) if found else SMALL_PT) * 72
        left = float(x) - {"start": 0.0, "middle": wide / 2, "end": wide}[anchor.group(1) if anchor else "start"]
        if left < 0 or left + wide > width:
            past.append(node.text)
    return past
