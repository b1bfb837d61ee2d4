#!/bin/bash
# What ships besides the programs: the manual pages lint clean with mandoc
# and document every option and subcommand the programs' getopt tables
# accept (and no option they do not), `make install` puts pages and
# systemd units where they belong with @PREFIX@ filled in, and
# systemd-analyze verify accepts the installed units without a word.
# mandoc or systemd-analyze missing skips only their part.
. "$(dirname "$0")/lib.sh"

MAN="$ROOT/docs/man"
PAGES="stockade.1 stockade-auditd.8 mcp-exec.8 netguard.8 stockade-rules.5
stockade-audit.5"
UNITS="stockade-auditd.service netguard.service mcp-exec.service"
PREFIX=/opt/stockade			# not the default: paths must follow it
nbad=0

bad() { echo "  BAD: $*" >&2; nbad=$((nbad + 1)); }

# ------------------------------------------------------------ the pages
for p in $PAGES; do
	[ -f "$MAN/$p" ] || { bad "docs/man/$p is missing"; continue; }
	# .Dt NAME SECTION agrees with the file's name.
	want="$(echo "${p%.*}" | tr 'a-z' 'A-Z') ${p##*.}"
	grep -qx "\.Dt $want" "$MAN/$p" || bad "$p: .Dt is not '$want'"
done
[ "$nbad" = 0 ] || fail "$nbad problem(s) with the pages themselves"

if command -v mandoc >/dev/null; then
	before=$nbad
	for p in $PAGES; do
		out=$(mandoc -Tlint -Wwarning "$MAN/$p" 2>&1) || bad "mandoc -Tlint: $out"
	done
	[ "$nbad" != "$before" ] ||
	    note "mandoc -Tlint -Wwarning: $(echo $PAGES | wc -w) pages clean"
else
	note "mandoc missing: lint not run"
fi

# Cross-references to our own pages name pages that exist.
for x in $(cat "$MAN"/* | sed -n 's/^\.Xr \(stockade[a-z-]*\|mcp-exec\|netguard\) \([0-9]\).*/\1.\2/p' |
    sort -u); do
	[ -f "$MAN/$x" ] || bad "a page refers to $x, which does not exist"
done

# ------------------------------------------------------------ options
# Long options: the `{ "name", ..._argument` entries of getopt_long tables.
long_opts() {
	grep -ohE '\{ *"[a-z0-9-]+", *(no|required|optional)_argument' "$@" |
	    sed -E 's/\{ *"([^"]+)".*/\1/' | sort -u
}
# Short options: the letters of getopt_long's option strings.
short_opts() {
	grep -ohE 'getopt_long\(argc, argv, "[^"]*"' "$@" |
	    sed -E 's/.*"([^"]*)"$/\1/' | tr -d ':+-' | fold -w1 | sort -u
}
# Subcommands: the words compared with argv[1] (or `sub`), and the table
# of `stockade audit`.
subcommands() {
	{ grep -ohE 'strcmp\((argv\[1\]|sub), "[a-z]+"\)' "$@" |
	    sed -E 's/.*"([a-z]+)".*/\1/'
	  grep -ohE '\{ "[a-z]+", audit_[a-z]+ \}' "$@" |
	    sed -E 's/\{ "([a-z]+)".*/\1/'; } | sort -u
}

# check_page PAGE SOURCE...: PAGE documents what SOURCE... accept.
check_page() {
	local page="$MAN/$1" name o n=0 before=$nbad
	name=$1
	shift
	for f in "$@"; do [ -f "$ROOT/$f" ] || fail "$f: no such source file"; done
	(cd "$ROOT" && long_opts "$@") >"$T/long"
	[ -s "$T/long" ] || fail "no long options found in $*: did the tables change form?"
	while read -r o; do
		n=$((n + 1))
		grep -qE "Fl -$o([^A-Za-z0-9-]|\$)" "$page" ||
		    bad "$name does not document --$o ($*)"
	done <"$T/long"
	for o in $(cd "$ROOT" && short_opts "$@"); do
		n=$((n + 1))
		grep -qE "^\.It Fl $o( |\$)" "$page" ||
		    bad "$name has no '.It Fl $o' for -$o ($*)"
	done
	for o in $(cd "$ROOT" && subcommands "$@"); do
		n=$((n + 1))
		grep -qE "^\.(It )?Cm ([a-z]+ )*$o( |\$)" "$page" ||
		    bad "$name does not document the subcommand '$o' ($*)"
	done
	# And the other way: no option the program does not know.  --help is
	# every program's, stockade's outside a table (test_cli.sh runs it).
	for o in $(grep -ohE 'Fl -[a-z][a-z0-9-]*' "$page" | sed 's/^Fl --*//' | sort -u); do
		[ "$o" = help ] || grep -qx -- "$o" "$T/long" ||
		    bad "$name documents --$o, which $* do not accept"
	done
	[ "$nbad" != "$before" ] ||
	    note "$name: $n options and subcommands, each documented"
}

