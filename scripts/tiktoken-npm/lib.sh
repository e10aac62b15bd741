# Shared by scripts/compare-tiktoken.sh and scripts/bench-tokens.sh; sourced,
# not run. Needs go, node and npm; the npm registry must be reachable the first
# time (later runs reuse the cache).

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
npmdir=$root/scripts/tiktoken-npm
# The npm package lives outside the repository, in a cache directory.
npmcache=${SESSCTL_TIKTOKEN_NPM:-${XDG_CACHE_HOME:-$HOME/.cache}/sessctl/tiktoken-npm}

say() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }

# install_tiktoken installs the pinned tiktoken (package-lock.json) into
# $npmcache unless that version is already there.
install_tiktoken() {
	local want have=""
	want=$(node -e 'console.log(require(process.argv[1]).packages["node_modules/tiktoken"].version)' "$npmdir/package-lock.json")
	if [[ -f $npmcache/node_modules/tiktoken/package.json ]]; then
		have=$(node -e 'console.log(require(process.argv[1]).version)' "$npmcache/node_modules/tiktoken/package.json")
	fi
	if [[ $have == "$want" ]]; then
		return
	fi
	say "installing npm tiktoken $want into $npmcache"
	mkdir -p "$npmcache"
	cp "$npmdir/package.json" "$npmdir/package-lock.json" "$npmcache/"
	(cd "$npmcache" && npm ci --no-audit --no-fund --loglevel=error) >&2
}

# npm_tiktoken runs count.js with the cached package.
npm_tiktoken() {
	NODE_PATH=$npmcache/node_modules node "$npmdir/count.js" "$@"
}

# build_tools builds corpusgen and tokcount into $1.
build_tools() {
	(cd "$root" && go build -o "$1/corpusgen" ./pkg/tokens/internal/corpusgen &&
		go build -o "$1/tokcount" ./pkg/tokens/internal/tokcount)
}
