// The rows an import leaves out, by reason: how many, and the first few places, for the dry run's
// manifest. One log for every source, so each reports its skipped rows the same way.
import type { SkippedRows } from './source.ts';

/** Places quoted per reason. */
const EXAMPLES_PER_REASON = 5;

export class SkippedLog {
  private readonly byReason = new Map<string, SkippedRows>();

  record(reason: string, file: string, line: number, message: string): void {
    let entry = this.byReason.get(reason);
    if (!entry) {
      entry = { reason, count: 0, examples: [] };
      this.byReason.set(reason, entry);
    }
    entry.count++;
    if (entry.examples.length < EXAMPLES_PER_REASON) entry.examples.push({ file, line, message });
  }

  /** The reasons in the order they first came up. */
  list(): SkippedRows[] {
    return [...this.byReason.values()];
  }
}
