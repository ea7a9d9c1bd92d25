"""Takes docs/images/jupyter-notebook.png: JupyterLab in headless Chromium, a notebook on the
acc kernel, its cells run in the browser.

    python3 -m pip install jupyterlab playwright   # Chromium from the system (apt install chromium)
    acc jupyter install --prefix /tmp/acc-kernel
    JUPYTER_PATH=/tmp/acc-kernel/share/jupyter python3 docs/images/jupyter-notebook.py OUT.png

CHROMIUM names the browser (default /usr/bin/chromium); Playwright's own download of a browser
is not needed.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from playwright.sync_api import sync_playwright

CELLS = [
    ("markdown", "# acc in JupyterLab\nOn the emulated device (its own memory): a 512 × 512 "
                 "grid filled by an OpenACC loop and its value at one point, the session's "
                 "variables, a timed reduction, and a mistake."),
    ("code", ":device emulated"),
    ("code", """let n = 512
let heat = zeros(n, n)
acc parallel loop collapse(2) copy(heat)
for i in 0..n {
    for j in 0..n {
        heat[i, j] = sin(i * 0.02) * cos(j * 0.03)
    }
}
print("filled", n * n, "cells")
heat[100, 200]"""),
    ("code", ":vars"),
    ("code", """:time let total = 0.0
acc parallel loop reduction(+: total)
for i in 0..n * n { total += heat[i / n, i % n] }"""),
    ("code", "print(haet[0, 0])"),
]


def notebook():
    cells = []
    for kind, text in CELLS:
        cell = {"cell_type": kind, "metadata": {}, "source": text}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.append(cell)
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"name": "acc", "display_name": "acc", "language": "acc"},
            "language_info": {"name": "acc", "file_extension": ".acc"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(out):
    folder = tempfile.mkdtemp(prefix="acc-lab-")
    with open(os.path.join(folder, "acc-tour.ipynb"), "w") as f:
        json.dump(notebook(), f)
    port = free_port()
    lab = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
         "--ip=127.0.0.1", "--allow-root", "--IdentityProvider.token=", "--ServerApp.password=",
         f"--ServerApp.root_dir={folder}", "--LabApp.news_url=None",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(folder, "lab.log"), "w"))
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/api/status", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 1040})
            # The document alone, without JupyterLab's side panels.
            page.goto(f"{base}/doc/tree/acc-tour.ipynb?reset")
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60000)
            # JupyterLab asks which kernel to start when the notebook names one it has not
            # started yet, and whether to show Jupyter's news.
            for button in ["button:has-text('Select')", "button:has-text('No')"]:
                try:
                    page.click(button, timeout=5000)
                except Exception:
                    pass
            # The kernel is up once the toolbar says so.
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                                   timeout=60000)
            # Shift-Enter on each cell in turn, as a person runs a notebook.
            page.click(".jp-Notebook .jp-Cell >> nth=0")
            page.keyboard.press("Escape")
            for i in range(len(CELLS)):
                # On the last cell, Shift-Enter would add a new one.
                page.keyboard.press("Shift+Enter" if i + 1 < len(CELLS) else "Control+Enter")
                page.wait_for_timeout(300)
            # Every code cell has a number once it ran.
            try:
                page.wait_for_function(
                    """() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
                             .every(p => /\\[\\d+\\]/.test(p.textContent))""", timeout=60000)
            except Exception:
                page.screenshot(path=out + ".failed.png")
                raise
            page.wait_for_timeout(1500)
            # Jupyter's offer of news comes a while after the page.
            for button in [".jp-Notification-Toast-Close", "button:has-text('No')"]:
                try:
                    page.click(button, timeout=2000)
                except Exception:
                    pass
            page.wait_for_timeout(500)
            # Nothing selected or hovered: the picture shows the notebook, not the mouse.
            page.mouse.move(1270, 1030)
            page.screenshot(path=out)
            browser.close()
    finally:
        lab.terminate()
        lab.wait(timeout=30)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/images/jupyter-notebook.png")