check_page stockade-auditd.8 auditd/main.c
check_page mcp-exec.8 mcp-exec/main.c mcp-exec/server_main.c
check_page netguard.8 netguard/main.c
check_page stockade.1 $(cd "$ROOT" && ls cli/*.c cli/*.h)

# ------------------------------------------------------------ units
for u in $UNITS; do
	f="$ROOT/dist/$u"
	[ -f "$f" ] || { bad "dist/$u is missing"; continue; }
	grep -q "^ExecStart=@PREFIX@/sbin/" "$f" || bad "$u: ExecStart is not @PREFIX@/sbin/..."
	for d in $(sed -n 's/^Documentation=//p' "$f"); do
		case $d in
		man:stockade*|man:mcp-exec*|man:netguard*)
			x=${d#man:}; x="${x%(*}.$(echo "$x" | tr -dc 0-9)"
			[ -f "$MAN/$x" ] || bad "$u: Documentation=$d: no docs/man/$x";;
		esac
	done
done

# ------------------------------------------------------------ make install
# -o all: install what was built; never rebuild (and never with other
# flags) into the build directory the other tests use.
D="$T/root"
before=$nbad
out=$(make -C "$ROOT" -s -o all install DESTDIR="$D" PREFIX="$PREFIX" \
    BUILD="$BUILD" 2>&1) || { echo "$out" >&2; fail "make install failed"; }
for p in $PAGES; do
	[ -f "$D$PREFIX/share/man/man${p##*.}/$p" ] ||
	    bad "make install: no $PREFIX/share/man/man${p##*.}/$p"
done
for u in $UNITS; do
	f="$D$PREFIX/lib/systemd/system/$u"
	[ -f "$f" ] || { bad "make install: no $PREFIX/lib/systemd/system/$u"; continue; }
	[ "$(stat -c %a "$f")" = 644 ] || bad "$u installed with mode $(stat -c %a "$f")"
	! grep -q '@PREFIX@' "$f" || bad "$u: @PREFIX@ left in the installed unit"
	cmp -s "$f" <(sed "s|@PREFIX@|$PREFIX|g" "$ROOT/dist/$u") ||
	    bad "$u: installed unit differs from dist/$u with @PREFIX@ replaced"
	# Every command the unit runs from the prefix was installed.
	for c in $(sed -n 's/^Exec[A-Za-z]*=[-+@!:]*\([^ ]*\).*/\1/p' "$f"); do
		case $c in
		"$PREFIX"/*) [ -x "$D$c" ] || bad "$u runs $c, which make install did not install";;
		esac
	done
done
for b in sbin/stockade-auditd sbin/mcp-exec sbin/mcp-exec-server sbin/netguard \
    bin/stockade; do
	[ -x "$D$PREFIX/$b" ] || bad "make install: no $PREFIX/$b"
done
# The installed mcp-exec finds the installed driver, whatever PREFIX is
# (driver_dir: ~ in the shipped rules: beside the program).
chmod 0711 "$T"
out=$("$D$PREFIX/sbin/mcp-exec" -nv --rules "$D$PREFIX/share/stockade/rules" \
    --state-dir "$T/dist-state" --audit-socket "$T/a.sock" 2>&1) ||
    bad "installed mcp-exec -n: $out"
echo "$out" | grep -q "driver $D$PREFIX/share/stockade/driver," ||
    bad "installed mcp-exec does not find the installed driver: $out"
[ "$nbad" != "$before" ] ||
    note "make install: $(echo $PAGES | wc -w) pages and $(echo $UNITS | wc -w) units in place"

# ------------------------------------------------------------ systemd-analyze
# The installed units, with the prefix pointed into DESTDIR so that every
# command exists, and MANPATH at the installed pages so that verify's
# Documentation= check finds ours.  Any message at all is a failure:
# verify exits 0 on unknown keys and unparsable values.
sa_skip=""
if ! command -v systemd-analyze >/dev/null; then
	sa_skip="systemd-analyze missing"
else
	mkdir "$T/probe"
	printf '[Unit]\nDescription=probe\n[Service]\nExecStart=/bin/true\n' \
	    >"$T/probe/probe.service"
	systemd-analyze verify --man=no "$T/probe/probe.service" >"$T/probe/out" 2>&1 &&
	    [ ! -s "$T/probe/out" ] ||
	    sa_skip="systemd-analyze verify cannot run here: $(head -1 "$T/probe/out")"
fi
if [ -n "$sa_skip" ]; then
	note "$sa_skip: units not verified"
else
	mkdir "$T/units"
	for u in $UNITS; do
		sed "s|$PREFIX/|$D$PREFIX/|g" "$D$PREFIX/lib/systemd/system/$u" >"$T/units/$u"
	done
	man_opt=--man=yes
	command -v man >/dev/null || man_opt=--man=no
	st=0
	(cd "$T/units" && MANPATH="$D$PREFIX/share/man" \
	    systemd-analyze verify $man_opt $UNITS) >"$T/verify.out" 2>&1 || st=$?
	if [ $st != 0 ] || [ -s "$T/verify.out" ]; then
		sed 's/^/    /' "$T/verify.out" >&2
		bad "systemd-analyze verify (status $st)"
	else
		note "systemd-analyze verify $man_opt: $(echo $UNITS | wc -w) units clean"
	fi
	for u in $UNITS; do
		lvl=$(systemd-analyze security --offline=true --no-pager "$T/units/$u" 2>/dev/null |
		    sed -n 's/.*Overall exposure level for \([^:]*\): \([0-9.]* [A-Z]*\).*/\2/p')
		[ -z "$lvl" ] || note "systemd-analyze security $u: $lvl"
	done
fi

[ "$nbad" = 0 ] || fail "$nbad problem(s)"
