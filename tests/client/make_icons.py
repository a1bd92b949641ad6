"""Draws the web app's icons (client/icons/*.png) from client/favicon.svg's design with
Debian's Chromium: ``.venv/bin/python -m tests.client.make_icons``. The PNGs are committed
(source assets); run this again only when the design changes.

- ``icon-192.png``, ``icon-512.png`` ("any"): the favicon's card on the green table, a
  rounded square with transparent corners;
- ``icon-maskable-512.png`` ("maskable"): the green to every edge, the card within the
  middle 60% (the safe zone is the middle 80% circle: launchers crop the rest).
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import sync_playwright

from .conftest import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "client"
FELT = "radial-gradient(ellipse at 50% 20%, #1b8a45 0%, #0f6b32 55%, #08461f 100%)"


def page_html(size: int, card: float, radius: float) -> str:
    svg = (CLIENT / "favicon.svg").read_text()
    side = round(size * card)
    return (
        "<!doctype html><html><body style='margin:0;background:transparent'>"
        f"<div style='width:{size}px;height:{size}px;display:grid;place-items:center;"
        f"background:{FELT};border-radius:{radius * 100}%'>"
        f"<div style='width:{side}px;height:{side}px'>"
        + svg.replace("<svg ", f"<svg width='{side}' height='{side}' ", 1)
        + "</div></div></body></html>"
    )


def main() -> None:
    out = CLIENT / "icons"
    out.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for name, size, card, radius in (
            ("icon-192.png", 192, 0.86, 0.18),
            ("icon-512.png", 512, 0.86, 0.18),
            ("icon-maskable-512.png", 512, 0.6, 0.0),
        ):
            page = browser.new_page(viewport={"width": size, "height": size})
            page.set_content(page_html(size, card, radius))
            page.screenshot(path=str(out / name), omit_background=True)
            page.close()
            print(out / name)
        browser.close()


if __name__ == "__main__":
    main()
