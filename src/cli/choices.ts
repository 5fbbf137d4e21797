/**
 * Options that take one of a few values: commander's `choices` (listed in --help), whose refusal
 * of another value also says which one was probably meant (`--rules swebnech`: did you mean
 * "swebench"?), as commander already does for unknown flags and commands.
 */
import { InvalidArgumentError, type Option } from 'commander';
import { closestName } from '../util/did-you-mean.ts';

/** `option` taking one of `values`; another value exits 2 with the list and a "did you mean". */
export function oneOf(option: Option, values: readonly string[]): Option {
  return option.choices(values).argParser((value: string) => {
    if (values.includes(value)) return value;
    const near = closestName(value, values);
    throw new InvalidArgumentError(
      `Allowed choices are ${values.join(', ')}.${near === undefined ? '' : ` Did you mean ${JSON.stringify(near)}?`}`,
    );
  });
}
