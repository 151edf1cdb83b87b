#!/bin/sh
# Renders the spreadsheet screenshots of the README and docs/spreadsheets.md (docs/spreadsheet-about.png,
# docs/spreadsheet-export.png) from the shipped recording with LibreOffice
# and poppler-utils:  sh scripts/render-screenshots.sh
# The export page is the second page of team_memberships in the PDF
# (user columns and UTC date-times); check the result by eye.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node "$root/bin/svc-snapshot.js" --replay "$root/recordings/platform-3.14.1" --out-dir "$work/snap" --format xlsx --quiet >/dev/null
soffice "-env:UserInstallation=file://$work/profile" --headless --convert-to pdf --outdir "$work" "$work"/snap/*.xlsx >/dev/null 2>&1
pdf=$(ls "$work"/*.pdf)
pdftoppm -png -r 160 -f 1 -l 1 -x 60 -y 70 -W 1560 -H 660 -singlefile "$pdf" "$root/docs/spreadsheet-about"
pdftoppm -png -r 110 -f 12 -l 12 -x 40 -y 40 -W 1160 -H 340 -singlefile "$pdf" "$root/docs/spreadsheet-export"
echo "wrote docs/spreadsheet-about.png docs/spreadsheet-export.png"
