/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests: every line
 * must be empty or a well-formed `# HELP`, `# TYPE` or sample; every sample must belong to a family whose
 * TYPE came first (histogram samples through `_bucket`, `_sum`, `_count`); label values must be
 * properly escaped; values must be numbers. Throws on the first deviation, naming the line.
 */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PromFamily {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: PromSample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*';
const VALUE = String.raw`(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|[+-]?Inf|NaN)`;
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (${VALUE})(?: -?\\d+)?$`);
const LABEL_PAIR = new RegExp(`^(${LABEL})="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"`);

function parseLabels(text: string, line: number): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text;
  while (rest.length > 0) {
    const match = LABEL_PAIR.exec(rest);
    if (!match) throw new Error(`line ${line}: bad label set {${text}}`);
    const [whole, key, raw] = match as unknown as [string, string, string];
    if (key in labels) throw new Error(`line ${line}: label ${key} twice`);
    labels[key] = raw.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(whole.length);
    if (rest.startsWith(',')) rest = rest.slice(1);
    else if (rest.length > 0) throw new Error(`line ${line}: expected , in {${text}}`);
  }
  return labels;
}

export function parsePrometheusStrict(text: string): Map<string, PromFamily> {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const families = new Map<string, PromFamily>();
  const helps = new Map<string, string>();
  text
    .slice(0, -1)
    .split('\n')
    .forEach((content, index) => {
      const line = index + 1;
      if (content.startsWith('# HELP ')) {
        const match = new RegExp(`^# HELP (${NAME}) (.*)$`).exec(content);
        if (!match) throw new Error(`line ${line}: bad HELP: ${content}`);
        helps.set(match[1] as string, match[2] as string);
        return;
      }
      if (content.startsWith('# TYPE ')) {
        const match = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`).exec(content);
        if (!match) throw new Error(`line ${line}: bad TYPE: ${content}`);
        const name = match[1] as string;
        if (families.has(name)) throw new Error(`line ${line}: TYPE of ${name} twice`);
        families.set(name, { name, type: match[2] as PromFamily['type'], help: helps.get(name) ?? '', samples: [] });
        return;
      }
      // The format ignores empty lines (prom-client separates families with them); nothing else goes.
      if (content === '') return;
      if (content.startsWith('#') || content.trim() === '') throw new Error(`line ${line}: unexpected line: ${JSON.stringify(content)}`);
      const match = SAMPLE.exec(content);
      if (!match) throw new Error(`line ${line}: not a sample: ${content}`);
      const name = match[1] as string;
      const family =
        families.get(name) ??
        [...families.values()].find(
          (candidate) =>
            (candidate.type === 'histogram' || candidate.type === 'summary') &&
            ['_bucket', '_sum', '_count'].some((suffix) => name === candidate.name + suffix),
        );
      if (!family) throw new Error(`line ${line}: sample ${name} has no TYPE before it`);
      const value = Number(match[3]?.replace(/^([+-]?)Inf$/, '$1Infinity'));
      family.samples.push({ name, labels: parseLabels(match[2] ?? '', line), value });
    });
  return families;
}

/** The value of the sample `name` with exactly `labels` (undefined when absent). */
export function sampleValue(families: Map<string, PromFamily>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const family of families.values()) {
    const sample = family.samples.find(
      (s) => s.name === name && Object.keys(s.labels).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
    );
    if (sample) return sample.value;
  }
  return undefined;
}
