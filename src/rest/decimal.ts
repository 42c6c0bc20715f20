// Decimal query parameters as text: the pattern of the integers 1 to max, as the router checks them and the OpenAPI
// document states them (a fuzzer generates from it), built from the bound rather than spelled out.

const digits = (from: number, to: number) => (from === to ? `${from}` : `[${from}-${to}]`);
const any = (count: number) => (count === 0 ? '' : count === 1 ? '[0-9]' : `[0-9]{${count}}`);

/**
 * The integers 1 to `max` in decimal, with leading zeros, at most `width` digits in all: for 500,
 * `^(0{0,8}[1-9]|0{0,7}[1-9][0-9]|0{0,6}[1-4][0-9]{2}|0{0,6}500)$`. No lookaround, so that generators read it.
 */
export function positiveUpTo(max: number, width = 9): string {
  const top = String(max);
  if (!Number.isSafeInteger(max) || max < 1 || top.length > width)
    throw new RangeError(`no pattern for ${max}`);
  const zeros = (length: number) => `0{0,${width - length}}`;
  const alternatives: string[] = [];
  // Every number with fewer digits than max.
  for (let length = 1; length < top.length; length++)
    alternatives.push(`${zeros(length)}[1-9]${any(length - 1)}`);
  // Numbers as long as max and below it: max's first i digits, a smaller digit, then any digits.
  for (let i = 0; i < top.length; i++) {
    const digit = Number(top[i]);
    const lowest = i === 0 ? 1 : 0;
    if (digit > lowest) {
      alternatives.push(
        `${zeros(top.length)}${top.slice(0, i)}${digits(lowest, digit - 1)}${any(top.length - i - 1)}`,
      );
    }
  }
  alternatives.push(`${zeros(top.length)}${top}`);
  return `^(${alternatives.join('|')})$`;
}
