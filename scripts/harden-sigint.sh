#!/usr/bin/env bash
# harden-sigint.sh [SESSCTL] [DIR] — issue #11 item 4: each long command on
# a big input (scripts/harden-inputs.sh DIR) gets SIGINT after DELAY seconds
# (default 2); prints the exit code and the milliseconds from the signal to
# the exit (wanted: 130, at most 200 ms). Runs that change files work on a
# copy; after an interrupted revert the file must be byte for byte the
# original and no .sessctl-tmp-* may be left.
set -uo pipefail
S=${1:-/tmp/harden/sessctl}
DIR=${2:-/tmp/harden/in}
DELAY=${DELAY:-2}
W=$(mktemp -d /tmp/harden-sigint.XXXXXX)
export HOME=$W/home XDG_STATE_HOME=$W/state NO_COLOR=1
mkdir -p "$HOME"
big=$(find "$DIR/big" -name '*.jsonl' -not -path '*/subagents/*' | head -1)

# one NAME CMD...: run CMD, SIGINT it after DELAY s, report
one() {
	local name=$1
	shift
	"$@" >"$W/out" 2>"$W/err" &
	local pid=$!
	sleep "$DELAY"
	if ! kill -0 $pid 2>/dev/null; then
		wait $pid
		echo "$name: finished before the signal (exit $?); make the input bigger"
		return
	fi
	local t0 t1 rc
	t0=$(date +%s%N)
	kill -INT $pid
	wait $pid
	rc=$?
	t1=$(date +%s%N)
	printf '%-34s exit %3d  %4d ms after SIGINT  stderr: %s\n' "$name" $rc $(((t1 - t0) / 1000000)) "$(tail -c 200 "$W/err" | tr '\n' ' ')"
}

one "check (600 MB)" "$S" check "$big"
one "stats (600 MB)" "$S" stats "$big"
one "ls --root (20,000 sessions)" "$S" ls --root "$DIR/store"
one "cleanup dry run (20,000 sessions)" "$S" cleanup --root "$DIR/store"
cp -al "$DIR/store" "$W/store"
one "cleanup --apply (20,000 sessions)" "$S" cleanup --apply --root "$W/store"
rm -rf "$W/store"
cp -al "$DIR/store" "$W/store"
one "prune-rotations --keep 0 (60,000)" "$S" prune-rotations --keep 0 --root "$W/store"
rm -rf "$W/store"
one "checkpoints (600 MB)" "$S" checkpoints "$big"
one "diff (600 MB against itself)" "$S" diff "$big" "$big"
one "show (600 MB)" "$S" show "$big"

# revert and compact rewrite: on a copy, which must come out untouched
mkdir -p "$W/rw/projects/-p"
copy=$W/rw/projects/-p/$(basename "$big")
for c in "revert --checkpoint 2" "compact"; do
	cp -p "$big" "$copy"
	# shellcheck disable=SC2086
	one "$c (600 MB)" "$S" $c "$copy"
	if cmp -s "$big" "$copy"; then same=untouched; else same="CHANGED"; fi
	left=$(find "$W/rw" -name '*.sessctl-tmp-*' -o -name '.sessctl-tmp-*' | wc -l)
	rots=$(find "$W/rw" -name '*.jsonl.[0-9]*' | wc -l)
	echo "    after: file $same, $left temp files, $rots rotations"
	rm -rf "$W/rw/projects/-p"/*
done
rm -rf "$W"
