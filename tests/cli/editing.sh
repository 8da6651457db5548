#!/usr/bin/env bash
# End-to-end tests of how wks(1) writes files: outputs never replace an
# existing file without --force, nor the input store even with it (also
# through a symbolic or hard link); edits keep the store's owner, group and
# mode (as root) and refuse a store the user could not write (as nobody);
# concurrent edits of one store serialise under its lock and lose nothing;
# and for the defects issue: a link swapped in between load and save is
# refused (3), what exists at an -o path (4), real signals at chosen save
# steps (7), other users' FIFOs as inputs (10).
#
# usage: editing.sh WKS_BINARY SHARED_DIR
#
# Works in a mktemp -d folder that it removes.  The parts that need root
# (chown, running as nobody) print SKIP when not run as root.  Prints
# "N passed, M failed" last; exits 1 on any failure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
start_tests edit

# as_nobody ARGS...: as wks (lib.sh), as user nobody (group nogroup).
as_nobody() {
	set +e
	setsid -w setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$(other_user_path "$WKS_BIN")" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
}
owner() { stat -c '%u:%g %a' "$1" 2>/dev/null || echo none; }
# entries FILE: the number of entries of a store.
entries() {
	wks list -k "$1" "${S[@]}" --json
	python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["entries"]))' "$T/out"
}

SP=pass:store-password-1
IT=(--iterations 10000)
S=(--storepass "$SP")

# Certificates to import (small EC keys: fast).
for i in 1 2 3 4 5 6 7 8; do
	openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
		-nodes -keyout "c$i.key" -subj "/CN=edit test $i" -days 30 \
		-out "c$i.pem" 2>/dev/null
done

wks create -k s.wks "${S[@]}" "${IT[@]}"
expect 0 "create"
wks import-key -k s.wks -a key1 --key c1.key --chain c1.pem "${S[@]}" "${IT[@]}"
expect 0 "import-key"
wks import-cert -k s.wks -a cert2 --cert c2.pem "${S[@]}" "${IT[@]}"
expect 0 "import-cert"
h=$(sha s.wks)

# ---- 12: outputs ---------------------------------------------------------------

# The store itself as output: exit 7 without --force, refused with it.
wks export-p12 -k s.wks -o s.wks --outpass pass:p12-password "${S[@]}" "${IT[@]}"
expect_err 7 'exists' "export-p12 -o the store"
unchanged s.wks "$h" "export-p12 -o the store"
wks export-p12 -k s.wks -o s.wks --force --outpass pass:p12-password "${S[@]}" "${IT[@]}"
expect_err 2 'input file s.wks itself' "export-p12 -o the store --force"
unchanged s.wks "$h" "export-p12 -o the store --force"
# Through a symbolic link, a hard link and another spelling of the path.
ln -s s.wks sym.wks
ln s.wks hard.wks
for out in sym.wks hard.wks ./s.wks "$T/s.wks"; do
	wks export-p12 -k s.wks -o "$out" --force --outpass pass:p12-password "${S[@]}" "${IT[@]}"
	expect_err 2 'itself' "export-p12 -o $out (the store) --force"
	unchanged s.wks "$h" "export-p12 -o $out --force"
	wks export-cert -k s.wks -a cert2 -o "$out" --force "${S[@]}"
	expect_err 2 'itself' "export-cert -o $out (the store) --force"
	wks export-key -k s.wks -a key1 -o "$out" --force "${S[@]}"
	expect_err 2 'itself' "export-key -o $out (the store) --force"
	wks convert --in s.wks -o "$out" --force --inpass "$SP" --outpass pass:p12-password "${IT[@]}"
	expect_err 2 'itself' "convert --in s.wks -o $out --force"
	unchanged s.wks "$h" "exports to $out"
done
check "the symbolic link is still a link" [ -L sym.wks ]

