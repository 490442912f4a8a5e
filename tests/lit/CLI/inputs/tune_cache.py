"""Inspects and damages mtc tuning-cache folders for the fault tests.

  tune_cache.py check DIR
      One line per file of DIR, sorted by name, then a summary:
        entry <first 8 digits of its name>: <schedule>   a complete record
        device <name>                                    a GPU identity
        TEMPORARY <name>                                 a leftover temp file
        BROKEN <name>: <why>                             anything else
        entries: N
      Compiled PTX stored beside the entries (ptx-<sha256>.ptx) is checked
      for being PTX, and otherwise not listed; so are the tuners' GPU lock
      files (gpu-<16 hex digits>.lock, empty). A missing folder counts as
      empty.

  tune_cache.py damage DIR HOW
      Damages the only tuning entry of DIR (device-*.json files, written on
      machines with an NVIDIA kernel driver, are left alone). HOW is one of
      truncate, empty, foreign, not-a-record, no-time, bad-schedule,
      illegal-schedule, directory.
"""
import json
import os
import re
import sys

ENTRY = re.compile(r"^[0-9a-f]{64}\.json$")
PTX = re.compile(r"^ptx-[0-9a-f]{64}\.ptx$")
LOCK = re.compile(r"^gpu-[0-9a-f]{16}\.lock$")


def check(folder):
    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    entries = 0
    for name in names:
        path = os.path.join(folder, name)
        if ".tmp-" in name:
            print("TEMPORARY", name)
            continue
        if LOCK.match(name):
            if os.path.getsize(path):
                print("BROKEN %s: a lock file with content" % name)
            continue
        if PTX.match(name):
            with open(path) as f:
                if ".version" not in f.read():
                    print("BROKEN %s: not PTX" % name)
            continue
        try:
            with open(path) as f:
                value = json.load(f)
        except Exception as e:  # unreadable, a folder, or not JSON
            print("BROKEN %s: %s" % (name, e))
            continue
        if name.startswith("device-") and name.endswith(".json"):
            if all(isinstance(value.get(k), str) for k in ("name", "cc", "driver")):
                print("device", value["name"])
            else:
                print("BROKEN %s: not a device identity" % name)
            continue
        ok = (
            ENTRY.match(name)
            and isinstance(value, dict)
            and value.get("format") == "mtc-tune-1"
            and isinstance(value.get("key"), dict)
            and isinstance(value.get("schedule"), str)
            and isinstance(value.get("us"), (int, float))
            and value["us"] > 0
        )
        if ok:
            entries += 1
            print("entry %s: %s" % (name[:8], value["schedule"]))
        else:
            print("BROKEN %s: not a complete mtc tuning record" % name)
    print("entries:", entries)


def damage(folder, how):
    names = [n for n in os.listdir(folder) if ENTRY.match(n)]
    if len(names) != 1:
        sys.exit("expected one tuning entry in %s, found %d" % (folder, len(names)))
    path = os.path.join(folder, names[0])
    with open(path) as f:
        text = f.read()
    record = json.loads(text)
    if how == "truncate":
        text = text[: len(text) // 2]
    elif how == "empty":
        text = ""
    elif how == "foreign":
        record["key"]["gpu"] = "Some Other GPU"
    elif how == "not-a-record":
        text = "[1, 2]\n"
    elif how == "no-time":
        del record["us"]
    elif how == "bad-schedule":
        record["schedule"] = "elementwise w4 q9"
    elif how == "illegal-schedule":
        # Parses, but an elementwise kernel cannot take 3 warps.
        record["schedule"] = "elementwise w3 r1 kw1 v4 u1 mt1 sk1"
    elif how == "directory":
        os.remove(path)
        os.mkdir(path)
        return
    else:
        sys.exit("unknown damage '%s'" % how)
    if how in ("foreign", "no-time", "bad-schedule", "illegal-schedule"):
        text = json.dumps(record, indent=2) + "\n"
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "check":
        check(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "damage":
        damage(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
