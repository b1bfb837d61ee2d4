#!/bin/bash
# The HTTP request head is read strictly (RFC 9112): two Content-Lengths,
# "+N", a space before the colon, a NUL in a value, a transfer coding we
# do not apply, folded lines, HTTP/0.9, absolute-form targets, bodies on
# HEAD, and their siblings each get one 4xx/5xx and the connection closes;
# nothing pipelined behind a refused head is answered.  Valid requests,
# chunked or pipelined, still work; after each group a normal client is
# served.
. "$(dirname "$0")/lib.sh"

trap 'st=$?; [ $st = 0 ] || tail -30 "$T/mx.err" >&2; stop_mx || true; cleanup' EXIT

start_auditd
mcp_rules
start_mx

PYTHONPATH="$HERE" "$PY" - "$PORT" <<'EOF' || fail "strict HTTP heads (see above)"
import json, sys
from httpraw import exchange, statuses, initialize, INIT

port = int(sys.argv[1])
H = b"Host: 127.0.0.1:%d\r\n" % port
A = b"Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
body = json.dumps(INIT).encode()
failed = []

def case(name, data, want, **kw):
    resp = exchange(port, data, **kw)
    got = statuses(resp)
    if got != want:
        failed.append(name)
        print("FAIL %s: statuses %s, want %s\n  %r" % (name, got, want, resp[:300]))
    else:
        print("ok   %s: %s" % (name, got))

def healthy(after):
    st, sid = initialize(port)
    if st != 200 or not sid:
        failed.append("healthy after " + after)
        print("FAIL server not healthy after %s: %s" % (after, st))

# Finding 4: two different Content-Lengths; the rest of the body must not
# be read as a second request.
smuggled = b"GET /mcp HTTP/1.1\r\n" + H + b"\r\n"
case("two Content-Lengths",
     b"POST /mcp HTTP/1.1\r\n" + H + A + b"Content-Length: %d\r\n"
     b"Content-Length: %d\r\n\r\n" % (len(body), len(body) + len(smuggled))
     + body + smuggled, [400])
case("two equal Content-Lengths",
     b"POST /mcp HTTP/1.1\r\n" + H + A + b"Content-Length: %d\r\n"
     b"Content-Length: %d\r\n\r\n" % (len(body), len(body)) + body, [400])
case("Content-Length list",
     b"POST /mcp HTTP/1.1\r\n" + H + A + b"Content-Length: %d, %d\r\n\r\n"
     % (len(body), len(body)) + body, [400])
healthy("Content-Length")

# Finding 5 and its siblings.
case("Content-Length +N",
     b"POST /mcp HTTP/1.1\r\n" + H + A + b"Content-Length: +%d\r\n\r\n"
     % len(body) + body, [400])
case("Content-Length -0", b"POST /mcp HTTP/1.1\r\n" + H + A +
     b"Content-Length: -0\r\n\r\n", [400])
case("Content-Length hex", b"POST /mcp HTTP/1.1\r\n" + H + A +
     b"Content-Length: 0x10\r\n\r\n" + b"x" * 16, [400])
case("space before colon beside Content-Length",
     b"POST /mcp HTTP/1.1\r\n" + H + A + b"Transfer-Encoding : chunked\r\n"
     b"Content-Length: %d\r\n\r\n" % len(body) + body, [400])
case("NUL in a header value",
     b"POST /mcp HTTP/1.1\r\n" + H + A + b"X-Note: a\x00b\r\n"
     b"Content-Length: %d\r\n\r\n" % len(body) + body, [400])
case("control byte in a header value",
     b"GET /mcp HTTP/1.1\r\n" + H + b"X-Note: a\x01b\r\n\r\n", [400])
