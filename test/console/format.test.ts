import { describe, expect, it } from 'vitest';
import { clip, indentJson, prose, when } from '../../src/console/format.js';

describe('console formatting', () => {
  it('writes every time one way, in UTC, with the instant for the page script', () => {
    expect(String(when('2031-03-04T10:00:00.800Z'))).toBe(
      '<time datetime="2031-03-04T10:00:00.800Z" title="2031-03-04 10:00:00 UTC" data-local><span>2031-03-04</span> <span>10:00:00</span> <span>UTC</span></time>',
    );
    // The service's own offset form is the same instant, written the same way.
    expect(String(when('2031-03-04T11:00:00+01:00'))).toContain('title="2031-03-04 10:00:00 UTC"');
    expect(when(undefined)).toBe('—');
    expect(when('not a time')).toBe('not a time');
  });

  it('indents JSON without changing a token, and leaves other text alone', () => {
    const body = '{"id":"evt_1","amount":1.10,"big":12345678901234567890,"s":"a,b:{c}\\"]","e":[],"o":{},"n":[1,{"k":null}]}';
    const indented = indentJson(body);
    expect(indented).toBe(
      [
        '{',
        '  "id": "evt_1",',
        '  "amount": 1.10,',
        '  "big": 12345678901234567890,',
        '  "s": "a,b:{c}\\"]",',
        '  "e": [],',
        '  "o": {},',
        '  "n": [',
        '    1,',
        '    {',
        '      "k": null',
        '    }',
        '  ]',
        '}',
      ].join('\n'),
    );
    expect(indented.replace(/\n */g, '').replace(/": /g, '":')).toBe(body);
    expect(indentJson('{"a": 1,\n "b" : [ ] }')).toBe('{\n  "a": 1,\n  "b": []\n}');
    expect(indentJson('{not json')).toBe('{not json');
  });

  it('keeps a hostile body a page long: indentation stops at 20 levels, and past 1 MiB the text is shown as received', () => {
    const deep = (levels: number) => `{"deep":${'['.repeat(levels)}1${']'.repeat(levels)}}`;
    const some = indentJson(deep(5_000));
    expect(Math.max(...some.split('\n').map((line) => /^ */.exec(line)![0].length))).toBe(40);
    expect(some.replace(/\n */g, '').replace(/": /g, '":')).toBe(deep(5_000));
    const many = deep(30_000);
    expect(indentJson(many)).toBe(many);
  });

  it('shows a long token as one ellipsised id and cuts a long text at a word with "…"', () => {
    const key = 'payment:8f14e45f-ceea-467f-a0e6-3c2b1a2e5d90:paid';
    expect(String(prose(`Run ${key} is back in line.`))).toBe(`Run <span class="id" title="${key}">${key}</span> is back in line.`);
    expect(String(prose('short words <b> stay text'))).toBe('short words &lt;b&gt; stay text');
    const error = 'warehouse API offline (HTTP 503) while reserving stock for the order';
    expect(String(clip(error, 40))).toBe(`<span title="${error}">warehouse API offline (HTTP 503) while…</span>`);
    expect(String(clip('fits', 40))).toBe('fits');
  });
});
