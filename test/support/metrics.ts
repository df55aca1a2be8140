// Reading Prometheus's text exposition (what GET /metrics answers) in tests and benchmarks.

/** The samples of an exposition, by series (`name{label="…",…}` as written). */
export function exposedSamples(text: string): Map<string, number> {
  const series = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    series.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return series;
}
