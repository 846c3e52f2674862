/** The checkout page's stylesheet: one clean card, no external assets. */
export const PAGE_STYLE = `
:root { --ink:#101828; --muted:#667085; --line:#e4e7ec; --bg:#f4f6fb; --card:#fff; --accent:#4f46e5; --accent-soft:#eef2ff;
  --ok:#067647; --ok-soft:#ecfdf3; --warn:#b54708; --warn-soft:#fffaeb; --bad:#b42318; --bad-soft:#fef3f2; }
* { box-sizing: border-box; }
body { margin:0; min-height:100vh; background:var(--bg); color:var(--ink);
  font: 15px/1.5 ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  display:flex; align-items:flex-start; justify-content:center; padding:40px 16px; }
.card { width:100%; max-width:520px; background:var(--card); border:1px solid var(--line); border-radius:18px;
  box-shadow:0 12px 32px rgba(16,24,40,.08); overflow:hidden; }
.card > section, .card > header, .card > footer { padding:20px 28px; }
header { display:flex; align-items:center; justify-content:space-between; border-bottom:1px solid var(--line); }
.brand { font-weight:650; letter-spacing:-.01em; }
.brand small { color:var(--muted); font-weight:500; margin-left:6px; }
.env { font-size:12px; font-weight:650; letter-spacing:.06em; padding:3px 10px; border-radius:999px; }
.env-test { background:var(--warn-soft); color:var(--warn); }
.env-live { background:var(--ok-soft); color:var(--ok); }
.label { color:var(--muted); font-size:13px; }
.due { display:flex; align-items:flex-end; justify-content:space-between; gap:12px; }
.big { font-size:34px; font-weight:700; letter-spacing:-.02em; line-height:1.15; }
.big .unit { font-size:18px; color:var(--muted); font-weight:600; margin-left:4px; }
.pill { display:inline-block; font-size:13px; font-weight:600; padding:4px 12px; border-radius:999px; white-space:nowrap; }
.pill[data-status="CREATED"] { background:var(--accent-soft); color:var(--accent); }
.pill[data-status="PARTIALLY_PAID"] { background:var(--warn-soft); color:var(--warn); }
.pill[data-status="PAID"], .pill[data-status="OVERPAID"] { background:var(--ok-soft); color:var(--ok); }
.pill[data-status="EXPIRED"] { background:var(--bad-soft); color:var(--bad); }
.progress { height:8px; background:#eaecf0; border-radius:999px; margin-top:16px; overflow:hidden; }
.progress > div { height:100%; background:linear-gradient(90deg,#6366f1,#22c55e); border-radius:999px; transition:width .25s ease; }
.figures { display:grid; grid-template-columns:repeat(3,1fr); gap:12px; margin:16px 0 0; }
.figures div { background:#f9fafb; border:1px solid var(--line); border-radius:12px; padding:10px 12px; }
.figures dt { color:var(--muted); font-size:12px; }
.figures dd { margin:0; font-weight:650; font-variant-numeric:tabular-nums; word-break:break-all; }
h2 { font-size:14px; margin:0 0 12px; color:var(--muted); font-weight:600; text-transform:uppercase; letter-spacing:.05em; }
section + section { border-top:1px solid var(--line); }
.options { display:flex; flex-wrap:wrap; gap:8px; margin-bottom:16px; }
.option { display:flex; align-items:center; gap:6px; border:1px solid var(--line); border-radius:10px; padding:7px 12px; cursor:pointer; font-size:14px; }
.option input { accent-color:var(--accent); margin:0; }
.option:has(input:checked) { border-color:var(--accent); background:var(--accent-soft); }
.option .tok { font-weight:650; }
.address-box { display:flex; gap:18px; align-items:center; }
.qr { flex:none; width:148px; height:148px; border:1px solid var(--line); border-radius:12px; padding:6px; background:#fff; }
.qr svg { width:100%; height:100%; display:block; }
.send { min-width:0; }
.send p { margin:0 0 8px; font-size:14px; }
code { display:block; font:13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background:#f9fafb; border:1px solid var(--line);
  border-radius:8px; padding:8px 10px; word-break:break-all; }
button, .button { font:inherit; font-size:14px; font-weight:600; border-radius:10px; padding:9px 14px; border:1px solid var(--line); background:#fff;
  color:var(--ink); cursor:pointer; text-decoration:none; display:inline-block; }
button:hover:not(:disabled), .button:hover { border-color:#c7cbd4; background:#f9fafb; }
button:disabled { opacity:.45; cursor:not-allowed; }
.copy { margin-top:8px; padding:5px 10px; font-size:13px; }
.primary { background:var(--accent); border-color:var(--accent); color:#fff; }
.primary:hover { background:#4338ca !important; border-color:#4338ca !important; }
.buttons { display:grid; grid-template-columns:1fr 1fr; gap:8px; }
.simulate { background:#fcfcfd; }
.note { color:var(--muted); font-size:13px; margin:10px 0 0; min-height:1.5em; }
footer { display:flex; align-items:center; justify-content:space-between; gap:12px; border-top:1px solid var(--line); background:#fcfcfd; }
footer a.cancel { color:var(--muted); font-size:14px; }
[hidden] { display:none !important; }
@media (max-width:480px) { .address-box { flex-direction:column; align-items:flex-start; } .figures { grid-template-columns:1fr 1fr; } }
`;