# An existing output: kept without --force (7), replaced with it.
for cmd in "export-cert -a cert2" "export-key -a key1" \
	"export-p12 --outpass pass:p12-password --iterations 10000"; do
	echo keep >existing.out
	k=$(sha existing.out)
	# shellcheck disable=SC2086
	wks $cmd -k s.wks -o existing.out "${S[@]}"
	expect_err 7 'existing.out: exists \(use --force' "$cmd over an existing file"
	unchanged existing.out "$k" "$cmd over an existing file"
	# shellcheck disable=SC2086
	wks $cmd -k s.wks -o existing.out --force "${S[@]}"
	expect 0 "$cmd --force over an existing file"
	check "$cmd --force: replaced" [ "$(sha existing.out)" != "$k" ]
	rm -f existing.out
done
# A dangling symbolic link counts as existing.
ln -s nowhere dangling.pem
wks export-cert -k s.wks -a cert2 -o dangling.pem "${S[@]}"
expect_err 7 'exists' "export-cert over a dangling link"
check "dangling link kept" [ -L dangling.pem ]

# Modes: keys 0600 (even replacing a 0644 file), certificates 0644.
wks export-key -k s.wks -a key1 -o k.pem "${S[@]}"
expect 0 "export-key"
check "export-key: mode 0600" [ "$(owner k.pem)" = "$(id -u):$(id -g) 600" ]
echo old >k2.pem
chmod 644 k2.pem
wks export-key -k s.wks -a key1 -o k2.pem --force "${S[@]}"
expect 0 "export-key --force"
check "export-key --force over 0644: mode 0600" [ "$(owner k2.pem)" = "$(id -u):$(id -g) 600" ]
wks export-p12 -k s.wks -o new.p12 --outpass pass:p12-password "${S[@]}" "${IT[@]}"
expect 0 "export-p12"
check "export-p12: mode 0600" [ "$(owner new.p12)" = "$(id -u):$(id -g) 600" ]
wks export-cert -k s.wks -a cert2 -o c.pem "${S[@]}"
expect 0 "export-cert"
check "export-cert: mode 0644" [ "$(owner c.pem)" = "$(id -u):$(id -g) 644" ]
check "no temporary files left" [ -z "$(find . -name '*.tmp*')" ]

# A device is written into, never replaced (root could replace /dev/null),
# and like any existing output only with --force.
wks export-cert -k s.wks -a cert2 -o /dev/null "${S[@]}"
expect_err 7 'exists \(a device; use --force' "export-cert -o /dev/null"
check "/dev/null is still a device" [ -c /dev/null ]
wks export-cert -k s.wks -a cert2 -o /dev/null --force "${S[@]}"
expect 0 "export-cert -o /dev/null --force"
check "/dev/null is still a device (--force)" [ -c /dev/null ]

# convert: never over its input; an existing output needs --force.
h12=$(sha new.p12)
wks convert --in new.p12 -o new.p12 --force --inpass pass:p12-password --outpass pass:o "${IT[@]}"
expect_err 2 'itself' "convert -o its own input --force"
unchanged new.p12 "$h12" "convert -o its own input"
echo keep >conv.wks
wks convert --in new.p12 -o conv.wks --inpass pass:p12-password --outpass pass:o "${IT[@]}"
expect_err 7 'exists' "convert over an existing file"
check "convert: existing output kept" [ "$(cat conv.wks)" = keep ]
wks convert --in new.p12 -o conv.wks --force --inpass pass:p12-password --outpass pass:conv-pw "${IT[@]}"
expect 0 "convert --force"
wks list -k conv.wks --storepass pass:conv-pw
expect 0 "convert --force: a store"

# create: an existing file (or link) is kept; --force replaces a store.
wks create -k s.wks "${S[@]}" "${IT[@]}"
expect_err 7 'exists' "create over a store"
unchanged s.wks "$h" "create over a store"
wks create -k sym.wks "${S[@]}" "${IT[@]}"
expect_err 7 'exists' "create over a link to a store"
unchanged s.wks "$h" "create over a link"
cp s.wks forced.wks
chmod 640 forced.wks
wks create -k forced.wks --force --storepass pass:other "${IT[@]}"
expect 0 "create --force"
check "create --force: mode kept" [ "$(owner forced.wks)" = "$(id -u):$(id -g) 640" ]
wks list -k forced.wks --storepass pass:other --json
expect 0 "create --force: new password"
check "create --force: an empty store" grep -q '"entries": \[\]' "$T/out"

