# Sourced: view_npm_install DIR installs the pinned test-only packages
# (package.json + package-lock.json beside this file: playwright-core) into
# DIR with `npm ci` from the configured registry, once per lock file, and
# exports NODE_PATH. Nothing of it is part of the product or its build.
view_npm_install() {
  local dir=$1 here
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  mkdir -p "$dir"
  if ! cmp -s "$here/package-lock.json" "$dir/package-lock.json" ||
     [[ ! -d "$dir/node_modules/playwright-core" ]]; then
    echo "npm registry: $(npm config get registry 2>/dev/null)" >&2
    cp "$here/package.json" "$here/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >&2
  fi
  export NODE_PATH=$dir/node_modules
}
