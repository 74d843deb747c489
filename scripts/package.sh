#!/usr/bin/env bash
# Builds what an operator installs, into target/package/:
#
#   yaraus_VERSION-1_amd64.deb   cargo-deb: /usr/bin/yaraus, every man page
#       (gzipped), bash/zsh/fish completions, the systemd templates of
#       packaging/systemd (seq serve, hilo agent, one supervised worker),
#       example env files, README, CHANGELOG, docs/service.md, copyright
#   yaraus-VERSION-x86_64-unknown-linux-musl.tar.gz   a static binary (musl)
#       with the man pages, completions, README, CHANGELOG and LICENSE
#   SHA256SUMS                   of the files above
#
# and prints the .deb's path as the last line of stdout (everything else
# goes to stderr), so that `deb=$(scripts/package.sh | tail -n1)` works.
#
# Options:
#   --binary PATH  package this yaraus binary (stripped copy) instead of
#                  building a release one; tests/package passes the debug
#                  binary that `cargo test` built, so the test adds no
#                  second LTO build to CI. Implies --no-tarball.
#   --no-tarball   skip the static tarball (SHA256SUMS covers the .deb)
#   --fast         light compression (cargo deb --fast): for tests
#
# The release build uses the release profile (fat LTO: slow, once per
# release); the tarball's is a second one, for the musl target. Installs
# cargo-deb (pinned), the musl target and musl-tools when missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

CARGO_DEB_VERSION=3.8.0
MUSL_TARGET=x86_64-unknown-linux-musl

binary=""
tarball=1
fast=()
while [ $# -gt 0 ]; do
    case "$1" in
    --binary)
        binary=$(realpath "${2:?--binary needs a path}")
        tarball=0
        shift 2
        ;;
    --no-tarball)
        tarball=0
        shift
        ;;
    --fast)
        fast=(--fast)
        shift
        ;;
    *)
        echo "package.sh: unknown option $1 (see the header of $0)" >&2
        exit 2
        ;;
    esac
done

say() { echo "package.sh: $*" >&2; }

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
out=target/package
stage=$out/stage
rm -rf "$stage"
mkdir -p "$stage/man" "$stage/completions" "$stage/doc"

# cargo-deb, pinned: the .deb's layout must not change under us.
if [ "$(cargo deb --version 2>/dev/null | awk '{print $2}')" != "$CARGO_DEB_VERSION" ]; then
    say "installing cargo-deb $CARGO_DEB_VERSION (cargo install --locked)"
    cargo install cargo-deb --version "$CARGO_DEB_VERSION" --locked >&2
fi
for tool in dpkg-shlibdeps strip gzip; do
    command -v "$tool" >/dev/null 2>&1 || {
        say "$tool is missing: run scripts/install-test-tools.sh (dpkg-dev, binutils, gzip)"
        exit 1
    }
done

if [ -z "$binary" ]; then
    say "building the release binary (fat LTO: minutes)"
    cargo build --release --locked --bin yaraus >&2
    binary=target/release/yaraus
fi
cp "$binary" "$stage/yaraus"
strip --strip-unneeded --remove-section=.comment "$stage/yaraus"
chmod 755 "$stage/yaraus"

# Man pages as Debian wants them: gzip -9, no name or time stamp (-n).
for page in man/*.1; do
    name=$(basename "$page")
    gzip -9n <"man/$name" >"$stage/man/$name.gz"
done

# Completions, from the binary being packaged (same clap definitions).
"$stage/yaraus" completions bash >"$stage/completions/yaraus"
"$stage/yaraus" completions zsh >"$stage/completions/_yaraus"
"$stage/yaraus" completions fish >"$stage/completions/yaraus.fish"

# Documents: the upstream changelog under Debian's name, and the guides.
gzip -9n <CHANGELOG.md >"$stage/doc/changelog.gz"
gzip -9n <README.md >"$stage/doc/README.md.gz"
gzip -9n <docs/service.md >"$stage/doc/service.md.gz"

# A Debian changelog for this build (cargo-deb gzips it into
# changelog.Debian.gz); its date is the last commit's, so that two builds of
# one commit are the same.
date_rfc2822=$(date -R -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")
maintainer=$(sed -n 's/^maintainer = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
cat >"$stage/changelog.Debian" <<EOF
yaraus ($version-1) unstable; urgency=medium

  * Built from the yaraus sources by scripts/package.sh; the changes are
    in /usr/share/doc/yaraus/changelog.gz.

 -- $maintainer  $date_rfc2822
EOF

say "building the .deb (cargo deb --no-build)"
rm -f "$out"/yaraus_*.deb
cargo deb --no-build --no-strip "${fast[@]}" --output "$out/" >&2
deb=$(ls "$out"/yaraus_"$version"-1_*.deb)

sums=("$(basename "$deb")")
if [ "$tarball" = 1 ]; then
    if ! rustup target list --installed | grep -qx "$MUSL_TARGET"; then
        say "adding the $MUSL_TARGET target (rustup)"
        rustup target add "$MUSL_TARGET" >&2
    fi
    # ring (rustls's crypto) compiles C for the target: musl-gcc.
    command -v musl-gcc >/dev/null 2>&1 || scripts/apt-install.sh musl-tools >&2
    say "building the static binary ($MUSL_TARGET, release profile)"
    cargo build --release --locked --bin yaraus --target "$MUSL_TARGET" >&2
    name=yaraus-$version-$MUSL_TARGET
    tree=$stage/$name
    mkdir -p "$tree/man" "$tree/completions"
    cp "target/$MUSL_TARGET/release/yaraus" "$tree/yaraus"
    strip --strip-unneeded --remove-section=.comment "$tree/yaraus"
    if ldd "$tree/yaraus" 2>&1 | grep -q '=>'; then
        say "$tree/yaraus is not static: $(ldd "$tree/yaraus" 2>&1)"
        exit 1
    fi
    cp man/*.1 "$tree/man/"
    "$tree/yaraus" completions bash >"$tree/completions/yaraus.bash"
    "$tree/yaraus" completions zsh >"$tree/completions/_yaraus"
    "$tree/yaraus" completions fish >"$tree/completions/yaraus.fish"
    cp README.md CHANGELOG.md LICENSE "$tree/"
    # Owner, order and times fixed, so that the tarball depends only on its files.
    tar --sort=name --owner=0 --group=0 --numeric-owner \
        --mtime="@$(git log -1 --format=%ct 2>/dev/null || date +%s)" \
        -C "$stage" -czf "$out/$name.tar.gz" "$name"
    sums+=("$name.tar.gz")
fi

(cd "$out" && sha256sum "${sums[@]}" >SHA256SUMS)
say "wrote $out/SHA256SUMS:"
sed 's/^/  /' "$out/SHA256SUMS" >&2
echo "$deb"
