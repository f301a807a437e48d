#!/usr/bin/env python3
"""Migrates serbench result folders from schema version 3 to 4, in place.

Version 4 added columns no version-3 run measured: results.csv's and samples.csv's `load_1m` and
`stolen_percent`, and samples.csv's `twin_mean_ns` (the A/A twin). They are added empty ("not
recorded"); every other CSV of the folder keeps its columns. Each file's rows get version 4.
Nothing is measured or changed otherwise. A file of another version is refused untouched, and
each file is replaced atomically (written beside it, synced, renamed).

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


def migrate(path, added):
    with open(path, newline="", encoding="utf-8") as file:
        rows = list(csv.reader(file))
    if not rows or rows[0][:1] != ["schema_version"]:
        return "not a serbench CSV, left alone"
    header, body = rows[0], rows[1:]
    versions = {row[0] for row in body}
    if versions == {"4"}:
        return "already version 4"
    if versions - {"3"}:
        sys.exit(f"{path}: schema versions {sorted(versions)}, not 3: refused, nothing changed")
    at = header.index(ADDED_AFTER) + 1 if added else len(header)
    if any(column in header for column in added):
        sys.exit(f"{path}: already has {added}: refused, nothing changed")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header[:at] + added + header[at:])
    for row in body:
        writer.writerow(["4"] + row[1:at] + [""] * len(added) + row[at:])
    temporary = path + ".migrating"
    with open(temporary, "w", encoding="utf-8", newline="") as file:
        file.write(out.getvalue())
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
    return f"{len(body)} rows to version 4" + (f", {', '.join(added)} empty" if added else "")


def main(folders):
    if not folders:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    for folder in folders:
        for root, _, names in os.walk(folder):
            for name in sorted(names):
                if name.endswith(".csv"):
                    path = os.path.join(root, name)
                    print(f"{path}: {migrate(path, ADDED.get(name, []))}")


if __name__ == "__main__":
    main(sys.argv[1:])
