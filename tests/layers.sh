#!/bin/sh
# `make lint`: mcp-exec's layers depend one way.  A file in a layer folder
# includes headers of its own folder, of the folders below it, or of lib/
# (and system headers); never one above it or beside it.  Top-level files
# (main.c, reload.c, preflight.c, run.c) may include any layer.
#
#   transport -> protocol -> tools -> sessions -> sandbox
#   ops observes sessions (and is used by transport for /metrics)
set -u
cd "$(dirname "$0")/.."
below() {
	case $1 in
	transport) echo "protocol tools sessions sandbox ops" ;;
	protocol) echo "tools sessions sandbox" ;;
	tools) echo "sessions sandbox" ;;
	sessions) echo "sandbox" ;;
	ops) echo "sessions sandbox" ;;
	sandbox) echo "" ;;
	*) echo "?" ;;
	esac
}
bad=0
for f in mcp-exec/*/*.[ch]; do
	layer=$(basename "$(dirname "$f")")
	[ "$layer" = driver ] && continue
	allowed=$(below "$layer")
	if [ "$allowed" = "?" ]; then
		echo "layers: $f: $layer/ is not a known layer (add it to $0)"
		bad=1
		continue
	fi
	for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
		case $inc in
		*/*)
			dir=${inc%%/*}
			ok=0
			for a in $allowed; do [ "$dir" = "$a" ] && ok=1; done
			[ $ok = 1 ] || { echo "layers: $f includes $inc ($layer/ may use: ${allowed:-lib/ only})"; bad=1; } ;;
		*)
			[ -f "$(dirname "$f")/$inc" ] || [ -f "lib/$inc" ] ||
			    [ "$inc" = seccomp_bpf.h ] ||
			    { echo "layers: $f includes \"$inc\": not in $layer/ nor lib/"; bad=1; } ;;
		esac
	done
done
[ $bad = 0 ] && echo "layers: mcp-exec's folders include one way"
exit $bad
