#!/usr/bin/env python3
"""Side by side: the rows of several `kiln bench --json` files of two builds, each row's figures
and the ratio of the medians (after / before). Higher is better for every unit kiln bench prints
except times (us, ms), where the ratio is inverted so that above 1 still means faster.
   bench/compare_json.py BEFORE.json[,BEFORE2.json..] AFTER.json[,AFTER2.json..]"""
import json
import statistics
import sys


def rows(paths):
    out = {}
    for p in paths.split(","):
        with open(p) as f:
            for r in json.load(f)["rows"]:
                if r.get("kiln") is not None:
                    out.setdefault(r["what"], (r["unit"], []))[1].append(r["kiln"])
    return out


before, after = rows(sys.argv[1]), rows(sys.argv[2])
print(f"{'benchmark':<70} {'unit':>7} {'before':>22} {'after':>22} {'after/before':>13}")
worst = None
for what, (unit, b) in before.items():
    if what not in after:
        print(f"{what:<70} {unit:>7} {'/'.join(f'{x:.4g}' for x in b):>22} {'(missing)':>22}")
        continue
    a = after[what][1]
    mb, ma = statistics.median(b), statistics.median(a)
    ratio = (mb / ma if unit in ("us", "ms", "s", "ns") else ma / mb) if mb and ma else float("nan")
    if unit:  # rows without a unit are errors against a reference, not speeds
        worst = ratio if worst is None or ratio < worst else worst
    print(f"{what:<70} {unit:>7} {'/'.join(f'{x:.4g}' for x in b):>22} {'/'.join(f'{x:.4g}' for x in a):>22} {ratio:>13.3f}")
for what in after:
    if what not in before:
        print(f"{what:<70} {after[what][0]:>7} {'(new)':>22} {'/'.join(f'{x:.4g}' for x in after[what][1]):>22}")
print(f"lowest after/before: {worst:.3f}" if worst is not None else "no common rows")
