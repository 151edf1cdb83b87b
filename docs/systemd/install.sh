#!/usr/bin/env bash
# Installs the nightly svc-snapshot run as a systemd service and timer (the
# units beside this script). Run as root; running it again changes nothing
# that is already in place (it only applies what its options give).
#
#   install.sh --base-url https://platform.example.org --token-file token.txt \
#              [--ca-file site-ca.pem] [--ping-url https://hc-ping.com/<uuid>]
#
# It makes, under --root (default /, another directory for a trial):
#   the system user svc-snapshot (--user), when it does not exist (only with --root /)
#   /etc/svc-snapshot/            0755 root
#   /etc/svc-snapshot/env         0600 root   SVC_BASE_URL, SVC_PING_URL, NODE_EXTRA_CA_CERTS; read by systemd
#   /etc/svc-snapshot/token       0600 root   the API token; systemd hands it to the run as a
#                                             credential (LoadCredential=), a file only the run can read
#   /etc/svc-snapshot/site-ca.pem 0644 root   the site's CA certificate (--ca-file), readable by the service user
#   /etc/systemd/system/svc-snapshot.{service,timer}, ExecStart naming the installed binary (--bin)
#   /var/lib/node_exporter/textfile_collector/ for --metrics-file, writable by the service user's group
# and, with --root / on a machine running systemd, enables and starts the timer (not with --no-enable).
# A token never appears on a command line, in the unit or in this script's output.
set -euo pipefail
umask 022

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root=/
user=svc-snapshot
bin=''
base_url=''
ping_url=''
ca_file=''
token_file=''
enable=yes

usage() {
  sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  echo "options: --root DIR --user NAME --bin PATH --base-url URL --token-file FILE --ca-file FILE --ping-url URL --no-enable"
}
die() {
  echo "install.sh: $*" >&2
  exit 2
}
need_value() { [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --root) need_value "$@"; root="$2"; shift 2 ;;
    --user) need_value "$@"; user="$2"; shift 2 ;;
    --bin) need_value "$@"; bin="$2"; shift 2 ;;
    --base-url) need_value "$@"; base_url="$2"; shift 2 ;;
    --ping-url) need_value "$@"; ping_url="$2"; shift 2 ;;
    --ca-file) need_value "$@"; ca_file="$2"; shift 2 ;;
    --token-file) need_value "$@"; token_file="$2"; shift 2 ;;
    --no-enable) enable=no; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done

