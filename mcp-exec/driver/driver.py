"""Stockade session driver: runs inside a sandbox, one long-lived Python
process per session.  mcp-exec sends it code over the control socket (fd 3)
together with a fresh stdout and stderr for each call, so the output of two
calls never mixes; variables, imports and /workspace persist between calls.

Protocol (both ways: a 4-byte big-endian length, then one JSON object):
  driver -> mcp-exec  {"op": "ready", "python": "3.11.2"}          once, at start
  mcp-exec -> driver  {"op": "exec", "id": N, "code": "..."}       + 2 fds (SCM_RIGHTS)
  driver -> mcp-exec  {"op": "done", "id": N, "status": S, "exit_code": C,
                       "results": [...]}
      S: ok (0), error (1: uncaught exception, traceback on the call's
      stderr), exit (SystemExit's code), interrupted (130: SIGINT)
      results: what the cell displayed, as Jupyter would: the trailing
      expression's value, display(obj) calls and the figures still open
      (saved to /workspace/figure_N.png), each {type, text, html?, json?,
      artifact?}, and only here: the call's stdout is what the code
      wrote.  The exec message's "results_max" bounds their text; the
      whole message stays under DONE_MAX (DRIVER_MSG_MAX in session.h).

The code runs in this very process, so it can reach the control socket:
mcp-exec treats everything the driver says as untrusted.  This file is
mounted read-only.
"""
import ast
import builtins
import json
import os
import signal
import socket
import struct
import sys
import traceback
import warnings

# fd 3 in the native sandbox; under gVisor, whose runsc passes only stdio,
# the container's stdin (STOCKADE_CONTROL_FD=0, set by sandbox/gvisor_oci.c).
CONTROL_FD = int(os.environ.get("STOCKADE_CONTROL_FD", "3"))
FRAME_MAX = 16 * 1024 * 1024
DONE_MAX = 64 * 1024 - 1024     # DRIVER_MSG_MAX less room for the envelope
RESULTS_MAX = 32                # items per call, as mcp-exec caps them
WORKSPACE = "/workspace"
HEADER = struct.Struct(">I")

running = False


def on_sigint(signum, frame):
    # Only code that is running is interrupted; a late signal is dropped.
    if running:
        raise KeyboardInterrupt


class Reader:
    """Frames from the control socket.  One recvmsg usually holds a whole
    frame; bytes past it are kept for the next."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = bytearray()

    def fill(self, n, fds):
        while len(self.buf) < n:
            data, got, _flags, _addr = socket.recv_fds(
                self.sock, max(n - len(self.buf), 65536), 4)
            if not data:
                raise EOFError
            self.buf += data
            fds += got

    def frame(self):
        fds = []
        self.fill(HEADER.size, fds)
        (length,) = HEADER.unpack_from(self.buf)
        if length == 0 or length > FRAME_MAX:
            raise ValueError("frame length %d" % length)
        self.fill(HEADER.size + length, fds)
        body = bytes(self.buf[HEADER.size:HEADER.size + length])
        del self.buf[:HEADER.size + length]
        return json.loads(body), fds


def send_frame(sock, obj):
    send_body(sock, json.dumps(obj).encode())


def send_body(sock, body):
    sock.sendall(HEADER.pack(len(body)) + body)


class Results:
    """What one cell displays, kept within the byte budget mcp-exec set."""

    def __init__(self, budget):
        self.items = []
        self.budget = budget
        self.truncated = False

    def text(self, s, cap):
        if len(s.encode("utf-8", "backslashreplace")) <= cap:
            return s
        self.truncated = True
        return s.encode("utf-8", "backslashreplace")[:cap].decode(
            "utf-8", "ignore")

    @staticmethod
    def cost(item):
        n = sum(len(v.encode("utf-8", "backslashreplace"))
                for k, v in item.items() if k in ("text", "html"))
        if "json" in item:
            n += len(json.dumps(item["json"]))
        return n

    def add(self, item):
        if len(self.items) >= RESULTS_MAX:
            self.truncated = True
            return
        cost = self.cost(item)
        if cost > self.budget:
            self.truncated = True
            return
        self.budget -= cost
        self.items.append(item)


results = Results(0)


def describe(obj):
    """One displayed value as a result item: text/plain always, HTML when
    the object renders itself so (a DataFrame), JSON for plain data."""
    try:
        text = repr(obj)
    except Exception as e:  # noqa: BLE001 - user objects may fail
        text = "<repr failed: %s>" % type(e).__name__
    item = {"type": "text", "text": text}
    html = getattr(obj, "_repr_html_", None)
    if callable(html) and not isinstance(obj, type):
        try:
            h = html()
        except Exception:  # noqa: BLE001
            h = None
        if isinstance(h, str):
            item["type"] = "html"
            item["html"] = h
    if item["type"] == "text" and isinstance(obj, (dict, list)):
        try:
            item["json"] = json.loads(json.dumps(obj, allow_nan=False))
            item["type"] = "json"
        except (TypeError, ValueError, RecursionError):
            pass
    return item


def display(*objs, **_kwargs):
    """IPython's display(): each object becomes a result of this call."""
    for obj in objs:
        fig = figure_of(obj)
        if fig is not None:
            save_figure(fig)
        else:
            results.add(describe(obj))


