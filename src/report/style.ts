/**
 * The page's one stylesheet, inline (the Content-Security-Policy allows
 * inline styles and nothing else). The changes filter is CSS only: a checked
 * radio button hides the rows of the other kinds (`:has`). Added, removed and changed
 * are said in words as well as colours.
 */
export const STYLE = `
:root{color-scheme:light;--fg:#1b1f23;--muted:#57606a;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa;--add:#1a7f37;--del:#cf222e;--chg:#9a6700}
*{box-sizing:border-box}
body{margin:0 auto;max-width:72rem;padding:1rem;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
color:var(--fg);background:var(--bg);overflow-wrap:break-word}
h1{font-size:1.5rem;margin:.2rem 0 .6rem}h2{font-size:1.2rem;border-bottom:1px solid var(--line);padding-bottom:.2rem;margin-top:1.8rem}
h3{font-size:1rem;margin:.8rem 0 .3rem;display:inline}
.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.2rem 1rem;margin:0}.facts dt{font-weight:600;color:var(--muted)}.facts dd{margin:0}
nav ul{list-style:none;padding:0;margin:.8rem 0;display:flex;flex-wrap:wrap;gap:.4rem 1rem}
.scroll{overflow-x:auto;max-width:100%;position:relative}
table{border-collapse:collapse;margin:.4rem 0;min-width:50%}
th,td{border:1px solid var(--line);padding:.25rem .5rem;text-align:left;vertical-align:top}thead th{background:var(--soft)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.nw{white-space:nowrap}td.wide{min-width:12rem}
td.added,tr.added>td:first-child{color:var(--add)}td.removed,tr.removed>td:first-child{color:var(--del)}td.changed,tr.changed>td:first-child{color:var(--chg)}
tr.added>td:first-child,tr.removed>td:first-child,tr.changed>td:first-child{font-weight:600}
.old{text-decoration:line-through;color:var(--del)}.new{color:var(--add)}
.bad{color:var(--del)}.null{color:var(--muted);font-style:italic}.k{color:var(--muted)}
.more,.note{color:var(--muted);font-style:italic}
ul.cols{margin:0;padding-left:1rem}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em}
bdi,td,dd{unicode-bidi:isolate}
.vh{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.sev{display:inline-block;border:1px solid var(--line);border-radius:3px;padding:0 .4rem;margin-right:.3rem}
.sev-critical,.sev-high{color:var(--del);font-weight:600}.sev-medium{color:var(--chg)}
details{margin:.4rem 0}summary{cursor:pointer}
.filter{min-width:0;border:1px solid var(--line);padding:.3rem .6rem;margin:.5rem 0}.filter label{margin-right:.8rem}
#changes:has(#show-added:checked) tr:is(.removed,.changed),#changes:has(#show-removed:checked) tr:is(.added,.changed),
#changes:has(#show-changed:checked) tr:is(.added,.removed){display:none}
.trends{display:flex;flex-wrap:wrap;gap:1rem}
figure.trend{margin:0;border:1px solid var(--line);padding:.4rem;width:16.5rem;max-width:100%}figure.trend figcaption{font-weight:600}
figure.trend svg{display:block;width:100%;height:auto}
.numbers table{min-width:0}
footer{margin-top:2rem;color:var(--muted);font-size:.85rem}
@media print{nav,.filter{display:none}body{max-width:none;font-size:11px}details>summary{list-style:none}a{color:inherit;text-decoration:none}
.scroll{overflow:visible}section{break-inside:auto}tr,figure{break-inside:avoid}}
`
  .trim()
  .replace(/\n/g, '');