[ "$(id -u)" = 0 ] || die "run as root: it writes /etc/svc-snapshot and /etc/systemd/system"
[ -d "$root" ] || die "--root $root is not a directory"
root="$(cd "$root" && pwd)"
r="${root%/}"
[[ "$user" =~ ^[a-z_][a-z0-9_-]*$ ]] || die "--user $user is not a user name"
for v in "$base_url" "$ping_url"; do
  # Written into the environment file as they are: no quoting needed, nothing systemd would read otherwise.
  [[ -z "$v" || "$v" =~ ^https?://[^[:space:]\"\'\\\$]+$ ]] || die "$v is not a URL (https://…)"
done
[ -z "$ca_file" ] || grep -q -- '-----BEGIN CERTIFICATE-----' "$ca_file" 2>/dev/null || die "--ca-file $ca_file holds no PEM certificate"
[ -z "$token_file" ] || [ -s "$token_file" ] || die "--token-file $token_file is missing or empty"
if [ -z "$bin" ]; then bin="$(command -v svc-snapshot || echo /usr/local/bin/svc-snapshot)"; fi
[[ "$bin" == /* ]] || die "--bin $bin must be an absolute path"

said() { echo "install.sh: $*"; }

# The service user (a real system's only: a trial root has no user database of its own).
if ! id -u "$user" >/dev/null 2>&1; then
  if [ "$root" = / ]; then
    useradd --system --user-group --home-dir /var/lib/svc-snapshot --shell /usr/sbin/nologin "$user"
    said "made the system user $user"
  else
    said "the user $user does not exist here: not made under --root $root"
  fi
fi
group="$(id -gn "$user" 2>/dev/null || true)"

etc="$r/etc/svc-snapshot"
install -d -m 0755 -o root -g root "$etc"

# The environment file: root's alone; each setting given replaces its line, the others stay.
env="$etc/env"
[ -f "$env" ] || install -m 0600 -o root -g root /dev/null "$env"
chmod 0600 "$env"
set_var() {
  local tmp
  tmp="$(mktemp "$etc/.env.XXXXXX")"
  { grep -v "^$1=" "$env" || true; echo "$1=$2"; } >"$tmp"
  chmod 0600 "$tmp"
  mv -f "$tmp" "$env"
}
del_var() {
  local tmp
  tmp="$(mktemp "$etc/.env.XXXXXX")"
  { grep -v "^$1=" "$env" || true; } >"$tmp"
  chmod 0600 "$tmp"
  mv -f "$tmp" "$env"
}
# Earlier steps put the token into the environment file and the heartbeat into PING_URL.
token="$etc/token"
if grep -q '^SVC_TOKEN=.' "$env"; then
  if [ -n "$token_file" ] || [ -s "$token" ]; then
    die "$env still sets SVC_TOKEN while $token is given too; remove the SVC_TOKEN line, the token belongs in $token"
  fi
  install -m 0600 -o root -g root /dev/null "$token"
  sed -n 's/^SVC_TOKEN=//p' "$env" | tail -n 1 >"$token"
  del_var SVC_TOKEN
  said "moved the token from $env to $token"
fi
if grep -q '^PING_URL=' "$env" && ! grep -q '^SVC_PING_URL=' "$env"; then
  old="$(sed -n 's/^PING_URL=//p' "$env" | tail -n 1)"
  del_var PING_URL
  [ -z "$old" ] || set_var SVC_PING_URL "$old"
fi
[ -z "$base_url" ] || set_var SVC_BASE_URL "$base_url"
[ -z "$ping_url" ] || set_var SVC_PING_URL "$ping_url"
grep -q '^SVC_BASE_URL=.' "$env" || said "no SVC_BASE_URL in $env yet: run again with --base-url"

if [ -n "$token_file" ]; then
  install -m 0600 -o root -g root "$token_file" "$token"
fi
[ -s "$token" ] || said "no token in $token yet: run again with --token-file (the service does not start without it)"

# The CA certificate: not a secret, and read by the service user, so outside any 0700 directory.
if [ -n "$ca_file" ]; then
  install -m 0644 -o root -g root "$ca_file" "$etc/site-ca.pem"
  set_var NODE_EXTRA_CA_CERTS /etc/svc-snapshot/site-ca.pem
fi

# The units, naming the binary where it is installed.
units="$r/etc/systemd/system"
install -d -m 0755 "$units"
tmp="$(mktemp "$units/.svc-snapshot.service.XXXXXX")"
sed -e "s|^ExecStart=/usr/local/bin/svc-snapshot |ExecStart=$bin |" \
  -e "s|^User=svc-snapshot$|User=$user|" \
  -e "s|^Group=svc-snapshot$|Group=${group:-$user}|" \
  "$here/svc-snapshot.service" >"$tmp"
chmod 0644 "$tmp"
mv -f "$tmp" "$units/svc-snapshot.service"
install -m 0644 "$here/svc-snapshot.timer" "$units/svc-snapshot.timer"
[ -x "$r$bin" ] || [ -x "$bin" ] || said "$bin is not installed yet: npm install -g svc-snapshot-<version>.tgz (see the README's Install)"

# node_exporter's textfile collector directory, for --metrics-file.
metrics="$r/var/lib/node_exporter/textfile_collector"
if [ ! -d "$metrics" ]; then
  install -d -m 0755 "$r/var/lib/node_exporter"
  install -d -m 0775 -o root -g "${group:-root}" "$metrics"
fi

if [ "$root" = / ] && [ "$enable" = yes ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  systemctl enable --now svc-snapshot.timer
  said "enabled svc-snapshot.timer; a run now: systemctl start svc-snapshot.service"
else
  said "installed under $root; then: systemctl daemon-reload && systemctl enable --now svc-snapshot.timer"
fi
