import { createHash } from 'node:crypto';

/**
 * The console's one script: it rewrites each `<time data-local>` (written in UTC by the server) to
 * the viewer's zone in the same format; the title keeps the UTC time. Without it the UTC text stays.
 */
export const LOCAL_TIMES_SCRIPT =
  "for(const t of document.querySelectorAll('time[data-local]')){const d=new Date(t.dateTime),p=(n)=>String(n).padStart(2,'0');" +
  "const z=new Intl.DateTimeFormat('en-US',{timeZoneName:'short'}).formatToParts(d).find((x)=>x.type==='timeZoneName');" +
  "t.children[0].textContent=d.getFullYear()+'-'+p(d.getMonth()+1)+'-'+p(d.getDate());" +
  "t.children[1].textContent=p(d.getHours())+':'+p(d.getMinutes())+':'+p(d.getSeconds());t.children[2].textContent=z?z.value:''}";

/**
 * The CSP source that lets exactly this script run: a hash, not a nonce, because the script never
 * changes (pages stay the same bytes for every request) and no other text can match it.
 */
export const LOCAL_TIMES_SCRIPT_SOURCE = `'sha256-${createHash('sha256').update(LOCAL_TIMES_SCRIPT).digest('base64')}'`;
