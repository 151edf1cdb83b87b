import { Option } from 'commander';
import { OPTIONS, type CommandName, type OptionRecord } from '../config/options.js';

export { OPTIONS, type CommandName } from '../config/options.js';

/** How help shows a default: the record's text, else its value. */
function defaultShown(o: OptionRecord): string | undefined {
  if (o.defaultText !== undefined) return o.defaultText;
  if (o.default === undefined) return undefined;
  return Array.isArray(o.default) ? o.default.join(',') : String(o.default);
}

export function optionsFor(command: CommandName): Option[] {
  return OPTIONS.filter((o) => o.commands.includes(command)).map((o) => {
    const shown = defaultShown(o);
    const extra = [o.env ? `env ${o.env}` : '', shown !== undefined ? `default ${shown}` : ''].filter(Boolean).join('; ');
    const option = new Option(o.flags, extra ? `${o.description} (${extra})` : o.description);
    if (o.retired) option.hideHelp();
    return o.repeatable ? option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]) : option;
  });
}
