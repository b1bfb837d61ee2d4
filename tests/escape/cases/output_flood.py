# An output flood: 1 GiB to stdout, no newline, every byte invalid UTF-8
# (0xff 0xfe 0x80 over and over).  Every byte is counted, only stdout_max
# (32 KiB: 2/3 head, 1/3 tail) is kept, with the omitted-bytes marker in
# between, and what comes back is valid text: each bad byte a U+FFFD.
# timeout_ms: 30000
# expect: r["exit_code"] == 0 and not r["timed_out"] and r["truncated"]
# expect: r["stdout_bytes"] == 2**30
# expect: r["stderr"] == "" and r["stderr_bytes"] == 0
# expect: re.search(r"\n\[\.\.\. (\d+) bytes omitted \.\.\.\]\n", r["stdout"])
# expect: int(re.search(r"\[\.\.\. (\d+) bytes omitted", r["stdout"]).group(1)) == r["stdout_bytes"] - r["limits"]["stdout_max"]
# expect: len(r["stdout"].encode("utf-8")) <= 3 * r["limits"]["stdout_max"] + 64
# expect: set(re.sub(r"\n\[\.\.\. \d+ bytes omitted \.\.\.\]\n", "", r["stdout"])) == {"\ufffd"}
# expect: [len(x) for x in re.split(r"\n\[\.\.\. \d+ bytes omitted \.\.\.\]\n", r["stdout"])] == [21845, 10923]
# expect: peak_within_limit(r)
# wasm_expect: r["truncated"] and r["stdout_bytes"] > 0 and r["stderr"] == ""
# wasm_expect: len(r["stdout"].encode("utf-8")) <= 3 * r["limits"]["stdout_max"] + 64
# wasm_expect: peak_within_limit(r)
# wasm_contained: Pyodide writes tens of MB/s, so 1 GiB may outlast the 30 s timeout (then the sandbox is killed); every byte written is counted and the capture stays bounded either way
import os
chunk = (b"\xff\xfe\x80" * 349526)[:1 << 20]
left = 1 << 30
while left:
    n = os.write(1, chunk[:left] if left < len(chunk) else chunk)
    left -= n
    if n < len(chunk):
        chunk = chunk[n:] + chunk[:n]   # keep the pattern going