def figure_of(obj):
    mpl = sys.modules.get("matplotlib.figure")
    if mpl is not None and isinstance(obj, mpl.Figure):
        return obj
    return None


saved_figures = set()


def save_figure(fig):
    """A figure as /workspace/figure_N.png (N its number), so it comes back
    as an artifact; the result names the artifact, never inlines it."""
    num = getattr(fig, "number", None)
    if not isinstance(num, int):
        num = len(saved_figures) + 1
    name = "figure_%d.png" % num
    if name in saved_figures:
        return
    try:
        fig.savefig(os.path.join(WORKSPACE, name), format="png")
    except Exception:  # noqa: BLE001 - a broken figure is the user's
        traceback.print_exc()
        return
    saved_figures.add(name)
    results.add({"type": "image", "text": "<Figure %s>" % name,
                 "artifact": name, "mime": "image/png"})


def save_open_figures():
    """Figures still open when the cell ends, as Jupyter's inline backend
    shows them; closed afterwards, so the next cell starts with none."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    try:
        for num in plt.get_fignums():
            save_figure(plt.figure(num))
        plt.close("all")
    except Exception:  # noqa: BLE001
        traceback.print_exc()


def show_value(value, namespace):
    """The trailing expression's value: kept as _, and the main result.
    Never written to stdout, which carries only what the code wrote
    (Jupyter keeps execute_result apart from the streams, E2B too).  It
    is all the caller sees of the value, so one too big for what is left
    of the budget is cut to it rather than dropped."""
    if value is None:
        return
    namespace["_"] = value
    if figure_of(value) is not None:
        return          # saved with the open figures
    item = describe(value)
    item["main"] = True
    if (results.cost(item) > results.budget
            and len(results.items) < RESULTS_MAX):
        item = {"type": "text", "main": True,
                "text": results.text(item["text"], results.budget)}
    results.add(item)


def split(code):
    """The cell as (body, last): last is the trailing expression compiled
    in eval mode (as IPython does), or None."""
    tree = ast.parse(code, "<cell>", "exec")
    last = None
    # A trailing ';' hides the value, as in IPython.
    if (tree.body and isinstance(tree.body[-1], ast.Expr)
            and not code.rstrip().endswith(";")):
        last = ast.Expression(tree.body.pop().value)
        last = compile(last, "<cell>", "eval")
    return compile(tree, "<cell>", "exec"), last


def run(code, namespace):
    """Runs one cell; returns (status, exit_code)."""
    global running
    try:
        body, last = split(code)
    except (SyntaxError, ValueError):
        traceback.print_exc(limit=0)
        return "error", 1
    running = True
    try:
        exec(body, namespace)
        if last is not None:
            show_value(eval(last, namespace), namespace)
        return "ok", 0
    except SystemExit as e:
        if e.code is None:
            return "exit", 0
        if isinstance(e.code, int):
            return "exit", e.code & 0xff
        print(e.code, file=sys.stderr)
        return "exit", 1
    except KeyboardInterrupt:
        traceback.print_exc()
        return "interrupted", 130
    except BaseException:
        # The driver's own frame is noise to the user: start at the cell.
        etype, value, tb = sys.exc_info()
        traceback.print_exception(etype, value, tb.tb_next if tb else None)
        return "error", 1
    finally:
        running = False
        save_open_figures()


def done_message(msg_id, status, code):
    """The done message, encoded (once, for the common case), dropping
    results from the end until it fits."""
    out = {"op": "done", "id": msg_id, "status": status, "exit_code": code,
           "results": results.items}
    if results.truncated:
        out["results_truncated"] = True
    body = encode(out)
    while len(body) > DONE_MAX and out["results"]:
        out["results"] = out["results"][:-1]
        out["results_truncated"] = True
        body = encode(out)
    return body


def encode(obj):
    """UTF-8 as is, not \\u escapes: the results' budget counts UTF-8
    bytes, and six bytes a character would crowd the main value out of
    DONE_MAX.  A lone surrogate becomes the escape json.dumps would
    have written (which mcp-exec refuses either way)."""
    return json.dumps(obj, ensure_ascii=False).encode("utf-8",
                                                       "backslashreplace")


def attach(out_fd, err_fd):
    """Points fds 1 and 2 (and sys.stdout, sys.stderr) at this call's pipes."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    os.close(out_fd)
    os.close(err_fd)


