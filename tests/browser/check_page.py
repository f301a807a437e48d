"""report.html in a real browser (headless Chromium through chromedriver): loads from file://
with no console error, every number on the page agrees with the CSVs it was made from, a filter
changes the rows shown, a sort orders them, the pair ratio equals `serbench ratio --json`'s, and the calculator equals a
computation from results.csv and sizes.csv. Writes a screenshot of each view.

    python3 tests/browser/check_page.py REPORT.html SCREENSHOTS HOST_FOLDER...

Driven by tests/browser.rs; HOST_FOLDER are the folders the report was made from, in its order.
"""

import csv
import json
import math
import os
import re
import subprocess
import sys

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

page, screenshots, folders = sys.argv[1], sys.argv[2], sys.argv[3:]
os.makedirs(screenshots, exist_ok=True)
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def close(a, b, tolerance=1e-9):
    return abs(a - b) <= tolerance * max(1.0, abs(a), abs(b))


rows = [row for folder in folders for row in csv.DictReader(open(os.path.join(folder, "results.csv")))]
sizes = list(csv.DictReader(open(os.path.join(folders[0], "sizes.csv"))))

options = Options()
for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1500,1100"):
    options.add_argument(argument)
options.binary_location = os.environ.get("SERBENCH_CHROMIUM", "/usr/bin/chromium")
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(service=Service(os.environ.get("SERBENCH_CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
try:
    driver.get("file://" + os.path.abspath(page))
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    check(not errors, f"console errors: {errors}")
    driver.save_screenshot(os.path.join(screenshots, "overview.png"))

    body_rows = lambda: driver.find_elements(By.CSS_SELECTOR, "#arm-table tbody tr")
    check(len(body_rows()) == len(rows), f"{len(body_rows())} rows shown unfiltered, the CSVs have {len(rows)}")

    # Every measured arm's time on the page is its CSV's (per record).
    shown = sorted(float(row.get_attribute("data-ns")) for row in body_rows() if row.get_attribute("data-ns"))
    expected = sorted(float(row["mean_ns"]) / int(row["records"]) for row in rows if row["status"] == "ok" and row["mean_ns"])
    check(len(shown) == len(expected) and all(close(a, b, 1e-9) for a, b in zip(shown, expected)),
          "the times per record shown differ from results.csv")

    # And every throughput is its CSV's mb_per_s.
    throughputs = sorted(float(row.get_attribute("data-mbps")) for row in body_rows() if row.get_attribute("data-mbps"))
    expected = sorted(float(row["mb_per_s"]) for row in rows if row["status"] == "ok" and row["mb_per_s"])
    check(len(throughputs) == len(expected) and all(close(a, b) for a, b in zip(throughputs, expected)),
          "the MB/s shown differ from results.csv")

    # The rank column shows the ranks serbench computed (report.json, beside the page), not its own.
    model = json.load(open(os.path.join(os.path.dirname(page), "report.json")))
    headers = [th.text for th in driver.find_elements(By.CSS_SELECTOR, "#arm-table th")]
    rank_column = headers.index("rank")
    shown = sorted(row.find_elements(By.TAG_NAME, "td")[rank_column].text for row in body_rows())
    expected = sorted(arm["rank"]["text"] if arm["rank"] else "-" for arm in model["arms"])
    check(shown == expected, f"the ranks shown differ from report.json's: {shown[:8]} against {expected[:8]}")
    check(all(re.fullmatch(r"=?[1-9][0-9]*|-", text) for text in shown), f"a rank is not =N, N or -: {set(shown)}")

    # The answer opens the page: one row per payload of report.json's answers (as Rust computed
    # them), and one scatter per payload whose dots are the first folder's round trips (results.csv)
    # at their bytes per record (sizes.csv); the ringed dots are the front: none has a dot both
    # smaller and no slower, and every other dot has one no larger and no slower.
    answers = model["answers"]
    answer_rows = driver.find_elements(By.CSS_SELECTOR, "#answer-table tr[data-payload]")
    check([row.get_attribute("data-payload") for row in answer_rows] == [a["payload"] for a in answers],
          f"the answer's rows differ from report.json's payloads")
    check(len(answers) > 0 or len(rows) == 0 or all(r["status"] != "ok" for r in rows), "no answer for measured rows")
    for row, answer in zip(answer_rows, answers):
        cells = [td.text for td in row.find_elements(By.TAG_NAME, "td")]
        fastest = [arm for arm in answer["decode"] if arm["rank"]["place"] == 1]
        if fastest:
            check(cells[1] == " = ".join(a["label"] for a in fastest) + " " + fastest[0]["time"],
                  f"{answer['payload']} decode cell {cells[1]!r}")
    first_rows = list(csv.DictReader(open(os.path.join(folders[0], "results.csv"))))
    size_of = {(r["format"], r["backend"], r["variant"], r["payload"], r["framing"]): r for r in sizes}
    for answer in answers:
        figure = driver.find_elements(By.CSS_SELECTOR, f"#scatter-list svg[data-payload='{answer['payload']}']")
        trips = [r for r in first_rows if r["payload"] == answer["payload"] and r["operation"] == "roundtrip"
                 and r["mode"] == answer["mode"] and r["status"] == "ok" and r["mean_ns"] and r["variant"] != "copy-only"
                 and size_of.get((r["format"], r["backend"], r["variant"], r["payload"], r["framing"]), {}).get("encoded_bytes")]
        size_row = lambda r: size_of[(r["format"], r["backend"], r["variant"], r["payload"], r["framing"])]
        expected = sorted((float(r["mean_ns"]) / int(r["records"]),
                           int(size_row(r)["encoded_bytes"]) / int(size_row(r)["records"]))
                          for r in trips)
        if not expected:
            check(not figure, f"{answer['payload']}: a scatter without round trips")
            continue
        check(len(figure) == 1, f"{answer['payload']}: {len(figure)} scatters")
        dots = [(float(g.get_attribute("data-ns")), float(g.get_attribute("data-bytes")), "front" in g.get_attribute("class"))
                for g in figure[0].find_elements(By.CSS_SELECTOR, "g.point")] if figure else []
        check(len(dots) == len(expected) and all(close(a[0], b[0]) and close(a[1], b[1]) for a, b in zip(sorted(dots), expected)),
              f"{answer['payload']}: the scatter's dots differ from results.csv and sizes.csv")
        for ns, size, front in dots:
            beaten = [(n, b) for n, b, _ in dots if (n, b) != (ns, size) and n <= ns and b <= size]
            if front:
                check(not any(b < size for _, b in beaten), f"{answer['payload']}: a front dot ({ns}, {size}) has one smaller and no slower")
            else:
                check(beaten, f"{answer['payload']}: a dot off the front ({ns}, {size}) has none no larger and no slower")
        check(any(front for *_, front in dots), f"{answer['payload']}: no front")
    driver.execute_script("document.getElementById('answer').scrollIntoView()")
    driver.save_screenshot(os.path.join(screenshots, "answer.png"))

    # The capability table is report.json's, one row per backend; and the constraints re-rank the
    # answer: ticked "self-describing bytes" (and "safe on untrusted input" where robustness.csv
    # is there), each cell names the first rank among the backends that qualify, and each
    # scatter holds only those, ringed where no qualifying dot beats them.
    capabilities = {(c["format"], c["backend"]): c for c in model["capabilities"]}
    shown_rows = [(tr.get_attribute("data-format"), tr.get_attribute("data-backend"))
                  for tr in driver.find_elements(By.CSS_SELECTOR, "#capability-table tr[data-format]")]
    check(shown_rows == [(c["format"], c["backend"]) for c in model["capabilities"]] and shown_rows,
          f"capability table rows {shown_rows[:4]}")
    hostile_known = any(c["hostile"] is not None for c in model["capabilities"])
    has_robustness = any(os.path.exists(os.path.join(folder, "robustness.csv")) for folder in folders)
    check(hostile_known == has_robustness, f"hostile input known: {hostile_known}, robustness.csv there: {has_robustness}")
    # evolution.csv, where there is one: a backend survives when an added optional field (which
    # read the other way is a removed one) and a renamed one were each expressed and read right
    # both ways on every payload.
    evolution_files = [os.path.join(folder, "evolution.csv") for folder in folders
                       if os.path.exists(os.path.join(folder, "evolution.csv"))]
    evolution_rows = list(csv.DictReader(open(evolution_files[0]))) if evolution_files else []
    evolution_known = any(c["evolved"] is not None for c in model["capabilities"])
    check(evolution_known == bool(evolution_rows), f"evolution known: {evolution_known}, evolution.csv rows: {len(evolution_rows)}")
    def survives(c):
        label = lambda row: row["backend"] + (f"[{row['variant']}]" if row["variant"] else "")
        own = [row for row in evolution_rows if row["format"] == c["format"] and label(row) == c["backend"]]
        needed = ("add optional", "rename")
        return all(any(row["change"] == change and row["new_reads_old"] != "cannot-express" for row in own) for change in needed) and all(
            row["new_reads_old"] == "ok" and row["old_reads_new"] == "ok" for row in own
            if row["change"] in needed and row["new_reads_old"] != "cannot-express")
    if evolution_known:
        check(any(survives(c) for c in model["capabilities"]) and not all(survives(c) for c in model["capabilities"]),
              "the evolution constraint keeps some backends and drops others")
    # The evolution section: one table per payload of evolution.csv, each cell its two outcomes.
    shown = lambda outcome: "SILENTLY WRONG" if outcome == "silently-wrong" else outcome
    tables = driver.find_elements(By.CSS_SELECTOR, "#evolution-list table[data-payload]")
    payloads = list(dict.fromkeys(row["payload"] for row in evolution_rows))
    check([t.get_attribute("data-payload") for t in tables] == payloads,
          f"evolution tables {[t.get_attribute('data-payload') for t in tables]} against {payloads}")
    for table in tables:
        payload = table.get_attribute("data-payload")
        for tr in table.find_elements(By.CSS_SELECTOR, "tr[data-label]"):
            label = tr.get_attribute("data-label")
            own = [row for row in evolution_rows if row["payload"] == payload and
                   row["format"] + "/" + row["backend"] + (f"[{row['variant']}]" if row["variant"] else "") == label]
            expected = ["cannot express" if row["new_reads_old"] == "cannot-express"
                        else f"{shown(row['new_reads_old'])} / {shown(row['old_reads_new'])}" for row in own]
            cells = [td.text for td in tr.find_elements(By.TAG_NAME, "td")][1:]
            check(cells == expected and cells, f"{payload} {label}: {cells} against {expected}")
    if evolution_known:
        driver.execute_script("document.getElementById('evolution').scrollIntoView()")
        driver.save_screenshot(os.path.join(screenshots, "evolution.png"))
    driver.find_element(By.ID, "need-self-describing").click()
    if hostile_known:
        driver.find_element(By.ID, "need-untrusted").click()
    if evolution_known:
        driver.find_element(By.ID, "need-evolution").click()
    else:
        check(not driver.find_element(By.ID, "need-evolution").is_enabled(), "the evolution constraint is tickable without evolution.csv")
    def qualifies(item):
        c = capabilities.get((item["format"], item["backend"]))
        return (c is not None and c["self_describing"]
                and (not hostile_known or (c["hostile"] is not None and not c["hostile"]["failure"]))
                and (not evolution_known or survives(c)))
    answer_rows = driver.find_elements(By.CSS_SELECTOR, "#answer-table tr[data-payload]")
    for row, answer in zip(answer_rows, answers):
        cells = [td.text for td in row.find_elements(By.TAG_NAME, "td")]
        for column, key, figure in ((1, "decode", "time"), (2, "encode", "time"), (3, "bytes", "size")):
            items = [item for item in answer[key] if qualifies(item)]
            if not items:
                check(cells[column] == "-", f"{answer['payload']} {key}: {cells[column]!r} with no qualifying backend")
                continue
            place = min(item["rank"]["place"] for item in items)
            group = [item for item in items if item["rank"]["place"] == place]
            check(cells[column] == " = ".join(i["label"] for i in group) + " " + group[0][figure],
                  f"{answer['payload']} {key} under constraints: {cells[column]!r}")
        points = [p for p in answer["points"] if qualifies(p)]
        labels = {p["label"] for p in points}
        front = sorted(p["label"] for p in points if not set(p["beaten_by"]) & labels)
        figure = driver.find_elements(By.CSS_SELECTOR, f"#scatter-list svg[data-payload='{answer['payload']}']")
        ringed = sorted(g.get_attribute("data-label") for f in figure for g in f.find_elements(By.CSS_SELECTOR, "g.point.front"))
        drawn = len([g for f in figure for g in f.find_elements(By.CSS_SELECTOR, "g.point")])
        check(ringed == front and drawn == len(points), f"{answer['payload']} front under constraints: {ringed} against {front}")
    driver.save_screenshot(os.path.join(screenshots, "constraints.png"))
    driver.find_element(By.ID, "need-self-describing").click()
    if hostile_known:
        driver.find_element(By.ID, "need-untrusted").click()
    if evolution_known:
        driver.find_element(By.ID, "need-evolution").click()

    # A filter changes the rows shown: one payload's decodes (few enough for every chart to be drawn).
    payload_filter = Select(driver.find_element(By.ID, "filter-payload"))
    first_payload = payload_filter.options[1].get_attribute("value")
    payload_filter.select_by_value(first_payload)
    Select(driver.find_element(By.ID, "filter-operation")).select_by_value("decode")
    decodes = [row for row in rows if row["operation"] == "decode" and row["payload"] == first_payload]
    check(len(body_rows()) == len(decodes), f"decode filter: {len(body_rows())} rows, the CSVs have {len(decodes)}")

    # The charts of the filtered rows: one bar per measured arm, each bar the CSV's time.
    bars = sorted(float(rect.get_attribute("data-ns")) for rect in driver.find_elements(By.CSS_SELECTOR, "#chart-list rect[data-ns]"))
    measured = sorted(float(r["mean_ns"]) / int(r["records"]) for r in decodes if r["status"] == "ok" and r["mean_ns"])
    check(len(bars) == len(measured) and all(close(a, b) for a, b in zip(bars, measured)),
          f"decode charts: {len(bars)} bars, {len(measured)} measured decodes in the CSVs, or their values differ")
    # Every bar and whisker is drawn, whatever the intervals: an interval reaching 0 on the log
    # axis is clipped there (dashed), never a chart of NaN.
    def drawn_at(element, name):
        try:
            return float(element.get_attribute(name))
        except (TypeError, ValueError):
            return math.nan
    for rect in driver.find_elements(By.CSS_SELECTOR, "#chart-list rect[data-ns]"):
        check(drawn_at(rect, "width") >= 1, f"a bar of {rect.get_attribute('data-ns')} ns has width {rect.get_attribute('width')}")
    whiskers = driver.find_elements(By.CSS_SELECTOR, "#chart-list line")
    for line in whiskers:
        x1, x2 = drawn_at(line, "x1"), drawn_at(line, "x2")
        check(math.isfinite(x1) and math.isfinite(x2) and 0 <= x1 <= x2, f"a whisker from {x1} to {x2}")
    reaching = [r for r in decodes if r["status"] == "ok" and float(r["ci95_low_ns"]) <= 0]
    clipped = driver.find_elements(By.CSS_SELECTOR, "#chart-list line[data-clipped]")
    check(len(clipped) == len(reaching), f"{len(clipped)} whiskers clipped, {len(reaching)} decode intervals reach 0")
    # The payload's sizes chart: per format, one row per distinct encoding, its encoded, zstd and
    # zlib bytes as sizes.csv has them.
    decode_formats = {r["format"] for r in decodes}
    encodings = {(r["format"], r["encoded_bytes"], r["zstd_bytes"], r["zlib_bytes"]) for r in sizes
                 if r["payload"] == first_payload and r["format"] in decode_formats and r["encoded_bytes"]}
    want = sorted((kind, int(value)) for _, *values in encodings for kind, value in zip(("encoded", "zstd", "zlib"), values) if value)
    drawn = sorted((rect.get_attribute("data-kind"), int(rect.get_attribute("data-bytes")))
                   for rect in driver.find_elements(By.CSS_SELECTOR, "#chart-list rect[data-bytes]"))
    check(drawn == want, f"sizes chart of {first_payload}: {len(drawn)} bars, sizes.csv gives {len(want)} (or their bytes differ)")
    legend = {span.text for span in driver.find_elements(By.CSS_SELECTOR, "#legend span")}
    check(legend == {r["format"] for r in decodes if r["status"] == "ok"} | {e[0] for e in encodings}, f"legend {legend}")
    driver.save_screenshot(os.path.join(screenshots, "filtered.png"))
    driver.execute_script("document.getElementById('charts').scrollIntoView()")
    driver.save_screenshot(os.path.join(screenshots, "charts.png"))

    # A sort orders them: a click on the time column reverses its order, a second restores it.
    times = lambda: [float(r.get_attribute("data-ns")) for r in body_rows() if r.get_attribute("data-ns")]
    time_header = lambda: next(th for th in driver.find_elements(By.CSS_SELECTOR, "#arm-table th") if th.text.startswith("time/record"))
    for expected_direction in ("descending", "ascending"):
        time_header().click()
        direction = time_header().get_attribute("aria-sort")
        check(direction == expected_direction, f"the time column says {direction}, want {expected_direction}")
        check(times() == sorted(times(), reverse=expected_direction == "descending"), f"not {expected_direction}: {times()[:5]}")

    # Two arms compared: hyperfine's sentence, and the ratio as serbench computes it from the
    # first folder: paired over the workers both arms shared (samples.csv), else unpaired.
    Select(driver.find_element(By.ID, "filter-operation")).select_by_value("")
    payload_filter.select_by_value("")
    pick = lambda select_id, label: next(
        option for option in Select(driver.find_element(By.ID, select_id)).options if option.text.startswith(f"{label} — order decode")
    ).click()
    pick("pair-a", "json/serde_json")
    pick("pair-b", "postcard/postcard")
    sentence = driver.find_element(By.ID, "pair-sentence")
    check((" times " in sentence.text and (" faster than " in sentence.text or " slower than " in sentence.text))
          or sentence.text.endswith(" are indistinguishable"), f"pair: {sentence.text!r}")
    # The Rust binary's ratio of the same pair (`serbench ratio --json`), not a copy of its
    # statistics here: the page must show what serbench computes.
    quoted = json.loads(subprocess.run(
        [os.environ["SERBENCH_BIN"], "ratio", folders[0], "--payload", "order", "--op", "decode",
         "json/serde_json", "postcard/postcard", "--json"],
        check=True, capture_output=True, text=True).stdout)
    rust, row = quoted["quoted"], quoted["ratio"]
    basis = f"paired over {row['paired_workers']} workers" if rust["paired"] else "unpaired"
    first = {(r["format"], r["backend"], r["variant"], r["mode"], r["framing"]): r for r in csv.DictReader(open(os.path.join(folders[0], "results.csv")))
             if r["payload"] == "order" and r["operation"] == "decode"}
    a, b = first[("json", "serde_json", "", "typed", "document")], first[("postcard", "postcard", "", "typed", "document")]
    if not rust["paired"] and min(float(a["ci95_low_ns"]), float(b["ci95_low_ns"])) <= 0:
        # An arm's interval reaches 0: the ratio is stated without an interval, never "x ± y".
        text = driver.find_element(By.ID, "pair-result").text
        check(close(float(sentence.get_attribute("data-ratio")), rust["ratio"], 1e-9), f"pair ratio: page {sentence.get_attribute('data-ratio')}, serbench {rust['ratio']}")
        check(sentence.get_attribute("data-low") is None and "±" not in text and "no interval" in text, f"pair without an interval: {text!r}")
    else:
        shown = tuple(float(sentence.get_attribute(name)) for name in ("data-ratio", "data-low", "data-high")) + (sentence.get_attribute("data-basis"),)
        expected = (rust["ratio"], rust["low"], rust["high"], basis)
        check(all(close(x, y, 1e-9) for x, y in zip(shown[:3], expected[:3])) and shown[3] == expected[3], f"pair ratio: page {shown}, serbench {expected}")

    # The calculator against results.csv and sizes.csv of the first folder.
    rate_input = driver.find_element(By.ID, "calc-rate")
    rate_input.clear()
    rate_input.send_keys("12345")
    prices = {"calc-core-hour": 0.05, "calc-gb-transfer": 0.09, "calc-gb-month": 0.023}
    for element_id, value in prices.items():
        box = driver.find_element(By.ID, element_id)
        box.clear()
        box.send_keys(str(value))
    Select(driver.find_element(By.ID, "calc-compression")).select_by_value("zstd")
    payload = Select(driver.find_element(By.ID, "calc-payload")).first_selected_option.get_attribute("value")
    host_rows = list(csv.DictReader(open(os.path.join(folders[0], "results.csv"))))
    label = lambda r: f"{r['format']}/{r['backend']}" + (f"[{r['variant']}]" if r["variant"] else "")
    timed = {(label(r), r["operation"]): r for r in host_rows
             if r["payload"] == payload and r["mode"] == "typed" and r["framing"] == "document" and r["status"] == "ok"}
    computed = {}
    for size in sizes:
        key = label(size)
        if size["payload"] != payload or size["framing"] != "document" or not size["zstd_bytes"]:
            continue
        if (key, "encode") in timed and (key, "decode") in timed:
            cores = lambda r: float(r["mean_ns"]) * 12345 / 1e9
            computed[key] = (cores(timed[(key, "encode")]), cores(timed[(key, "decode")]), int(size["zstd_bytes"]) * 12345 * 86400 / 1e9)
    table = driver.find_elements(By.CSS_SELECTOR, "#calc-table tbody tr")
    page_rows = {r.get_attribute("data-codec"): (float(r.get_attribute("data-encode-cores")), float(r.get_attribute("data-decode-cores")), float(r.get_attribute("data-gb-per-day"))) for r in table}
    check(set(page_rows) == set(computed), f"calculator codecs {sorted(page_rows)} != {sorted(computed)}")
    for key, values in computed.items():
        check(key in page_rows and all(close(a, b) for a, b in zip(page_rows[key], values)), f"calculator {key}: page {page_rows.get(key)}, CSVs {values}")
    # The cost per month at those prices, its bottleneck, and the ranking by cost.
    costs = []
    for r in table:
        key = r.get_attribute("data-codec")
        if key not in computed:
            continue
        encode, decode, gb_day = computed[key]
        cpu = (encode + decode) * 730 * prices["calc-core-hour"]
        wire = gb_day * 730 / 24 * (prices["calc-gb-transfer"] + prices["calc-gb-month"])
        check(close(float(r.get_attribute("data-cost")), cpu + wire, 1e-9), f"calculator {key}: cost {r.get_attribute('data-cost')}, CSVs {cpu + wire}")
        check(r.get_attribute("data-bottleneck") == ("CPU" if cpu >= wire else "bytes"), f"calculator {key}: bottleneck {r.get_attribute('data-bottleneck')}")
        costs.append(float(r.get_attribute("data-cost")))
    check(costs == sorted(costs) and costs, f"calculator rows not ranked by cost: {costs[:5]}")
    # No cost below 0, whatever an interval's low end.
    for cell in driver.find_elements(By.CSS_SELECTOR, "#calc-table tbody td"):
        check(not re.search(r"(^|[\s\[])-\d", cell.text), f"calculator cell {cell.text!r} is negative")
    driver.execute_script("document.getElementById('calculator').scrollIntoView()")
    driver.save_screenshot(os.path.join(screenshots, "calculator.png"))

    driver.execute_script("document.getElementById('hosts').scrollIntoView()")
    driver.save_screenshot(os.path.join(screenshots, "hosts.png"))
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    check(not errors, f"console errors after using the page: {errors}")
finally:
    driver.quit()

if failures:
    for failure in failures:
        print("FAIL:", failure)
    sys.exit(1)
print(f"report.html: {len(rows)} rows, {len(computed)} calculator codecs, screenshots in {screenshots}")
