"""The screenshot of a review page in docs/: the first leaking generation of the first corpus, its
first real value looked up, in headless Chromium.

    .venv/bin/python tools/review_screenshot.py \
        results/review/tab/known/direct/index.html docs/review_page.png
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.common.by import By


def wait_until(condition, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit("the page did not show its corpus list")
        time.sleep(0.1)


def main(page: Path, out: Path) -> None:
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1500,1250"):
        options.add_argument(argument)
    browser = webdriver.Chrome(service=webdriver.ChromeService(shutil.which("chromedriver")), options=options)
    try:
        browser.get(page.resolve().as_uri())
        wait_until(lambda: browser.execute_script("return document.body.dataset.ready"))
        browser.find_element(By.ID, "only-leaking").click()
        rows = browser.find_elements(By.CSS_SELECTOR, "#generations tbody tr")
        if rows:
            rows[0].click()
            wait_until(lambda: browser.find_element(By.ID, "doc-text").text)
            marks = browser.find_elements(By.CSS_SELECTOR, "#doc-text mark.hl-real, #doc-text mark.hl-near")
            if marks:
                browser.execute_script("arguments[0].click()", marks[0])
                wait_until(lambda: browser.find_element(By.ID, "lookup-results").text)
        browser.execute_script("window.scrollTo(0, 0)")
        out.parent.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(out))
    finally:
        browser.quit()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
