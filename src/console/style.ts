/**
 * The console's whole stylesheet: inline, so the package ships no assets and needs no build step.
 * From 360 px up no page scrolls sideways: a table too wide scrolls in its `.scroll` box, a long id
 * is ellipsised (`.id`), and words are never broken inside.
 */
export const STYLE = `
:root { color-scheme: light; --ink: #1d2330; --muted: #5d6677; --line: #dde2ea; --bg: #f5f7fa; --card: #fff; --ok: #1f7a4d; --warn: #a35f00; --error: #b3261e; --info: #2f5fb3; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
header { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 24px; padding: 10px 24px; background: #1d2330; color: #fff; }
header .brand { font-weight: 600; letter-spacing: .02em; }
header nav { display: flex; flex-wrap: wrap; gap: 4px 16px; }
header nav a { color: #cfd6e4; text-decoration: none; white-space: nowrap; }
header nav a.active, header nav a:hover { color: #fff; }
header nav a.active { text-decoration: underline; text-underline-offset: 4px; }
header .store { margin-left: auto; min-width: 0; max-width: 100%; color: #9aa5b8; font-size: 12px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
header .signout { margin: 0; }
header .signout button { background: transparent; border-color: #5d6677; color: #cfd6e4; padding: 2px 10px; font-size: 12px; }
header .signout button:hover { color: #fff; border-color: #cfd6e4; }
main { padding: 20px 24px 40px; max-width: 1280px; }
h1 { font-size: 20px; margin: 0 0 16px; }
h2 { font-size: 15px; margin: 0 0 10px; }
a { color: var(--info); }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(290px, 100%), 1fr)); gap: 14px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; min-width: 0; }
.card.wide { grid-column: 1 / -1; }
.card.double { grid-column: span 2; }
.big { font-size: 26px; font-weight: 600; }
.muted { color: var(--muted); }
.ok { color: var(--ok); } .warn { color: var(--warn); } .error { color: var(--error); } .info { color: var(--info); }
.pill { display: inline-block; padding: 0 8px; border-radius: 10px; font-size: 12px; border: 1px solid currentColor; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; width: 100%; background: var(--card); }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
td.num, td.when { white-space: nowrap; }
th { white-space: nowrap; font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
time > span { white-space: nowrap; }
.id { display: inline-block; max-width: 100%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; vertical-align: bottom; user-select: all; }
td .id { max-width: 20ch; }
code, pre, .id { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
h1 .id { font-size: 17px; line-height: 1.3; }
pre { background: #0f1420; color: #e6e9ef; padding: 12px; border-radius: 6px; overflow: auto; white-space: pre; margin: 0; }
td pre { max-width: min(70ch, 80vw); margin-top: 6px; }
form.inline { display: inline; }
form.filters { display: flex; gap: 8px; align-items: end; margin-bottom: 12px; flex-wrap: wrap; }
form.search { display: flex; gap: 8px; align-items: center; margin-bottom: 16px; flex-wrap: wrap; }
form.search input { flex: 1 1 240px; max-width: 520px; }
input[inputmode=decimal] { min-width: 0; width: 7em; }
label { display: block; font-size: 12px; color: var(--muted); }
input, select { font: inherit; padding: 4px 6px; border: 1px solid var(--line); border-radius: 4px; max-width: 100%; }
input[type=url], input[type=text] { width: 360px; }
button, .button { font: inherit; padding: 4px 12px; border-radius: 4px; border: 1px solid #2f5fb3; background: #2f5fb3; color: #fff; cursor: pointer; text-decoration: none; display: inline-block; white-space: nowrap; }
button.secondary, .button.secondary { background: #fff; color: #2f5fb3; }
button.danger, .button.danger { background: var(--error); border-color: var(--error); color: #fff; }
.pager { margin-top: 12px; display: flex; gap: 12px; align-items: center; }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 4px 16px; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; min-width: 0; }
.timeline td.when { color: var(--muted); }
.notice { padding: 10px 14px; border-radius: 6px; margin-bottom: 14px; background: #eef3fc; border: 1px solid #c9d7f2; }
.notice.error { background: #fdf0ef; border-color: #f0c4c0; }
.notice.ok { background: #edf7f1; border-color: #bfe0cd; }
@media (min-width: 1100px) { td .id { max-width: 56ch; } }
@media (max-width: 700px) {
  header { padding: 8px 12px; gap: 4px 14px; }
  header nav { gap: 2px 14px; }
  header .store { margin-left: 0; flex-basis: 100%; }
  main { padding: 14px 12px 32px; }
  td.when { white-space: normal; min-width: 6.5em; }
  .card { padding: 12px; }
  .card.double { grid-column: auto; }
  dl.facts { grid-template-columns: minmax(0, 1fr); gap: 0; }
  dl.facts dd { margin-bottom: 8px; }
  /* A timeline reads top to bottom: each entry a block (time, what, details) instead of columns. */
  table.timeline thead { display: none; }
  table.timeline tr { display: block; padding: 6px 0; border-bottom: 1px solid var(--line); }
  table.timeline td { display: block; border: 0; padding: 1px 0; }
  input[type=url], input[type=text] { width: 100%; }
}
`;
