import { Option } from 'commander';
import { OPTIONS, negatedFlag, type CommandName, type OptionRecord } from '../config/options.js';

export { OPTIONS, type CommandName } from '../config/options.js';

/** How help shows a default: the command's text, the record's text, else its value. */
function defaultShown(o: OptionRecord, command: CommandName): string | undefined {
  const own = o.perCommand?.[command]?.defaultText;
  if (own !== undefined) return own;
  if (o.defaultText !== undefined) return o.defaultText;
  if (o.default === undefined) return undefined;
  return Array.isArray(o.default) ? o.default.join(',') : String(o.default);
}

export function optionsFor(command: CommandName): Option[] {
  return OPTIONS.filter((o) => o.commands.includes(command)).flatMap((o) => {
    const shown = defaultShown(o, command);
    const extra = [o.env ? `env ${o.env}` : '', shown !== undefined ? `default ${shown}` : '']
      .filter(Boolean)
      .join('; ');
    const description = o.perCommand?.[command]?.description ?? o.description;
    const option = new Option(o.flags, extra ? `${description} (${extra})` : description);
    if (o.removed) option.hideHelp();
    const made = o.repeatable
      ? option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value])
      : option;
    // A switch on by default: commander pairs `--x` and `--no-x` on one key, undefined when neither is given.
    return o.negatable ? [made, new Option(negatedFlag(o), o.negatable.description)] : [made];
  });
}
