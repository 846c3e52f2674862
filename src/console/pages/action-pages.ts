import type { ActionName, ActionSpec, PreparedAction } from '../actions.js';
import type { ActionOutcome, ConsoleContext } from '../context.js';
import { prose } from '../format.js';
import { html, sentBack } from '../html.js';
import { href, page } from '../layout.js';

/** The confirmation of an action: what will happen, and a POST form carrying a fresh CSRF pair. */
export function confirmPage(context: ConsoleContext, name: ActionName, spec: ActionSpec, prepared: PreparedAction): string {
  const { nonce, token } = context.csrf.issue(name);
  const body = html`
<div class="card"><p id="summary">${prose(prepared.summary)}</p>
<form method="post" action="${href(context, `/actions/${name}`)}" id="confirm-form">
<input type="hidden" name="nonce" value="${nonce}"><input type="hidden" name="csrf" value="${token}">
${Object.entries(prepared.hidden).map(([field, value]) => html`<input type="hidden" name="${field}" value="${sentBack(value)}">`)}
${prepared.fields.map((field) => html`<p><label for="${field.name}">${field.label}</label><input type="url" id="${field.name}" name="${field.name}" value="${field.value}" required></p>`)}
<p><button type="submit" id="confirm" class="danger">${spec.button}</button> <a class="button secondary" href="${context.prefix}/">Cancel</a></p>
</form></div>`;
  return page(context, { title: `Confirm: ${spec.title}`, section: undefined, body });
}

/** What an action did; a repeated confirmation says that nothing was done again. */
export function resultPage(context: ConsoleContext, spec: ActionSpec, outcome: ActionOutcome, repeated: boolean): string {
  const body = html`
<p id="result" data-ok="${outcome.ok ? 'yes' : 'no'}">${prose(outcome.message)}</p>
${repeated ? html`<p class="muted" id="repeated">This confirmation was submitted before: the result above is from then, and nothing was done again.</p>` : ''}
<p><a class="button secondary" href="${context.prefix}/">Back to the overview</a> <a class="button secondary" href="${href(context, '/log')}">Console log</a></p>`;
  return page(context, {
    title: spec.title,
    section: undefined,
    body,
    notice: { tone: outcome.ok ? 'ok' : 'error', text: outcome.ok ? 'Done.' : 'It did not work.' },
  });
}