# ---- 13: owner, group and mode kept (root) --------------------------------------

if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && getent group nogroup >/dev/null; then
	chmod 755 "$T" # nobody runs commands on files in here
	cp s.wks svc.wks
	chown nobody:nogroup svc.wks
	chmod 640 svc.wks
	want=$(owner svc.wks)
	wks import-cert -k svc.wks -a cert3 --cert c3.pem "${S[@]}" "${IT[@]}"
	expect 0 "root: import-cert into nobody's store"
	check "root edit: owner, group, mode kept ($(owner svc.wks), want $want)" \
		[ "$(owner svc.wks)" = "$want" ]
	for args in "delete -a cert3" "rename -a cert2 --new-alias cert2b" \
		"passwd --new-storepass pass:store-password-1"; do
		# shellcheck disable=SC2086
		wks $args -k svc.wks "${S[@]}" "${IT[@]}"
		expect 0 "root: $args"
		check "root $args: owner, group, mode kept" [ "$(owner svc.wks)" = "$want" ]
	done
	# The service account can still read it.
	as_nobody list -k "$T/svc.wks" "${S[@]}"
	expect 0 "nobody reads its store after root's edits"
	# A new store or an output is not an edit: another user's file is
	# not replaced, even by root with --force (defects.sh, issue 22
	# item 3, has the sticky-folder cases).
	hsvc=$(sha svc.wks)
	wks create -k svc.wks --force "${S[@]}" "${IT[@]}"
	expect_err 6 'owned by another user' "root: create --force over nobody's store"
	unchanged svc.wks "$hsvc" "root: create --force over nobody's store"
	echo old >svc.pem
	chown nobody:nogroup svc.pem
	chmod 640 svc.pem
	wks export-cert -k s.wks -a cert2 -o svc.pem --force "${S[@]}"
	expect_err 6 'owned by another user' "root: export-cert --force over nobody's file"
	check "export --force over nobody's file: kept" [ "$(cat svc.pem)" = old ]
else
	echo "SKIP: owner and group tests (need root and user nobody)"
fi

# ---- 14: a read-only store is not rewritten (as nobody) -------------------------

if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && getent group nogroup >/dev/null; then
	chmod 755 "$T"
	mkdir ro
	cp s.wks ro/s.wks
	cp c4.pem ro/c4.pem
	chown -R nobody:nogroup ro
	chmod 755 ro
	chmod 444 ro/s.wks
	hro=$(sha ro/s.wks)
	for args in "import-cert -a cert4 --cert $T/ro/c4.pem" "delete -a cert2" \
		"rename -a cert2 --new-alias x" "passwd --new-storepass pass:newpass1" \
		"import-secret -a sk --generate aes-128"; do
		# shellcheck disable=SC2086
		as_nobody $args -k "$T/ro/s.wks" "${S[@]}" "${IT[@]}"
		expect_err 6 'Permission denied' "nobody: $args on a 0444 store"
		unchanged ro/s.wks "$hro" "nobody: $args on a 0444 store"
	done
	check "0444 store: no temporary file" [ "$(find ro -name '.*tmp*' | wc -l)" -eq 0 ]
	# A read-only output is not replaced either, even with --force.
	echo keep >ro/out.pem
	chown nobody:nogroup ro/out.pem
	chmod 444 ro/out.pem
	as_nobody export-cert -k "$T/ro/s.wks" -a cert2 -o "$T/ro/out.pem" --force "${S[@]}"
	expect_err 6 'Permission denied' "nobody: export --force over a 0444 file"
	check "0444 output kept" [ "$(cat ro/out.pem)" = keep ]
	# Root may write it (as keytool run as root): mode and owner kept.
	wks import-cert -k ro/s.wks -a cert4 --cert c4.pem "${S[@]}" "${IT[@]}"
	expect 0 "root: import-cert into a 0444 store"
	check "root: 0444 store keeps mode and owner" \
		[ "$(owner ro/s.wks)" = "$(stat -c %u:%g ro) 444" ]
else
	echo "SKIP: read-only store tests (need root and user nobody)"
fi

# ---- 15: concurrent edits lose nothing ---------------------------------------------

