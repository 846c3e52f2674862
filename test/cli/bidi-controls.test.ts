import { afterEach, describe, expect, it } from 'vitest';
import { runKeys } from '../../src/runs/index.js';
import { openStore } from '../../src/store/open.js';
import { runCli } from '../support/cli.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';

afterEach(async () => {
  await removeTempDirs();
});

/** Any of Unicode's bidirectional controls, raw. */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/**
 * A folder whose store holds event `id` (for `resourceId`, with `body`), its dispatch failed with
 * `error`; `now` is when it was received.
 */
async function failedEvent(id: string, { resourceId, body, error }: { resourceId: string; body: string; error: string }) {
  const cwd = await tempDir('ck-bidi-');
  const store = await openStore('file:.checkout-kit', { cwd });
  const now = new Date().toISOString();
  await store.insertEvent({ id, type: 'payment.paid', environment: 'test', createdAt: now, receivedAt: now, resourceKind: 'payment', resourceId, body });
  await store.claimRun(runKeys.event(id), { owner: 'me', leaseMs: 60_000 });
  await store.failRun(runKeys.event(id), 'me', { error });
  await store.close();
  return { cwd, now };
}

describe('bidirectional controls in text from outside', () => {
  it('are printed as escapes, as other control characters are: in a table and in an error line', async () => {
    // U+202E turns what follows around on screen: "evt_\u202egnp.exe" would read as "evt_exe.png".
    const eventId = 'evt_\u202egnp.exe';
    const { cwd, now } = await failedEvent(eventId, { resourceId: 'pay_\u2066a\u2069\u200e', body: '{}', error: 'refused \u202bsku\u202c\u200f\u061c' });

    const list = await runCli(['events', 'list'], { cwd });
    expect(list.code).toBe(0);
    expect(BIDI.exec(list.stdout)?.[0]).toBeUndefined();
    const row = list.stdout.split('\n').find((line) => line.startsWith('evt_'));
    expect(row?.split(/\s{2,}/)).toEqual([
      'evt_\\u202egnp.exe',
      'payment.paid',
      now,
      'pay_\\u2066a\\u2069\\u200e',
      'failed',
      '1',
      'refused \\u202bsku\\u202c\\u200f\\u061c',
    ]);

    const missing = await runCli(['events', 'show', 'evt_\u202enope'], { cwd });
    expect(missing).toEqual({
      code: 2,
      stdout: '',
      stderr: 'checkout-kit: No event evt_\\u202enope in the store: see `checkout-kit events list`.\n',
    });
  });

  it('an id copied from the output, its escapes and all, names the stored one: events show, retry', async () => {
    const eventId = 'evt_\u202egnp.exe';
    const { cwd } = await failedEvent(eventId, { resourceId: 'pay_1', body: '{}', error: 'refused' });
    const copied = 'evt_\\u202egnp.exe';

    const shown = await runCli(['events', 'show', copied], { cwd });
    expect([shown.code, shown.stderr]).toEqual([0, '']);
    expect(shown.stdout).toContain(`id:       ${copied}\n`);
    const retried = await runCli(['retry', `event:${copied}`, '--json'], { cwd });
    expect([retried.code, retried.stderr]).toEqual([0, '']);
    const pending = await runCli(['events', 'list', '--status', 'pending'], { cwd });
    expect(pending.stdout).toContain(copied);
  });

  it("reach no command's detail lines raw: an event shown whole keeps its line breaks and escapes the rest", async () => {
    const eventId = 'evt_\u202egnp.exe';
    // A body is stored byte for byte: a bidi control inside a JSON string is valid JSON.
    const body = '{\n\t"note": "paid \u202edis\u202c"\n}';
    const { cwd } = await failedEvent(eventId, { resourceId: 'pay_1', body, error: 'refused \u001b[31mred\u001b[0m \u2067x' });

    const shown = await runCli(['events', 'show', eventId], { cwd });
    expect(shown.code).toBe(0);
    expect(BIDI.exec(shown.stdout)?.[0]).toBeUndefined();
    expect(shown.stdout).not.toContain('\u001b');
    expect(shown.stdout).toContain('id:       evt_\\u202egnp.exe\n');
    expect(shown.stdout).toContain('error:    refused \\u001b[31mred\\u001b[0m \\u2067x\n');
    expect(shown.stdout).toContain('{\n\t"note": "paid \\u202edis\\u202c"\n}');

    // A body with CRLF line ends keeps them; a carriage return alone would print over its line.
    const crlf = await failedEvent('evt_crlf', { resourceId: 'pay_1', body: '{\r\n"a": 1,\r\n"b": "x\ry"\r\n}', error: 'e' });
    const shownCrlf = await runCli(['events', 'show', 'evt_crlf'], { cwd: crlf.cwd });
    expect(shownCrlf.stdout).toContain('{\r\n"a": 1,\r\n"b": "x\\ry"\r\n}');
  });

  it("keep the detail lines but the body's one line each: a line break stored in an id, a type or an error adds no line", async () => {
    // A stored id that would print as a second, forged status line.
    const eventId = 'evt_1\nstatus:   done (attempts 1)';
    const { cwd } = await failedEvent(eventId, { resourceId: 'pay_1', body: '{\n}', error: 'refused\nby the warehouse' });
    const shown = await runCli(['events', 'show', eventId], { cwd });
    expect(shown.code).toBe(0);
    const lines = shown.stdout.split('\n');
    expect(lines[0]).toBe('id:       evt_1\\nstatus:   done (attempts 1)');
    expect(lines.filter((line) => line.startsWith('status:'))).toEqual(['status:   failed (attempts 1)']);
    expect(lines).toContain('error:    refused\\nby the warehouse');
    expect(shown.stdout.endsWith('\n{\n}\n')).toBe(true);

    const store = await openStore('file:.checkout-kit', { cwd });
    await store.updateResource({
      kind: 'payment',
      id: 'pay_1\noutcome: paid',
      orderId: 'A-1\nB',
      source: 'webhook',
      snapshot: { id: 'pay_1', amount: '1', status: 'PAID' },
    });
    await store.close();
    const payment = await runCli(['payments', 'show', 'pay_1\noutcome: paid'], { cwd });
    expect(payment.code).toBe(0);
    expect(payment.stdout.split('\n')[0]).toBe('payment pay_1\\noutcome: paid (order A-1\\nB)');
  });
});
