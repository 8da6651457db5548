#!/bin/sh
# wks under valgrind memcheck, for running the end-to-end CLI scripts
# (tests/cli/run.sh, tests/cli/vectors.sh) with memcheck (.ci/run):
#
#   WKS_VG_BINARY=build/cli/wks WKS_VG_LOGDIR=DIR \
#       bash tests/cli/run.sh tests/cli/valgrind-wks.sh ../shared
#
# Each run of wks writes valgrind's report to DIR/wks.PID.log (empty when
# clean: -q) and exits 99 on a memory error or a definite/indirect leak,
# which the scripts' exit status checks report; .ci/run also fails on any
# non-empty log.  The scripts' own output stays valgrind's-free.
#
# Sampling, when WKS_VG_SHAPES names a folder (one per script; .ci/run
# sets it): a run goes under memcheck when its shape -- the subcommand and
# the names of the options given, values left out -- is new to that
# script, and otherwise when it is the WKS_VG_EVERY'th (default 4) run of
# the script; the other runs exec the same binary without valgrind (one
# line each in DIR/native.runs).  So every subcommand with every option
# combination a script uses is memchecked at least once, at a third to a
# half of the cost; every run, sampled or not, keeps its checks in the
# script, and the plain and ASan+UBSan stages run all of them.  Without
# WKS_VG_SHAPES every run is memchecked.
if [ -n "${WKS_VG_SHAPES:-}" ]; then
	shape=${1:-}
	for a in "$@"; do
		case $a in -*) shape="$shape ${a%%=*}" ;; esac
	done
	id=$(printf '%s' "$shape" | md5sum | cut -c1-16)
	# The bookkeeping, in a subshell (its umask 0 lets cli_editing's runs
	# as nobody share the files; wks itself keeps the caller's umask),
	# under a lock (editing.sh runs wks in parallel).  Anything that fails
	# here means memcheck.
	how=$(
		umask 0
		mkdir -p "$WKS_VG_SHAPES" 2>/dev/null
		{
			flock 9 || exit 0
			n=$(($(cat "$WKS_VG_SHAPES/count" 2>/dev/null || echo 0) + 1))
			echo "$n" >"$WKS_VG_SHAPES/count" || exit 0
			mkdir "$WKS_VG_SHAPES/$id" 2>/dev/null && exit 0
			[ -d "$WKS_VG_SHAPES/$id" ] || exit 0
			[ $((n % ${WKS_VG_EVERY:-4})) -eq 0 ] && exit 0
			echo "$shape" >>"${WKS_VG_LOGDIR:?}/native.runs" || exit 0
			echo native
		} 9>>"$WKS_VG_SHAPES/lock"
	) 2>/dev/null
	if [ "$how" = native ]; then
		exec "${WKS_VG_BINARY:?}" "$@"
	fi
fi
exec valgrind -q --error-exitcode=99 --leak-check=full \
	--show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect \
	--log-file="${WKS_VG_LOGDIR:?}/wks.%p.log" \
	"${WKS_VG_BINARY:?}" "$@"
