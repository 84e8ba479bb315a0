# deb.sh: sourced by the tests that build the Debian package (package.sh,
# tests/systemd/nspawn.sh): the package of a commit, built the way a
# fleet's build host would, from a clean git clone.

# build_deb REPO REF DIR [nocheck]: dpkg-buildpackage of REF (a commit or a
# tag of the git repository REPO) in a clone at DIR/src; atimed_*.deb ends
# in DIR, the build's output in DIR/build.log, and the clone is removed.
# Fails if the clone, the checkout or the build does. The build runs the
# unit tests (dh_auto_test) as a packager's or a build daemon's does, unless
# asked not to: only a past release, built to test an upgrade from it, is.
build_deb() {
        local repo=$1 ref=$2 dir=$3 opts="parallel=$(nproc)"

        [ "${4:-}" != nocheck ] || opts="nocheck $opts"
        rm -rf "$dir/src" && mkdir -p "$dir" || return 1
        git clone -q --no-hardlinks "$repo" "$dir/src" && git -C "$dir/src" checkout -q --detach "$ref" || return 1
        # Nothing of the make that runs this test reaches the build: its
        # MAKEFLAGS carry TESTS=, and dh_auto_test's make check would run
        # this very test again, inside the package build, without end.
        (cd "$dir/src" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u TESTS \
                DEB_BUILD_OPTIONS="$opts" dpkg-buildpackage -us -uc -b) >"$dir/build.log" 2>&1 ||
                return 1
        rm -rf "$dir/src"
        ls "$dir"/atimed_*.deb >/dev/null 2>&1
}

# Packages built for the tests are kept per commit, in build/systemd/deb/
# of the checkout (ATIMED_SYSTEMD_CACHE moves build/systemd), so that the
# systemd suite reuses what package.sh built.
deb_cache() {
        echo "${ATIMED_SYSTEMD_CACHE:-$(cd "$top_srcdir" && pwd -P)/build/systemd}/deb"
}

# keep_deb COMMIT DIR: keeps DIR's atimed_*.deb as the package of COMMIT.
keep_deb() {
        local to
        to=$(deb_cache)/$1
        [ ! -e "$to" ] || return 0
        rm -rf "$to.tmp" && mkdir -p "$to.tmp" && cp "$2"/atimed_*.deb "$to.tmp/" && mv "$to.tmp" "$to"
}

# cached_deb REPO COMMIT [nocheck]: prints the path of the package of
# COMMIT, built by build_deb the first time; on failure, the end of the
# build's output.
cached_deb() {
        local dir
        dir=$(deb_cache)/$2
        if ! ls "$dir"/atimed_*.deb >/dev/null 2>&1; then
                rm -rf "$dir" "$dir.tmp"
                build_deb "$1" "$2" "$dir.tmp" "${3:-}" || { tail -20 "$dir.tmp/build.log" | sed 's/^/#   /' >&2; return 1; }
                mv "$dir.tmp" "$dir" || return 1
        fi
        ls "$dir"/atimed_*.deb
}
