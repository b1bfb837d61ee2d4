"""Every execution_started in an audit log has its end on the record
(code_execution, call_refused or execution_lost), matched by session,
code hash and request (and task).  Prints each started execution left
without one and exits 1; with -v also what each one's end was.

usage: ended.py [-v] LOGFILE..."""
import collections
import json
import sys

ENDS = ("code_execution", "call_refused", "execution_lost")


def key(e):
    return (e.get("session_id"), e.get("code_hash"), e.get("request"),
            e.get("task_id"))


def main(args):
    verbose = args[:1] == ["-v"]
    started, ended = [], collections.defaultdict(list)
    for path in args[1:] if verbose else args:
        with open(path, "rb") as f:
            # A live log ends in zeros once flush.zero_ahead has filled it.
            text = f.read().split(b"\0", 1)[0].decode()
        for line in text.splitlines():
            e = json.loads(line)
            if e["event"] == "execution_started":
                started.append(e)
            elif e["event"] in ENDS and "code_hash" in e:
                ended[key(e)].append(e)
    missing = [e for e in started if not ended.get(key(e))]
    for e in missing:
        print("no end: seq %s %s %s request %s" % (e["seq"], e["tool"],
              e["session_id"], e.get("request")))
    if verbose:
        for e in started:
            print(" ".join("%s%s" % (x["event"], "(recovered)" if
                  x.get("recovered") else "") for x in ended.get(key(e), [])))
    print("%d started, %d without an end" % (len(started), len(missing)))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
