// The client's declaration inputs refuse a misspelt valueType or cardinality at compile time: test/types/client-inputs.ts
// compiled with the project's compiler options, as written (every @ts-expect-error used) and with its directives
// removed (every typo then an error).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FILE = path.join(ROOT, 'test/types/client-inputs.ts');

/** The file's own diagnostics, compiled with tsconfig.json's options, its text optionally rewritten. */
function diagnosticsOf(rewrite: (text: string) => string = (t) => t) {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('tsconfig.json could not be read');
  const host = ts.createCompilerHost(config.options);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => {
    const text = readFile(name);
    return text !== undefined && path.resolve(name) === FILE ? rewrite(text) : text;
  };
  const program = ts.createProgram({ rootNames: [FILE], options: config.options, host });
  const source = program.getSourceFile(FILE);
  if (!source) throw new Error(`${FILE} was not compiled`);
  return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((d) => ({
    line: d.start === undefined ? -1 : source.getLineAndCharacterOfPosition(d.start).line + 1,
    message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
  }));
}

describe('the client inputs: valueType and cardinality as their unions', () => {
  it('the file compiles as written: every misspelt value is refused where a directive expects it', () => {
    expect(diagnosticsOf()).toEqual([]);
  });

  it('without the directives, each of the six misspelt values is a compile error naming it', () => {
    const found = diagnosticsOf((text) => text.replaceAll('// @ts-expect-error', '//'));
    const named = ['strng', 'many', 'text', 'strng', 'text', 'many'];
    expect(found).toHaveLength(named.length);
    found.forEach((d, i) => {
      expect(d.message).toContain(`"${named[i]}"`);
    });
  }, 60_000);
});
