// JSON values for property tests: strings from `strings` (as values and as keys), the given scalar leaves, and arrays
// and objects of them, nested a few levels.
import fc from 'fast-check';

export function jsonValues(
  strings: fc.Arbitrary<string>,
  {
    leaves = [fc.integer(), fc.constant(null)],
    crossShrink = true,
  }: { leaves?: fc.Arbitrary<unknown>[]; crossShrink?: boolean } = {},
): fc.Arbitrary<unknown> {
  return fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: crossShrink },
      strings,
      ...leaves,
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(strings, tie('value'), { maxKeys: 4 }),
    ),
  })).value;
}
