#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# A picture of Legion Prof's legacy HTML viewer showing one box's popup, for
# docs/legion.md, where `legion_prof legacy` cannot be built (Legion 25.06's
# legion_prof needs Rust 1.85; Debian 12 has 1.63):
#
#   1. .output/tests/legion-legacy lays out the viewer's data files from the
#      profiles as legion_prof legacy does (tests/lib/legion_legacy.c);
#   2. the viewer itself (index.html, js/) comes from a Legion checkout at
#      legion-25.06.0, its script and style libraries from npm at the
#      versions index.html names (jquery-ui 1.12.1 for 1.11.2, which npm
#      lacks), all into a scratch folder, none of it into this repository;
#   3. Chromium, headless, opens it from a local HTTP server, and
#      scripts/legacy/hover.js opens the nodes and hovers the box.
#
# Usage: scripts/legion-legacy-picture.sh -l LEGION -p TITLE -o OUT.png PROFILE...
#   -l LEGION  a Legion git repository or checkout (default $LEGION_DIR)
#   -p TITLE   the box to hover: the start of its title ("demo.median [mixed] <451>")
#   -o OUT     the PNG to write
#   -s SIZE    the window, WIDTHxHEIGHT (default 1600x900)
#   -t FROM:TO the time window in microseconds (default: around the box)
# The npm packages are kept in ${XDG_CACHE_HOME:-~/.cache}/optrace/legacy-viewer.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
legion=${LEGION_DIR:-}
pick=""
out=""
size=1600x900
window=""
while getopts "l:p:o:s:t:h" opt; do
	case $opt in
	l) legion=$OPTARG ;;
	p) pick=$OPTARG ;;
	o) out=$OPTARG ;;
	s) size=$OPTARG ;;
	t) window=$OPTARG ;;
	*) sed -n '/^# Usage/,/^# The npm/p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ -z "$legion" ] || [ -z "$pick" ] || [ -z "$out" ] || [ $# -eq 0 ]; then
	echo "usage: $0 -l LEGION -p TITLE -o OUT.png PROFILE... (-h for more)" >&2
	exit 2
fi
for tool in chromium npm python3; do
	command -v "$tool" >/dev/null || { echo "$0: needs $tool (apt-get install $tool)" >&2; exit 1; }
done
converter=${OPTRACE_BUILD_DIR:-$here/.output}/tests/legion-legacy
make -C "$here" -s "$converter"

scratch=$(mktemp -d)
server=""
cleanup() {
	if [ -n "$server" ]; then
		kill "$server" 2>/dev/null || true
		sleep 0.2
		kill -9 "$server" 2>/dev/null || true
	fi
	rm -rf "$scratch"
}
trap cleanup EXIT

view=$scratch/view
"$converter" "$view" "$@"

# The viewer at the tag the writer is checked against.
viewer_file() {
	if git -C "$legion" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$legion" show "legion-25.06.0:tools/legion_prof_files/$1"
	else
		cat "$legion/tools/legion_prof_files/$1"
	fi
}
mkdir -p "$view/js" "$view/lib"
viewer_file index.html >"$view/index.html"
viewer_file js/timeline.js >"$view/js/timeline.js"
viewer_file js/util.js >"$view/js/util.js"
cp "$here/scripts/legacy/hover.js" "$view/js/hover.js"

cache=${XDG_CACHE_HOME:-$HOME/.cache}/optrace/legacy-viewer
if [ ! -d "$cache/node_modules/jquery-ui-themes" ]; then
	mkdir -p "$cache"
	npm install --silent --no-audit --no-fund --prefix "$cache" jquery@2.2.0 \
		jquery-ui-dist@1.12.1 jquery-ui-themes@1.12.0 bootstrap@3.3.7 \
		bootstrap-multiselect@0.9.13 d3@3.5.17
fi
modules=$cache/node_modules
cp "$modules/jquery/dist/jquery.min.js" "$modules/jquery-ui-dist/jquery-ui.js" \
	"$modules/bootstrap/dist/js/bootstrap.min.js" "$modules/bootstrap/dist/css/bootstrap.min.css" \
	"$modules/bootstrap-multiselect/dist/js/bootstrap-multiselect.js" \
	"$modules/bootstrap-multiselect/dist/css/bootstrap-multiselect.css" \
	"$modules/d3/d3.js" "$modules/jquery-ui-themes/themes/hot-sneaks/jquery-ui.css" "$view/lib/"
cp -r "$modules/jquery-ui-themes/themes/hot-sneaks/images" "$view/lib/"
# The libraries from the scratch folder, not the network; then the hover.
sed -i -E -e 's#"https://[^"]*/(jquery-2\.2\.0\.min\.js)"#"lib/jquery.min.js"#' \
	-e 's#"https://[^"]*/(jquery-ui\.js|jquery-ui\.css|bootstrap\.min\.(js|css)|bootstrap-multiselect\.(js|css))"#"lib/\1"#' \
	-e 's#"https://d3js\.org/d3\.v3\.js"#"lib/d3.js"#' \
	-e 's#</body>#<script src="js/hover.js"></script>\n</body>#' "$view/index.html"
if grep -q 'https://' "$view/index.html"; then
	echo "$0: index.html still loads from the network: $(grep -o 'https://[^"]*' "$view/index.html")" >&2
	exit 1
fi

# Around the box: from one length before it to seven after, at least 20 us.
if [ -z "$window" ]; then
	window=$(awk -F'\t' -v pick="$pick" 'FNR > 1 && index($8, pick) == 1 {
		d = $5 - $4; if (d < 2.5) d = 2.5
		printf "%.3f:%.3f\n", $4 - d, $4 + 7 * d; exit }' "$view"/tsv/Proc_*.tsv)
	[ -n "$window" ] || { echo "$0: no box titled \"$pick\" in the profiles" >&2; exit 1; }
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$view" >"$scratch/http.log" 2>&1 &
server=$!
for _ in $(seq 50); do
	python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/')" \
		2>/dev/null && break
	sleep 0.1
done

query=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.urlencode({"start": sys.argv[1], "end": sys.argv[2], "resolution": 1, "pick": sys.argv[3]}))' \
	"${window%%:*}" "${window##*:}" "$pick")
url="http://127.0.0.1:$port/index.html?$query"
browse() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size="${size/x/,}" --virtual-time-budget=10000 "$@" "$url" 2>/dev/null
}
if ! browse --dump-dom | grep -q '<g id="desc"'; then
	echo "$0: the viewer drew no popup for \"$pick\" between ${window%%:*} and ${window##*:} us" >&2
	exit 1
fi
browse --screenshot="$scratch/shot.png" >/dev/null
cp "$scratch/shot.png" "$out"
echo "$out: the legacy viewer, \"$pick\"'s popup, ${window%%:*} to ${window##*:} us"
