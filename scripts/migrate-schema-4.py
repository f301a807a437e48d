#!/usr/bin/env python3
"""Migrates serbench result folders from schema version 3 to 4, in place.

Version 4 added columns no version-3 run measured: results.csv's and samples.csv's `load_1m` and
`stolen_percent`, and samples.csv's `twin_mean_ns` (the A/A twin). They are added empty ("not
recorded"); every other CSV of the folder keeps its columns. Each file's rows get version 4.
Nothing is measured or changed otherwise. Every file is checked before any is written: a file
of another version refuses the whole migration with nothing changed; each file is then replaced
atomically (written beside it, synced, renamed).

    python3 scripts/migrate-schema-4.py results/x86_64-linux [MORE_FOLDERS...]
"""

import csv
import io
import os
import sys

ADDED_AFTER = "peak_heap_bytes_per_op"
ADDED = {
    "results.csv": ["load_1m", "stolen_percent"],
    "samples.csv": ["twin_mean_ns", "load_1m", "stolen_percent"],
}


def plan(path, added):
    """The migrated text of one file, or None to leave it; exits (nothing written) on a refusal."""
    with open(path, newline="", encoding="utf-8") as file:
        rows = list(csv.reader(file))
    if not rows or rows[0][:1] != ["schema_version"]:
        return None, "not a serbench CSV, left alone"
    header, body = rows[0], rows[1:]
    versions = {row[0] for row in body}
    if versions == {"4"}:
        return None, "already version 4"
    if versions - {"3"}:
        sys.exit(f"{path}: schema versions {sorted(versions)}, not 3: refused, nothing changed")
    if any(column in header for column in added):
        sys.exit(f"{path}: already has {added}: refused, nothing changed")
    at = header.index(ADDED_AFTER) + 1 if added else len(header)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header[:at] + added + header[at:])
    for row in body:
        writer.writerow(["4"] + row[1:at] + [""] * len(added) + row[at:])
    return out.getvalue(), f"{len(body)} rows to version 4" + (f", {', '.join(added)} empty" if added else "")


def replace(path, text):
    temporary = path + ".migrating"
    with open(temporary, "w", encoding="utf-8", newline="") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)


def main(folders):
    if not folders:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    # Every file is read and checked before any is written: a refusal leaves every folder as it was.
    plans = []
    for folder in folders:
        for root, _, names in os.walk(folder):
            for name in sorted(names):
                if name.endswith(".csv"):
                    path = os.path.join(root, name)
                    plans.append((path, *plan(path, ADDED.get(name, []))))
    for path, text, what in plans:
        if text is not None:
            replace(path, text)
        print(f"{path}: {what}")


if __name__ == "__main__":
    main(sys.argv[1:])
