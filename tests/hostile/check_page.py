"""report.html of hostile folders in a real browser (headless Chromium through chromedriver, as
tests/browser/check_page.py drives it): the page's own script ran (one arm row per results.csv
row, one host column per folder), every hostile string is shown as text, and nothing a string
injected ran (no `window.pwned`, the title unchanged, no console error such as a failed
`<img src=x>`).

    python3 tests/hostile/check_page.py REPORT.html ROWS HOSTS TEXT...

Driven by tests/hostile.rs: ROWS arm rows and HOSTS hosts are expected; each TEXT must occur
in the page's text.
"""

import os
import sys

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

page, rows, hosts, texts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


options = Options()
for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1500,1100"):
    options.add_argument(argument)
options.binary_location = os.environ.get("SERBENCH_CHROMIUM", "/usr/bin/chromium")
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(service=Service(os.environ.get("SERBENCH_CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
try:
    driver.get("file://" + os.path.abspath(page))
    check(driver.execute_script("return window.pwned === undefined"), f"an injected script ran: window.pwned = {driver.execute_script('return window.pwned')!r}")
    check(driver.title == "serbench report", f"the title is {driver.title!r}")
    shown = len(driver.find_elements(By.CSS_SELECTOR, "#arm-table tbody tr"))
    check(shown == rows, f"{shown} arm rows shown, the CSVs have {rows} (the page's script did not run?)")
    columns = len(driver.find_elements(By.CSS_SELECTOR, "#host-table tr:first-child > *")) - 1
    check(columns == hosts, f"{columns} host columns, {hosts} folders reported")
    body = driver.execute_script("return document.body.innerText")
    for text in texts:
        check(text in body, f"{text!r} is not shown as text")
    check(not driver.find_elements(By.CSS_SELECTOR, "img, iframe, object, embed"), "an element a string injected")
    # A failed load (an injected <img src=x>) or a script error; not how a chart draws an
    # interval (a "rendering" error is the chart code's).
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE" and entry["source"] != "rendering"]
    check(not errors, f"console errors: {errors}")
finally:
    driver.quit()

if failures:
    for failure in failures:
        print("FAIL:", failure)
    sys.exit(1)
print(f"report.html: {rows} rows, {hosts} hosts, {len(texts)} hostile texts shown as text")