for round in 1 2 3; do
	rm -f par.wks
	wks create -k par.wks "${S[@]}" "${IT[@]}"
	pids=()
	for i in 1 2 3 4 5 6; do
		setsid -w "$WKS_BIN" import-cert -k par.wks -a "par$i" --cert "c$i.pem" \
			"${S[@]}" "${IT[@]}" >"par$i.out" 2>"par$i.err" &
		pids+=($!)
	done
	st=0
	for p in "${pids[@]}"; do
		if ! wait "$p"; then st=1; fi
	done
	if [ "$st" -eq 0 ]; then ok; else bad "round $round: a parallel import-cert failed"; cat par*.err >&2; fi
	n=$(entries par.wks)
	if [ "$n" = 6 ]; then ok; else bad "round $round: $n of 6 entries after parallel import-cert"; fi
done
# A mix of edits in parallel: each one applied.
pids=()
for a in "delete -a par1" "delete -a par2" "rename -a par3 --new-alias p3" \
	"import-cert -a par7 --cert c7.pem" "import-cert -a par8 --cert c8.pem" \
	"import-secret -a sk --generate aes-256"; do
	# shellcheck disable=SC2086
	setsid -w "$WKS_BIN" $a -k par.wks "${S[@]}" "${IT[@]}" >/dev/null 2>>mix.err &
	pids+=($!)
done
st=0
for p in "${pids[@]}"; do
	if ! wait "$p"; then st=1; fi
done
if [ "$st" -eq 0 ]; then ok; else bad "parallel mixed edits: one failed"; cat mix.err >&2; fi
wks list -k par.wks "${S[@]}" --json
got=$(python3 -c 'import json,sys; print(" ".join(sorted(e["alias"] for e in json.load(open(sys.argv[1]))["entries"])))' "$T/out")
if [ "$got" = "p3 par4 par5 par6 par7 par8 sk" ]; then ok; else bad "parallel mixed edits: entries are: $got"; fi

# The lock is flock(2) on the store itself: flock(1) holding it makes an
# edit wait until it is released.
if command -v flock >/dev/null; then
	flock -x par.wks -c 'touch held; sleep 2' &
	fpid=$!
	while [ ! -e held ]; do sleep 0.05; done
	t0=$(date +%s%N)
	wks delete -k par.wks -a sk "${S[@]}" "${IT[@]}"
	t1=$(date +%s%N)
	wait "$fpid"
	expect 0 "delete while flock(1) holds the store"
	if [ $(((t1 - t0) / 1000000)) -ge 1000 ]; then ok; else
		bad "delete did not wait for the lock ($(((t1 - t0) / 1000000)) ms)"
	fi
else
	echo "SKIP: flock(1) not installed"
fi

# ---- defects issue, items 3, 4, 7 and 10 -------------------------------------------
#
# WKS_TEST_PAUSE_AT=STEP:FIFO makes wks stop at a step of its save
# (cli_test_pause: "save" before signals are held, "saving" once they
# are, "saved"/"unsaved" after): it writes STEP into the FIFO, then waits
# until the test writes into it and closes it.  No sleeps: the FIFO is the
# synchronisation (timeouts only so that a wks that never stops fails).

# pause_start STEP ARGS...: run wks ARGS in the background until it stops
# at STEP (pid in $wpid; SIGINT and SIGTERM at their defaults, which a
# background job of a script would otherwise ignore).
pause_start() {
	local step=$1 got
	shift
	rm -f "$T/pause.fifo"
	mkfifo "$T/pause.fifo"
	WKS_TEST_PAUSE_AT="$step:$T/pause.fifo" env --default-signal=INT,TERM \
		"$WKS_BIN" "$@" </dev/null >"$T/out" 2>"$T/err" &
	wpid=$!
	got=$(timeout 60 head -n 1 "$T/pause.fifo" || true)
	if [ "$got" = "$step" ]; then ok; else bad "wks $1 did not stop at $step"; fi
}
# pause_end [go]: with "go" let wks go on (it reads the FIFO to its end);
# wait for it.
pause_end() {
	if [ "${1-}" = go ]; then
		timeout 60 sh -c 'echo go >"$1"' sh "$T/pause.fifo" || true
	fi
	set +e
	wait "$wpid"
	rc=$?
	set -e
}
no_tmp() {
	if [ -z "$(find "$1" -name '*.tmp*')" ]; then ok; else
		bad "$2: temporary files left: $(find "$1" -name '*.tmp*' | tr '\n' ' ')"
	fi
}

