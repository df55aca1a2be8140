// The log formats the forwarder reads, each a parser of one line into a fetch in the ingest
// route's field names. A parser judges shape only: whether the agent is an AI one is decided after
// (lib/forwarder/forwarder.ts), and the values are checked by the server, item by item.
import { caddyParser } from './caddy.ts';
import { cloudFrontParser } from './cloudfront.ts';
import { combinedParser } from './combined.ts';
import { jsonLinesParser } from './jsonl.ts';
import type { LineParser } from './line.ts';

export type { LineParser, LineResult } from './line.ts';

export const LOG_FORMATS = ['nginx', 'apache', 'caddy', 'cloudfront', 'jsonl'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** A parser for one file: CloudFront's remembers the file's columns, so each file gets its own. */
export function createLineParser(format: LogFormat): LineParser {
  switch (format) {
    case 'nginx':
      return combinedParser('seconds');
    case 'apache':
      return combinedParser('microseconds');
    case 'caddy':
      return caddyParser();
    case 'cloudfront':
      return cloudFrontParser();
    case 'jsonl':
      return jsonLinesParser();
  }
}
