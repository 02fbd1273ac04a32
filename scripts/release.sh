#!/usr/bin/env bash
# Release the version pyproject.toml names (docs/development.md, "Releasing"): refuse a working
# tree with uncommitted changes, a tag that exists and a version CHANGELOG.md does not describe;
# check that release/ is what `nbgrader generate_assignment` makes of the master; build the wheel
# into dist/; then tag the commit vX.Y.Z. It pushes nothing: `git push origin vX.Y.Z` publishes.
#   scripts/release.sh            all of it
#   scripts/release.sh --no-tag   every check and the wheel, no tag (a rehearsal)
# PYTHON: the interpreter with the package, nbgrader and pytest (default .venv/bin/python).
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-.venv/bin/python}"
tag_it=1
case "${1:-}" in
    "") ;;
    --no-tag) tag_it=0 ;;
    *) echo "usage: scripts/release.sh [--no-tag]" >&2; exit 2 ;;
esac
fail() { echo "scripts/release.sh: $*" >&2; exit 1; }

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml | head -n 1)"
tag="v$version"
[[ "$version" =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$ ]] \
    || fail "pyproject.toml's version $version is not MAJOR.MINOR.PATCH"
[ -z "$(git status --porcelain)" ] \
    || fail "the working tree has uncommitted changes (git status): commit or stash them first"
if git rev-parse -q --verify "refs/tags/$tag" >/dev/null; then
    fail "tag $tag exists: a release is tagged once; raise the version in pyproject.toml and CHANGELOG.md"
fi
grep -Eq "^## $version( |$)" CHANGELOG.md \
    || fail "CHANGELOG.md has no section '## $version': say what it changes for instructors first"

echo "release $version: release/ against the master"
"$python" -m pytest -p no:cacheprovider -q --no-header -o addopts="" \
    "tests/course/test_course.py::test_release_is_what_generate_assignment_makes_from_the_master" \
    || fail "release/ is not what the master generates: nbgrader generate_assignment view_or_copy --force, commit release/"

echo "release $version: the wheel"
wheel="dist/viewcopy-$version-py3-none-any.whl"
rm -f "$wheel"
"$python" -m pip wheel --no-deps --quiet -w dist . || fail "the wheel did not build"
[ -f "$wheel" ] || fail "pip built no $wheel"

if [ "$tag_it" = 1 ]; then
    git tag -a "$tag" -m "viewcopy $version (CHANGELOG.md)"
    echo "release $version: tagged $tag at $(git rev-parse --short HEAD); wheel $wheel"
    echo "publish it: git push origin $tag"
else
    echo "release $version: checks passed, wheel $wheel (--no-tag: nothing tagged)"
fi
