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
exec valgrind -q --error-exitcode=99 --leak-check=full \
	--show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect \
	--log-file="${WKS_VG_LOGDIR:?}/wks.%p.log" \
	"${WKS_VG_BINARY:?}" "$@"
