"""Looks for audit records in a stockade-auditd log directory.

Usage: events.py LOGDIR [--wait S] [--min N] [--none | --count] EVENT [COND...]
  COND  key=value   the field (dotted path for objects) equals value; numbers
                    and booleans compare by their JSON spelling; a|b: either
        key~value   the field is a list holding value (or an object whose
                    JSON holds it), or a string holding it
        key?        the field is present
Polls for up to S seconds (netguard's NFLOG reader is asynchronous) until at
least N records (default 1) match; prints the first match.  --none: fails if
any record matches after S seconds.  --count: prints how many match, now.
On failure prints what the log holds of EVENT and every event_rejected, so
a wrong field name shows up at once.
"""
import argparse
import glob
import json
import sys
import time


def records(logdir):
    out = []
    for path in sorted(glob.glob(logdir + "/audit-*.log")):
        with open(path, "rb") as f:
            for line in f:
                if line.endswith(b"\n"):
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        pass
    return out


def field(rec, key):
    v = rec
    for part in key.split("."):
        if not isinstance(v, dict) or part not in v:
            return KeyError
        v = v[part]
    return v


def spell(v):
    return v if isinstance(v, str) else json.dumps(v)


def matches(rec, event, conds):
    if rec.get("event") != event:
        return False
    for c in conds:
        if c.endswith("?"):
            if field(rec, c[:-1]) is KeyError:
                return False
        elif "~" in c and ("=" not in c or c.index("~") < c.index("=")):
            k, val = c.split("~", 1)
            v = field(rec, k)
            if isinstance(v, list):
                if not any(val == spell(x) or (not isinstance(x, str) and
                                               val in json.dumps(x))
                           for x in v):
                    return False
            elif not isinstance(v, str) or val not in v:
                return False
        else:
            k, val = c.split("=", 1)
            v = field(rec, k)
            if v is KeyError or spell(v) not in val.split("|"):
                return False
    return True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("logdir")
    p.add_argument("--wait", type=float, default=0)
    p.add_argument("--min", type=int, default=1)
    p.add_argument("--none", action="store_true")
    p.add_argument("--count", action="store_true",
                   help="print how many records match, now")
    p.add_argument("event")
    p.add_argument("conds", nargs="*")
    a = p.parse_args()
    if a.count:
        print(sum(matches(r, a.event, a.conds) for r in records(a.logdir)))
        return 0
    deadline = time.monotonic() + a.wait
    while True:
        recs = records(a.logdir)
        hits = [r for r in recs if matches(r, a.event, a.conds)]
        if not a.none and len(hits) >= a.min:
            print(json.dumps(hits[0], sort_keys=True))
            return 0
        if time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    if a.none and not hits:
        return 0
    what = "unexpected" if a.none else "no (or too few: %d)" % len(hits)
    print("%s %s %s" % (what, a.event, " ".join(a.conds)), file=sys.stderr)
    same = [r for r in recs if r.get("event") == a.event]
    for r in (hits if a.none else same)[-8:]:
        print("  have: " + json.dumps(r, sort_keys=True)[:600], file=sys.stderr)
    for r in [r for r in recs if r.get("event") == "event_rejected"][-4:]:
        print("  rejected: " + json.dumps(r, sort_keys=True)[:400],
              file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
