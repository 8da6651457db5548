#!/usr/bin/env bash
# wks-p11-remote.sh: part 4 of wks-p11-bench (a token used from another
# host, docs/PKCS11.md "Figures") with the socket forwarded by OpenSSH,
# through an sshd this script starts on 127.0.0.1 (its own host key,
# client key and configuration in a temporary folder, all removed and
# stopped at the end), as tests/pkcs11/remote_token.sh does.  One machine
# stands for both hosts: what the figures show is what ssh's channel adds
# to p11-kit's protocol, not a network's latency.
#
#   bench/wks-p11-remote.sh BENCH [BENCH OPTIONS...]
#   e.g. bench/wks-p11-remote.sh build/bench/wks-p11-bench -softhsm none
#
# The options go to the bench after `-parts 4 -forward CMD`.  CMD is
# `ssh -N -L "$LOCAL_SOCKET:$REMOTE_SOCKET"` as in the recipe; with
# WKS_P11_REMOTE_TTY=1, `ssh -tt -L ... sleep 1000000` (a session with a
# terminal, for which sshd sets TCP_NODELAY: a comparison).
set -euo pipefail
if [ $# -lt 1 ]; then
	echo "usage: $0 BENCH [OPTIONS...]" >&2
	exit 2
fi
BENCH=$(readlink -f "$1")
shift
D=$(mktemp -d "${TMPDIR:-/tmp}/wks-p11-remote.XXXXXX")
SSHD_PID=
cleanup() {
	if [ -n "$SSHD_PID" ]; then kill "$SSHD_PID" 2>/dev/null || true; wait "$SSHD_PID" 2>/dev/null || true; fi
	rm -rf "$D"
}
trap cleanup EXIT
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ssh-keygen -q -t ed25519 -N '' -C bench-host -f "$D/host_key"
ssh-keygen -q -t ed25519 -N '' -C bench-client -f "$D/id_client"
cp "$D/id_client.pub" "$D/authorized_keys"
cat >"$D/sshd_config" <<EOF
ListenAddress 127.0.0.1:$PORT
HostKey $D/host_key
PidFile $D/sshd.pid
AuthorizedKeysFile $D/authorized_keys
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
AllowUsers $(id -un)
AllowStreamLocalForwarding yes
EOF
if [ "$(id -u)" = 0 ]; then mkdir -p /run/sshd && chmod 755 /run/sshd; fi
"$(command -v sshd)" -D -e -f "$D/sshd_config" 2>"$D/sshd.log" &
SSHD_PID=$!
for _ in $(seq 100); do
	if (: <"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
	sleep 0.1
done
printf '[127.0.0.1]:%s %s\n' "$PORT" "$(cut -d' ' -f1,2 "$D/host_key.pub")" >"$D/known_hosts"
cat >"$D/ssh_config" <<EOF
Host bench-token-host
  HostName 127.0.0.1
  Port $PORT
  UserKnownHostsFile $D/known_hosts
  StrictHostKeyChecking yes
  IdentityFile $D/id_client
  IdentitiesOnly yes
  BatchMode yes
  ExitOnForwardFailure yes
  StreamLocalBindUnlink yes
EOF
if [ "${WKS_P11_REMOTE_TTY:-0}" = 1 ]; then
	# a session with a terminal: sshd then sets TCP_NODELAY on its end
	# too (with -N it leaves Nagle's algorithm on), docs/PKCS11.md
	FWD="exec ssh -F '$D/ssh_config' -tt -L \"\$LOCAL_SOCKET:\$REMOTE_SOCKET\" bench-token-host sleep 1000000 </dev/null"
else
	FWD="exec ssh -F '$D/ssh_config' -N -L \"\$LOCAL_SOCKET:\$REMOTE_SOCKET\" bench-token-host"
fi
"$BENCH" -parts 4 -forward "$FWD" "$@"
