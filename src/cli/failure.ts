/**
 * The --json object of a run that ends with an error (docs/summary-schema.json,
 * `$defs.failure`): printed by the top-level catch and by the signal handler,
 * so that a script reading stdout gets one object whatever happened.
 */
import type { FailureSummary } from '../summaries/schemas.js';
import { currentOutcome, publishLedger } from '../publish/registry.js';

const HISTORY_ACTIONS = ['load', 'runs', 'log', 'as-of'];

/** The command as typed, from the arguments alone (a parse error comes before any command runs): snapshot when none is named. */
export function commandOf(args: readonly string[], commands: readonly string[]): string {
  const [first, action] = args.filter((a) => !a.startsWith('-'));
  if (first === undefined || !commands.includes(first)) return 'snapshot';
  if (first !== 'history') return first;
  return action !== undefined && HISTORY_ACTIONS.includes(action) ? `history ${action}` : 'history';
}

export function failureSummary(command: string, exitCode: number, error: string): FailureSummary {
  const { published, notPublished } = publishLedger();
  const outcome =
    currentOutcome() ?? (published.length > 0 ? `published ${published.join(', ')}` : 'nothing was published');
  return { command, ok: false, exitCode, error, published, notPublished, outcome };
}
