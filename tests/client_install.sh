# Sourced by tests/real_clients.sh and tests/tree_e2e.sh (not run by itself): npm clients,
# pinned, installed once into a cache directory of the test's own, never globally.
#
# install_clients DIR PACKAGE@VERSION...: afterwards DIR/node_modules/.bin holds their bins.
# npm runs only when DIR/pins does not name exactly these packages (a first run, a new pin).
# Reports through the caller's `step`.
install_clients() {
  local dir="$1"
  shift
  if [ "$(cat "$dir/pins" 2>/dev/null)" != "$*" ]; then
    step "npm install $*"
    rm -rf "$dir/node_modules" "$dir/package.json" "$dir/package-lock.json"
    npm install --prefix "$dir" --no-save "$@" >&2
    echo "$*" >"$dir/pins"
  fi
}