case("gzip, chunked", b"POST /mcp HTTP/1.1\r\n" + H + A +
     b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", [501])
case("chunked twice", b"POST /mcp HTTP/1.1\r\n" + H + A +
     b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
     [501])
case("Transfer-Encoding and Content-Length", b"POST /mcp HTTP/1.1\r\n" + H +
     A + b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
     [400])
case("Transfer-Encoding in HTTP/1.0", b"POST /mcp HTTP/1.0\r\n" + H + A +
     b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", [400])
case("folded header line", b"GET /mcp HTTP/1.1\r\n" + H +
     b"X-A: one\r\n two\r\n\r\n", [400])
case("space in a field name", b"GET /mcp HTTP/1.1\r\n" + H +
     b"X A: one\r\n\r\n", [400])
case("HTTP/0.9", b"GET /mcp\r\n\r\n", [400])
case("HTTP/2.0 on HTTP/1", b"GET /mcp HTTP/2.0\r\n" + H + b"\r\n", [400])
case("absolute-form target", b"GET http://evil.example/mcp HTTP/1.1\r\n" +
     H + b"\r\n", [400])
case("no Host in HTTP/1.1", b"GET /mcp HTTP/1.1\r\n\r\n", [400])
case("two Hosts", b"GET /mcp HTTP/1.1\r\n" + H + H + b"\r\n", [400])
case("body on HEAD", b"HEAD /mcp HTTP/1.1\r\n" + H + b"Content-Length: %d"
     b"\r\n\r\n" % len(smuggled) + smuggled, [400])
case("our own marker header", b"GET /mcp HTTP/1.1\r\n" + H +
     b"Stockade-Refusal: 200 fine\r\n\r\n", [400])
case("too many header fields", b"GET /mcp HTTP/1.1\r\n" + H +
     b"".join(b"X-%d: v\r\n" % i for i in range(100)) + b"\r\n", [400])
case("head over 16 KiB", b"GET /mcp HTTP/1.1\r\n" + H + b"X-Big: " +
     b"a" * 17000 + b"\r\n\r\n", [431])
case("unknown method", b"BREW /mcp HTTP/1.1\r\n" + H + b"\r\n", [501])
case("malformed chunk size", b"POST /mcp HTTP/1.1\r\n" + H + A +
     b"Transfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n", [413])
healthy("header syntax")

# Pipelining: requests behind a good one are answered in order; nothing
# behind a refused one is.
get = b"GET /mcp HTTP/1.1\r\n" + H + b"\r\n"
case("two pipelined GETs", get + get + b"GET /mcp HTTP/1.1\r\n" + H +
     b"Connection: close\r\n\r\n", [405, 405, 405])
case("good, bad, good", get + b"GET /mcp HTTP/1.1\r\n" + H +
     b"Content-Length: +0\r\n\r\n" + get, [405, 400])
case("bad, then good", b"GET /mcp HTTP/1.1\r\n" + H + b"X: \x00\r\n\r\n" +
     get, [400])
# evhttp's answer to a body that ends mid-way (the filter made it
# unreadable) is 413; what matters is that nothing after it is read.
# A valid chunked body is taken, re-encoded, as one message.
half = len(body) // 2
case("chunked initialize", [b"POST /mcp HTTP/1.1\r\n" + H + A +
     b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
     b"%x\r\n" % half + body[:half] + b"\r\n",
     b"%x;ext=1\r\n" % (len(body) - half) + body[half:] + b"\r\n",
     b"0\r\nX-Trailer: t\r\n\r\n"], [200])
# A head sent a byte at a time still works (and is not re-parsed each time).
case("head byte by byte", [bytes([c]) for c in get[:-2]] + [b"Connection: close\r\n\r\n"],
     [405])
healthy("pipelining")

if failed:
    print("%d failed: %s" % (len(failed), ", ".join(failed)))
    sys.exit(1)
EOF
note "two Content-Lengths, +N, space before colon, NUL, gzip+chunked, folds, HTTP/0.9, absolute-form, HEAD bodies: refused; pipelining in order, none after a refusal"

stop_mx || fail "mcp-exec exit status $? at SIGTERM"
verify
