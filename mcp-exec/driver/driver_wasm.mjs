// Stockade session driver for the wasm runtime: one Node.js process per
// session, Python (Pyodide, WebAssembly) in a worker thread of it, inside
// the native sandbox.  It speaks driver.py's protocol on the control socket
// (fd 3), with one difference: Node cannot receive descriptors, so the
// call's output comes as frames on the socket instead of on pipes:
//   driver -> mcp-exec  {"op": "out", "id": N, "fd": 1|2, "data": "..."}
// (bytes of the running call's stdout or stderr, in order, before its
// "done").  This thread reads the socket and turns SIGINT into Pyodide's
// interrupt buffer (KeyboardInterrupt in the code); the worker runs the
// code and writes every frame.  mcp-exec trusts nothing either says.
import fs from "node:fs";
import { Worker } from "node:worker_threads";

const CONTROL_FD = 3;
const HEADER = 4;
const FRAME_MAX = 16 * 1024 * 1024;	// as driver.py
const READ_CHUNK = 65536;
const SIGINT_CODE = 2;			// what Pyodide's buffer takes for SIGINT

const interrupt = new Int32Array(new SharedArrayBuffer(4));
const worker = new Worker(new URL("./driver_wasm_worker.mjs",
    import.meta.url), { workerData: { interrupt, control: CONTROL_FD,
    args: process.argv.slice(2) } });

// Only code that is running is interrupted: the buffer is cleared as each
// call's code goes to the worker (frames), so a late signal is dropped.
process.on("SIGINT", () => Atomics.store(interrupt, 0, SIGINT_CODE));
worker.on("error", (e) => {
	process.stderr.write("driver_wasm: " + (e && e.stack || e) + "\n");
	process.exit(1);
});
worker.on("exit", (code) => process.exit(code));

let buf = Buffer.alloc(0);

function frames() {
	while (buf.length >= HEADER) {
		const len = buf.readUInt32BE(0);
		if (len === 0 || len > FRAME_MAX)
			process.exit(1);
		if (buf.length < HEADER + len)
			return;
		const body = buf.subarray(HEADER, HEADER + len).toString("utf8");
		buf = buf.subarray(HEADER + len);
		let msg;
		try {
			msg = JSON.parse(body);
		} catch {
			continue;
		}
		if (msg && msg.op === "exec") {
			// Cleared here, on the thread SIGINT is handled on, before
			// the code can start: an interrupt for the last call is
			// dropped, none for this one can be.
			Atomics.store(interrupt, 0, 0);
			worker.postMessage(msg);
		}
	}
}

// Blocking reads on libuv's thread pool: the descriptor stays blocking,
// so the worker's writes on it never meet EAGAIN.
function readLoop() {
	const chunk = Buffer.alloc(READ_CHUNK);
	fs.read(CONTROL_FD, chunk, 0, READ_CHUNK, null, (err, n) => {
		if (err || n === 0)
			process.exit(0);	// mcp-exec closed: the session ends
		buf = Buffer.concat([buf, chunk.subarray(0, n)]);
		frames();
		readLoop();
	});
}

// One-shot (`mcp-exec run`): the worker has the code; no control socket.
if (!process.argv.some((a) => a.startsWith("--oneshot=")))
	readLoop();
