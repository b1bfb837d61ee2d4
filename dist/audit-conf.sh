#!/bin/sh
# Prints the audit.yaml `make run` gives stockade-auditd: RULES/audit.yaml
# itself when run as root (root is the writer it names), else a copy in
# STATE with the invoking user added to writers, made anew each time so
# that `make reload` applies an edited rules/audit.yaml either way.
# usage: dist/audit-conf.sh RULES STATE
set -eu
rules=$1 state=$2
if [ "$(id -u)" = 0 ]; then
	echo "$rules/audit.yaml"
	exit 0
fi
me=$(id -un)
sed "s/^writers: \[root\]/writers: [root, $me]/" "$rules/audit.yaml" \
    >"$state/audit.yaml.tmp"
mv "$state/audit.yaml.tmp" "$state/audit.yaml"
echo "$state/audit.yaml"
