// Preloaded into every Node process of the client suite (NODE_OPTIONS
// --import, so mcp-remote's child too): a socket may connect to loopback or
// a Unix socket only.  These libraries carry telemetry and tracing
// exporters (Mastra's PostHog, OpenAI's trace exporter, LangSmith) and
// OAuth discovery; none of it may leave the machine, and an attempt is an
// error the test sees rather than a silent packet.
import net from "node:net";

const connect = net.Socket.prototype.connect;

function loopback(host) {
  if (host === undefined || host === "localhost")
    return true;
  const h = host.replace(/^\[|\]$/g, "");
  return h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h) ||
    /^::ffff:127\.\d+\.\d+\.\d+$/.test(h);
}

net.Socket.prototype.connect = function (...args) {
  const a = Array.isArray(args[0]) ? args[0][0] : args[0];
  let host;
  if (a !== null && typeof a === "object")
    // An https request's options carry its URL path as path, beside host.
    host = a.host ?? (a.path !== undefined ? undefined : "localhost");
  else if (typeof a === "number" || /^\d+$/.test(String(a)))
    host = typeof args[1] === "string" ? args[1] : "localhost";
  if (!loopback(host))
    throw new Error(`loopback-only.mjs: refused a connection to ${host}`);
  return connect.apply(this, args);
};

// lib.mjs refuses to run a test without this guard.
globalThis[Symbol.for("stockade.loopbackOnly")] = true;
