// The wasm runtime's Python: Pyodide loaded once per session in this worker
// thread, running each call's code with driver.py's own functions (the same
// cells, results, display() and exit codes as the native driver), its
// stdout and stderr sent as "out" frames.  Writes every frame on the
// control socket, so output always precedes its "done".  Untrusted once
// the first code has run: mcp-exec checks all it says.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parentPort, workerData } from "node:worker_threads";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FD = workerData.control;
const OUT_CHUNK = 8192;		// bytes a frame; JSON at most 6x: < 64 KiB
const OUT_FLUSH_MS = 50;	// output waits no longer for company
// The sandbox's directories, seen by Python at the same paths.
const MOUNTS = ["/workspace", "/inputs", "/tmp", "/usr/share/zoneinfo"];

// Pyodide's NODEFS asks process.binding for the open flags; Node's
// permission model refuses process.binding: the same flags, from fs.
const binding = process.binding;
process.binding = (name) => name === "constants" ? { fs: fs.constants } :
    binding.call(process, name);

// It also fsyncs each file it closes, which the permission model refuses
// (fsync is not path-checked); the files are on tmpfs, where fsync is a
// no-op anyway.
fs.fsyncSync = () => {};

const { loadPyodide } = await import(path.join(HERE,
    "node_modules/pyodide/pyodide.mjs"));

function writeAll(bytes) {
	let off = 0;

	while (off < bytes.length)
		off += fs.writeSync(FD, bytes, off, bytes.length - off);
}

function sendBody(body) {
	const hdr = Buffer.alloc(4);

	hdr.writeUInt32BE(body.length, 0);
	writeAll(Buffer.concat([hdr, Buffer.from(body)]));
}

function send(obj) {
	sendBody(Buffer.from(JSON.stringify(obj), "utf8"));
}

// The running call's output: one pending run of bytes (one stream's), sent
// when the other stream writes, when it is a frame's worth, when it has
// waited OUT_FLUSH_MS, and at the call's end.
let callId = null;
let pendFd = 0;
let pend = [];
let pendLen = 0;
let pendSince = 0;
const decoders = { 1: new TextDecoder(), 2: new TextDecoder() };

function flushOut() {
	if (pendLen === 0)
		return;
	const all = Buffer.concat(pend);
	pend = [];
	pendLen = 0;
	for (let off = 0; off < all.length; off += OUT_CHUNK) {
		const part = all.subarray(off, off + OUT_CHUNK);
		const data = decoders[pendFd].decode(part, { stream: true });
		if (callId !== null && data.length > 0)
			send({ op: "out", id: callId, fd: pendFd, data });
	}
}

function output(fd, bytes) {
	if (pendLen > 0 && pendFd !== fd)
		flushOut();
	if (pendLen === 0)
		pendSince = Date.now();
	pendFd = fd;
	pend.push(Buffer.from(bytes));
	pendLen += bytes.length;
	if (pendLen >= OUT_CHUNK || Date.now() - pendSince >= OUT_FLUSH_MS)
		flushOut();
	return bytes.length;
}

const py = await loadPyodide({
	indexURL: path.join(HERE, "node_modules/pyodide") + "/",
	env: { ...process.env },
});
// A path the permission model refuses throws ERR_ACCESS_DENIED, which
// NODEFS knows no errno for (the call would seem to succeed): EACCES.
const nodefs = py.FS.filesystems.NODEFS;
const tryOp = nodefs.tryFSOperation;
nodefs.tryFSOperation = (f) => tryOp(() => {
	try {
		return f();
	} catch (e) {
		if (e && e.code === "ERR_ACCESS_DENIED")
			throw Object.assign(new Error(e.message), { code: "EACCES" });
		throw e;
	}
});
py.setStdout({ write: (b) => output(1, b) });
py.setStderr({ write: (b) => output(2, b) });
py.setInterruptBuffer(workerData.interrupt);
for (const m of [...MOUNTS, HERE]) {
	try {
		if (!fs.statSync(m).isDirectory())
			continue;
	} catch {
		continue;	// absent, or not ours to read
	}
	py.FS.mkdirTree(m);
	py.FS.mount(py.FS.filesystems.NODEFS, { root: m }, m);
}
py.globals.set("stockade_args", py.toPy(workerData.args));
py.globals.set("stockade_here", HERE);
py.globals.set("stockade_env", py.toPy(Object.keys(process.env)));
py.runPython(`
import builtins, os, sys, zoneinfo
sys.path.insert(0, stockade_here)
import driver
# The sandbox's fixed environment, nothing of Pyodide's defaults.
for k in list(os.environ):
    if k not in stockade_env:
        del os.environ[k]
zoneinfo.reset_tzpath(["/usr/share/zoneinfo"])
if os.path.isdir(driver.WORKSPACE):
    os.chdir(driver.WORKSPACE)
sys.argv = ["driver"] + list(stockade_args)
driver.preimport()
builtins.display = driver.display
_stockade_ns = {"__name__": "__main__", "__builtins__": builtins}

def _stockade_exec(msg_id, code, budget, first):
    driver.results = driver.Results(budget if isinstance(budget, int) else 0)
    driver.saved_figures.clear()
    if first:
        driver.reseed()
    status, rc = driver.run(code, _stockade_ns)
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass
    return driver.done_message(msg_id, status, rc)
`);
const execCell = py.globals.get("_stockade_exec");

// `mcp-exec run` (one-shot): the code from argv, its output straight on
// fds 1 and 2, its exit code the process's.  No control socket.
const oneshot = workerData.args.find((a) => a.startsWith("--oneshot="));
if (oneshot !== undefined) {
	py.setStdout({ write: (b) => fs.writeSync(1, b) });
	py.setStderr({ write: (b) => fs.writeSync(2, b) });
	const r = execCell(1, oneshot.slice("--oneshot=".length), 0, true);
	const done = JSON.parse(Buffer.from(r.toJs()).toString("utf8"));
	process.exit(done.exit_code & 0xff);
}

send({ op: "ready", python: py.runPython("import sys; sys.version.split()[0]"),
    pyodide: py.version });

let first = true;
parentPort.on("message", (msg) => {
	callId = msg.id;
	let body;
	try {
		const r = execCell(msg.id, String(msg.code ?? ""), msg.results_max,
		    first);
		body = r.toJs();
		r.destroy();
	} catch (e) {
		// A fault of Pyodide itself (a fatal error): no state to trust.
		output(2, Buffer.from(String(e && e.stack || e) + "\n"));
		flushOut();
		process.exit(1);
	}
	first = false;
	flushOut();
	callId = null;
	sendBody(body);
});