# Signals go to the wks process itself: not through a wrapper
# (tests/cli/valgrind-wks.sh), which would take them in its place.
if [ "$(head -c 4 "$WKS_BIN" | tail -c 3)" = ELF ]; then
	mkdir sig
	wks create -k sig/s.wks --storepass pass:old-pw "${IT[@]}"
	expect 0 "7: create"

	# A signal before the save starts: wks ends by it, nothing changed.
	hs=$(sha sig/s.wks)
	pause_start save passwd -k sig/s.wks --storepass pass:old-pw --new-storepass pass:new-pw "${IT[@]}"
	kill -INT "$wpid"
	pause_end
	expect 130 "7: SIGINT before the save: 130"
	unchanged sig/s.wks "$hs" "7: SIGINT before the save"
	no_tmp sig "7: SIGINT before the save"

	# During the save (temporary file, backup link and rename to come): held
	# until the change is in; exit 0 and a note.
	for s in INT TERM; do
		pause_start saving passwd -k sig/s.wks --storepass pass:old-pw --new-storepass pass:new-pw "${IT[@]}"
		kill -"$s" "$wpid"
		pause_end go
		expect_err 0 'interrupted .* after the change was saved' "7: SIG$s during the save: exit 0"
		no_tmp sig "7: SIG$s during the save"
		wks list -k sig/s.wks --storepass pass:new-pw
		expect 0 "7: SIG$s during the save: the new password is in"
		wks passwd -k sig/s.wks --storepass pass:new-pw --new-storepass pass:old-pw "${IT[@]}"
	done
	# Right after the rename: committed, so exit 0 (it was 130).
	pause_start saved passwd -k sig/s.wks --storepass pass:old-pw --new-storepass pass:new-pw "${IT[@]}"
	kill -TERM "$wpid"
	pause_end go
	expect_err 0 'after the change was saved' "7: SIGTERM just after the rename: exit 0"
	no_tmp sig "7: SIGTERM just after the rename"
	wks list -k sig/s.wks --storepass pass:new-pw
	expect 0 "7: SIGTERM just after the rename: committed"

	# -o outputs: the same.
	pause_start saving export-cert -k s.wks -a cert2 -o sig/c.pem "${S[@]}"
	kill -INT "$wpid"
	pause_end go
	expect 0 "7: SIGINT while -o is written: exit 0"
	check "7: -o written whole" cmp -s sig/c.pem c.pem
	no_tmp sig "7: SIGINT while -o is written"
	pause_start save export-cert -k s.wks -a cert2 -o sig/c2.pem "${S[@]}"
	kill -INT "$wpid"
	pause_end
	expect 130 "7: SIGINT before -o is written: 130"
	check "7: no -o file" [ ! -e sig/c2.pem ]
	no_tmp sig "7: SIGINT before -o is written"
else
	echo "SKIP: 7 signals: $WKS_BIN is a wrapper, not the wks process"
fi

# ---- 4: what already exists at an -o path -----------------------------------------

mkfifo own.fifo
wks export-key -k s.wks -a key1 -o own.fifo "${S[@]}"
expect_err 7 'exists \(a FIFO; use --force' "4: -o FIFO without --force"
cat own.fifo >fifo.out &
cpid=$!
wks export-key -k s.wks -a key1 -o own.fifo --force "${S[@]}"
expect 0 "4: -o own FIFO --force"
wait "$cpid"
check "4: own FIFO got the key" grep -q 'PRIVATE KEY' fifo.out
mkdir adir
wks export-cert -k s.wks -a cert2 -o adir "${S[@]}"
expect_err 6 'adir: is a directory' "4: -o a directory"
check "4: -o a directory: not 'exists (use --force'" not grep -q 'force' "$T/err"
wks export-cert -k s.wks -a cert2 -o adir --force "${S[@]}"
expect_err 6 'adir: is a directory' "4: -o a directory --force"
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' sock
wks export-key -k s.wks -a key1 -o sock --force "${S[@]}"
expect_err 6 'is a socket' "4: -o a socket --force"
wks export-key -k s.wks -a key1 -o - "${S[@]}"
expect 0 "4: -o - is standard output"
check "4: -o - wrote the key" grep -q 'PRIVATE KEY' "$T/out"

