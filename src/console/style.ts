/** The console's whole stylesheet: inline, so the package ships no assets and needs no build step. */
export const STYLE = `
:root { color-scheme: light; --ink: #1d2330; --muted: #5d6677; --line: #dde2ea; --bg: #f5f7fa; --card: #fff; --ok: #1f7a4d; --warn: #a35f00; --error: #b3261e; --info: #2f5fb3; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
header { display: flex; align-items: center; gap: 24px; padding: 10px 24px; background: #1d2330; color: #fff; }
header .brand { font-weight: 600; letter-spacing: .02em; }
header nav a { color: #cfd6e4; text-decoration: none; margin-right: 16px; }
header nav a.active, header nav a:hover { color: #fff; }
header .store { margin-left: auto; color: #9aa5b8; font-size: 12px; }
main { padding: 20px 24px 40px; max-width: 1280px; }
h1 { font-size: 20px; margin: 0 0 16px; }
h2 { font-size: 15px; margin: 0 0 10px; }
a { color: var(--info); }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(290px, 1fr)); gap: 14px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; }
.card.wide { grid-column: 1 / -1; }
.card.double { grid-column: span 2; }
.big { font-size: 26px; font-weight: 600; }
.muted { color: var(--muted); }
.ok { color: var(--ok); } .warn { color: var(--warn); } .error { color: var(--error); } .info { color: var(--info); }
.pill { display: inline-block; padding: 0 8px; border-radius: 10px; font-size: 12px; border: 1px solid currentColor; }
table { border-collapse: collapse; width: 100%; background: var(--card); }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: anywhere; }
td.num, td.when { overflow-wrap: normal; white-space: nowrap; }
th { white-space: nowrap; overflow-wrap: normal; font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: #0f1420; color: #e6e9ef; padding: 12px; border-radius: 6px; overflow: auto; white-space: pre-wrap; word-break: break-all; }
form.inline { display: inline; }
form.filters { display: flex; gap: 8px; align-items: end; margin-bottom: 12px; flex-wrap: wrap; }
form.search { display: flex; gap: 8px; align-items: center; margin-bottom: 16px; flex-wrap: wrap; }
form.search input { flex: 1 1 240px; max-width: 520px; }
input[inputmode=decimal] { min-width: 0; width: 7em; }
label { display: block; font-size: 12px; color: var(--muted); }
input, select { font: inherit; padding: 4px 6px; border: 1px solid var(--line); border-radius: 4px; }
input[type=url], input[type=text] { min-width: 360px; }
button, .button { font: inherit; padding: 4px 12px; border-radius: 4px; border: 1px solid #2f5fb3; background: #2f5fb3; color: #fff; cursor: pointer; text-decoration: none; display: inline-block; }
button.secondary, .button.secondary { background: #fff; color: #2f5fb3; }
button.danger { background: var(--error); border-color: var(--error); }
.pager { margin-top: 12px; display: flex; gap: 12px; align-items: center; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
.timeline td.when { white-space: nowrap; color: var(--muted); }
.notice { padding: 10px 14px; border-radius: 6px; margin-bottom: 14px; background: #eef3fc; border: 1px solid #c9d7f2; }
.notice.error { background: #fdf0ef; border-color: #f0c4c0; }
.notice.ok { background: #edf7f1; border-color: #bfe0cd; }
`;
