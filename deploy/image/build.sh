#!/bin/bash
# `make image`: the node-agent image, from Debian packages and this tree's
# release build, with no registry.  mmdebstrap lays a Debian root holding
# packages.txt's packages (and what they depend on) from the host's own
# apt sources, `make install` puts our programs in it, and podman imports
# the tarball into build/podman (deploy/image/podman.sh) as
# localhost/stockade:<commit> and localhost/stockade:dev.  Also writes
# build/image/stockade.oci.tar, the image as an OCI archive a node's
# runtime imports (docs/kubernetes.md).
# Reproducible as far as mmdebstrap allows: SOURCE_DATE_EPOCH is the
# commit's time, so the same commit and the same mirror give the same
# rootfs tarball (its sha256 is printed); the exact package versions are in
# the image, /usr/share/stockade/packages.txt, and PINS=FILE installs the
# versions such a list names.
# usage: deploy/image/build.sh   (after `make`; BUILD as for make)
set -eu
cd "$(dirname "$0")/../.."
ROOT=$PWD
# One mount namespace for every podman call (podman.sh).
[ -n "${STOCKADE_PODMAN_NS:-}" ] || exec deploy/image/podman.sh --ns "$0" "$@"
: "${BUILD:=build}"
B="$ROOT/$BUILD"
OUT="$B/image"
HERE="$ROOT/deploy/image"
# The audit daemon's user (deploy/kubernetes runs it as this uid).
AUDIT_UID=990
SUITE=bookworm

mkdir -p "$OUT/debs"
rev=$(git rev-parse HEAD)
[ -z "$(git status --porcelain -- . ':!build' 2>/dev/null)" ] || rev="$rev-dirty"
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)
export SOURCE_DATE_EPOCH

# The packages: names from packages.txt, or name=version from PINS.
list=${PINS:-$HERE/packages.txt}
pkgs=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list" | tr -s ' \n' ',,')
pkgs=${pkgs%,}

# The mirror is the host's: the Debian entries of its apt sources, which
# are what `make deps` installs from (deb822 .sources or one-line .list).
mirrors=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
    /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] && grep -qE "^[^#]*\b$SUITE(-updates|-security)?\b" "$f" &&
	    grep -q 'debian' "$f" && mirrors+=("$f")
done
[ ${#mirrors[@]} -gt 0 ] || { echo "image: no Debian $SUITE entry in the apt sources" >&2; exit 1; }

# Our programs, the session driver and the default policy, as `make
# install` lays them out under /usr; the scripts the pod's containers run;
# the audit daemon's user; what the image holds, listed.
# shellcheck disable=SC2016 # $1 is mmdebstrap's, expanded by its hooks
hooks=(
	--customize-hook="make --no-print-directory -s BUILD=$BUILD DESTDIR=\"\$1\" PREFIX=/usr install >/dev/null"
	--customize-hook="install -d \"\$1/usr/lib/stockade\" && install -m 0755 $HERE/rules-sync $HERE/container-start \"\$1/usr/lib/stockade/\""
	--customize-hook="echo 'stockade-audit:x:$AUDIT_UID:$AUDIT_UID:Stockade audit log:/nonexistent:/usr/sbin/nologin' >>\"\$1/etc/passwd\""
	--customize-hook="echo 'stockade-audit:x:$AUDIT_UID:' >>\"\$1/etc/group\""
	--customize-hook="dpkg-query --admindir=\"\$1/var/lib/dpkg\" -W -f '\${Package}=\${Version}\n' | LC_ALL=C sort >\"\$1/usr/share/stockade/packages.txt\""
	--customize-hook="cp \"\$1/usr/share/stockade/packages.txt\" $OUT/packages.txt"
	# Reproducible: nothing of the building host (mmdebstrap copies these).
	--customize-hook="rm -f \"\$1/etc/resolv.conf\" \"\$1/etc/hostname\""
)
# Downloaded packages are kept in build/image/debs for the next build.
cache=(
	--skip=download/empty --skip=essential/unlink
	--setup-hook="mkdir -p \"\$1/var/cache/apt/archives\""
	--setup-hook="sync-in $OUT/debs /var/cache/apt/archives/"
	--customize-hook="sync-out /var/cache/apt/archives $OUT/debs"
	--customize-hook="rm -f \"\$1\"/var/cache/apt/archives/*.deb"
)
# Depends only, never Recommends (python3-pip's would bring a compiler);
# neither manuals, info pages nor translations; each package's copyright
# stays (what the image redistributes).
trim=(
	--aptopt='APT::Install-Recommends "false"'
	--dpkgopt='path-exclude=/usr/share/man/*'
	--dpkgopt='path-exclude=/usr/share/info/*'
	--dpkgopt='path-exclude=/usr/share/locale/*'
	--dpkgopt='path-exclude=/usr/share/doc/*'
	--dpkgopt='path-include=/usr/share/doc/*/copyright'
)
start=$(date +%s)
mmdebstrap --quiet --variant=essential --mode=root --format=tar \
    --include="$pkgs" "${trim[@]}" "${cache[@]}" "${hooks[@]}" \
    "$SUITE" "$OUT/rootfs.tar" "${mirrors[@]}"
sha=$(sha256sum "$OUT/rootfs.tar" | cut -d' ' -f1)
echo "image: rootfs $OUT/rootfs.tar ($(du -m "$OUT/rootfs.tar" | cut -f1) MiB, sha256 $sha) in $(( $(date +%s) - start ))s"

# The image: the tarball as its one layer, labelled with the commit.
tag=localhost/stockade:${rev:0:12}
podman() { "$HERE/podman.sh" "$@"; }
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
podman import --quiet \
    --change "LABEL org.opencontainers.image.revision=$rev" \
    --change "LABEL org.opencontainers.image.created=$created" \
    --change "LABEL org.opencontainers.image.title=stockade" \
    --change "LABEL org.opencontainers.image.description=Stockade node agent: mcp-exec, netguard, stockade-auditd" \
    --change "LABEL io.stockade.rootfs.sha256=$sha" \
    --change "USER $AUDIT_UID:$AUDIT_UID" \
    --change 'ENV PATH=/usr/sbin:/usr/bin' \
    --change 'CMD ["/usr/bin/stockade"]' \
    "$OUT/rootfs.tar" "$tag" >/dev/null
podman tag "$tag" localhost/stockade:dev
# The image an earlier build left, if nothing runs it.
podman image prune --force >/dev/null
rm -f "$OUT/stockade.oci.tar"
podman save --quiet --format oci-archive -o "$OUT/stockade.oci.tar" "$tag"
echo "image: $tag (also localhost/stockade:dev), revision $rev; OCI archive $OUT/stockade.oci.tar"