def detach(devnull):
    """Closes this call's pipes: mcp-exec sees end of file."""
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:  # noqa: BLE001 - user code may have broken it
            pass
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)


def package_layer():
    """The session's package layer (a profile with packages.install sets
    PYTHONUSERBASE): pip installs into its user site, which python -I
    leaves off sys.path.  Made now, so what pip puts there later imports
    without a restart; ahead of the system's dist-packages, as site.py
    places a user site; its bin/ (console scripts) ahead on PATH."""
    base = os.environ.get("PYTHONUSERBASE")
    if not base:
        return
    import site
    import sysconfig
    user_site = sysconfig.get_path("purelib", "posix_user",
                                   vars={"userbase": base})
    os.makedirs(user_site, exist_ok=True)
    at = next((i for i, p in enumerate(sys.path)
               if p.endswith(("dist-packages", "site-packages"))),
              len(sys.path))
    sys.path.insert(at, user_site)
    site.addsitedir(user_site)  # its .pth files
    # Console scripts pip installs: first on PATH, as ~/.local/bin is.
    os.environ["PATH"] = base + "/bin:" + os.environ.get("PATH", "/usr/bin")


def preimport():
    """The profile's pool.preimport (mcp-exec checked the names): loaded
    before "ready", so a pooled sandbox has them when it is handed out.
    A module that fails to import is left for the code to meet."""
    for arg in sys.argv[1:]:
        if arg.startswith("--preimport="):
            for name in arg.split("=", 1)[1].split(","):
                try:
                    __import__(name)
                except Exception:  # noqa: BLE001 - the code will see it
                    pass


def reseed():
    """Random state drawn now, at the first call, not when the sandbox was
    built ahead: whatever a preimport seeded starts again from the
    kernel's entropy (os.urandom needs nothing)."""
    mod = sys.modules.get("random")
    if mod is not None:
        mod.seed()
    mod = sys.modules.get("numpy.random")
    if mod is not None:
        try:
            mod.seed()
        except Exception:  # noqa: BLE001 - a numpy without the legacy API
            pass


def main():
    signal.signal(signal.SIGINT, on_sigint)
    package_layer()
    preimport()
    devnull = os.open("/dev/null", os.O_RDWR)
    fd = CONTROL_FD
    if fd == 0:
        # stdin is for the code: /dev/null there, as in the native sandbox.
        fd = os.dup(0)
        os.dup2(devnull, 0)
    sock = socket.socket(fileno=fd)
    reader = Reader(sock)
    # Unbuffered text on 1 and 2, whatever they point at.
    sys.stdout = open(1, "w", buffering=1, closefd=False,
                      encoding="utf-8", errors="backslashreplace")
    sys.stderr = open(2, "w", buffering=1, closefd=False,
                      encoding="utf-8", errors="backslashreplace")
    global results
    # Figures render to files, never to a display the sandbox lacks; the
    # warning plt.show() gives on Agg would only confuse.
    os.environ.setdefault("MPLBACKEND", "Agg")
    warnings.filterwarnings("ignore", message=".*non-interactive.*")
    # display() as IPython has it: a builtin, so it is there in every
    # cell without binding a name among the user's.
    builtins.display = display
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    send_frame(sock, {"op": "ready", "python": sys.version.split()[0]})
    first = True
    while True:
        try:
            msg, fds = reader.frame()
        except (EOFError, ConnectionError):
            return 0
        if msg.get("op") != "exec" or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            continue
        budget = msg.get("results_max")
        results = Results(budget if isinstance(budget, int) else 0)
        saved_figures.clear()
        if first:
            reseed()
            first = False
        attach(fds[0], fds[1])
        status, code = run(str(msg.get("code", "")), namespace)
        detach(devnull)
        send_body(sock, done_message(msg.get("id"), status, code))


if __name__ == "__main__":
    sys.exit(main())