if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && getent group nogroup >/dev/null; then
	chmod 755 "$T"
	mkdir -m 1777 sticky
	# Another user's FIFO in a sticky folder (as in /tmp): refused, even
	# with --force, and never opened (no reader needed to refuse it).
	setpriv --reuid=nobody --regid=nogroup --clear-groups mkfifo sticky/key.pem
	for f in "" --force; do
		# shellcheck disable=SC2086
		wks export-key -k s.wks -a key1 -o sticky/key.pem $f "${S[@]}"
		if [ -z "$f" ]; then
			expect_err 7 'exists' "4: nobody's FIFO, no --force"
		else
			expect_err 6 'FIFO owned by another user' "4: nobody's FIFO --force"
		fi
	done
	check "4: nobody's FIFO still a FIFO" [ -p sticky/key.pem ]
	# The same for a file: password: nobody's FIFO is not read (its
	# writer would choose the password), and the open does not hang.
	setpriv --reuid=nobody --regid=nogroup --clear-groups mkfifo sticky/pw
	wks create -k sticky-new.wks --storepass file:sticky/pw "${IT[@]}"
	expect_err 6 'FIFO owned by another user' "10: file: nobody's FIFO refused"
	check "10: no store made" [ ! -e sticky-new.wks ]
	wks import-cert -k s.wks -a x --cert sticky/pw "${S[@]}"
	expect_err 6 'FIFO owned by another user' "10: --cert nobody's FIFO refused"

	# ---- 3: a symbolic link swapped in between the load and the save ----
	mkdir -m 700 private
	echo "root only" >private/target
	chmod 640 private/target
	ht=$(sha private/target)
	mkdir -m 777 shared
	cp s.wks shared/s.wks
	hs=$(sha shared/s.wks)
	pause_start save passwd -k shared/s.wks "${S[@]}" --new-storepass pass:new-pw "${IT[@]}"
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		sh -c "rm -f shared/s.wks && ln -s '$T/private/target' shared/s.wks"
	pause_end go
	expect_err 6 'not saved: it was replaced \(by a symbolic link' "3: link swapped in before the save"
	unchanged private/target "$ht" "3: the link's target"
	check "3: the target keeps owner and mode" [ "$(owner private/target)" = "0:0 640" ]
	no_tmp shared "3: link swapped in"
	# ... and during the save, with a signal held: nothing changed, the
	# held signal then ends wks (143).
	if [ "$(head -c 4 "$WKS_BIN" | tail -c 3)" = ELF ]; then
		rm -f shared/s.wks
		cp s.wks shared/s.wks
		pause_start saving passwd -k shared/s.wks "${S[@]}" --new-storepass pass:new-pw "${IT[@]}"
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
			sh -c "rm -f shared/s.wks && ln -s '$T/private/target' shared/s.wks"
		kill -TERM "$wpid"
		pause_end go
		expect 143 "3+7: refused save with SIGTERM held: 143"
		check "3+7: the refusal is reported before the signal ends wks" \
			grep -q 'not saved: it was replaced' "$T/err"
		unchanged private/target "$ht" "3+7: the link's target"
		no_tmp shared "3+7: refused save"
	fi
	# A store that is a link of its own is still edited through it.
	rm -f shared/s.wks
	ln -s ../s.wks shared/link.wks
	wks import-cert -k shared/link.wks -a cert5 --cert c5.pem "${S[@]}" "${IT[@]}"
	expect 0 "3: edit through the store's own link"
	check "3: the link stays a link" [ -L shared/link.wks ]
	[ "$hs" != "$(sha s.wks)" ] && ok || bad "3: the link's store was not changed"
else
	echo "SKIP: items 3, 4, 10 as another user (need root and user nobody)"
fi

end_tests
