# deb.sh: sourced by the tests that build the Debian package (package.sh,
# tests/systemd/nspawn.sh): the package of a commit, built the way a
# fleet's build host would, from a clean git clone.

# build_deb REPO REF DIR: dpkg-buildpackage of REF (a commit or a tag of the
# git repository REPO) in a clone at DIR/src; atimed_*.deb ends in DIR, the
# build's output in DIR/build.log, and the clone is removed. Fails if the
# clone, the checkout or the build does.
build_deb() {
        local repo=$1 ref=$2 dir=$3

        rm -rf "$dir/src" && mkdir -p "$dir" || return 1
        git clone -q --no-hardlinks "$repo" "$dir/src" && git -C "$dir/src" checkout -q --detach "$ref" || return 1
        (cd "$dir/src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -us -uc -b) >"$dir/build.log" 2>&1 ||
                return 1
        rm -rf "$dir/src"
        ls "$dir"/atimed_*.deb >/dev/null 2>&1
}
