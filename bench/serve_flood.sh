#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# serve's scrapes during a flood of wrong passwords (issue 41): `optrace
# serve -a` with TLS and one bcrypt user (cost COST), scraped SCRAPES times
# with the right password, first alone, then while FLOODERS curl loops send
# wrong ones. Each line: the median and the slowest scrape (curl's
# time_total), and the ratio of the flooded median to the quiet one. The
# wrong passwords' bcrypt checks run on serve's guard thread, at most 10 a
# second; before, they ran on the thread that answers the scrapes.
#
# Usage: bench/serve_flood.sh [OUTPUT_DIR [FLOODERS [SCRAPES [COST]]]]   (as root)
#   (default: .output 4 20 10)
set -euo pipefail
out=${1:-.output}
flooders=${2:-4}
scrapes=${3:-20}
cost=${4:-10}
work=$(mktemp -d)
serve=
pids=()
trap 'kill ${pids[@]+"${pids[@]}"} $serve 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$work/key" -out "$work/crt" 2>/dev/null
hash=$(python3 -W ignore -c 'import crypt, sys
print(crypt.crypt("secret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=2 ** int(sys.argv[1]))))' "$cost")
cat >"$work/web.yml" <<YAML
tls_server_config:
  cert_file: $work/crt
  key_file: $work/key
basic_auth_users:
  prometheus: '$hash'
YAML
chmod 600 "$work/web.yml" "$work/key"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="https://127.0.0.1:$port/metrics"
"$out/bin/optrace" serve -a -q --listen "127.0.0.1:$port" --web-config "$work/web.yml" &
serve=$!
until curl -s -o /dev/null --cacert "$work/crt" -u prometheus:secret "$url"; do sleep 0.2; done

scrape_times() {
	for _ in $(seq "$scrapes"); do
		curl -s -o /dev/null -w '%{time_total}\n' --max-time 60 --cacert "$work/crt" \
			-u prometheus:secret "$url"
		sleep 0.2
	done
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

scrape_times >"$work/quiet"
for _ in $(seq "$flooders"); do
	(while :; do curl -s -o /dev/null --max-time 60 --cacert "$work/crt" \
		-u prometheus:wrong "$url"; done) &
	pids+=($!)
done
sleep 1
scrape_times >"$work/flooded"
quiet=$(median <"$work/quiet")
flooded=$(median <"$work/flooded")
printf 'quiet:   median %.3f s, slowest %.3f s\n' "$quiet" "$(sort -g "$work/quiet" | tail -1)"
printf 'flooded: median %.3f s, slowest %.3f s (%d flooders)\n' "$flooded" \
	"$(sort -g "$work/flooded" | tail -1)" "$flooders"
awk -v q="$quiet" -v f="$flooded" 'BEGIN { printf "flooded / quiet: %.2f\n", f / q }'
