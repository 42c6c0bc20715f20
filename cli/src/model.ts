// `metamodel export | plan | apply`: the metamodel as a file. The service exports and plans (GET /entities/model,
// POST /entities/model/plan); this only reads and writes files, renders the plan, and applies its steps one by one
// through the ordinary endpoints.
// Over 300 lines: export, plan and apply share the file format, its reading and the plan's rendering.
import { readFileSync } from 'node:fs';
import cliProgress from 'cli-progress';
import YAML from 'yaml';
import type { DefinitionSummary, FieldChange } from '../../src/contract/wire.js';
import { type Client, Refusal, UsageError } from './client.js';
import { type Command, type OptionSpec, quoted, stringOption, type Values } from './command.js';
import type { Io } from './output.js';
import { json } from './output.js';

/** A plan step as the service sends it (POST /entities/model/plan). */
interface Step {
  action: 'create_type' | 'rename_type' | 'withdraw_attribute' | 'redeclare_attribute' | 'declare_attribute';
  type: string;
  type_guid: string | null;
  from?: string;
  attribute?: string;
  spec?: Record<string, unknown> & { allowed_ref_type?: string };
  ref_type_guid?: string | null;
  current?: DefinitionSummary;
  changes?: FieldChange[];
  impact?: { instances: number; values: number; complete: boolean } | null;
  blocked?: { reason: string; message: string };
}

interface Plan {
  steps: Step[];
  unchanged: { types: number; attributes: number };
}

const FILE_OPTION: OptionSpec = {
  type: 'string',
  short: 'f',
  value: 'FILE',
  help: 'the model document (YAML or JSON; - for stdin)',
};

/** Exit status of `plan` when the file would change something (terraform plan -detailed-exitcode). */
export const EXIT_CHANGES = 2;

function readModelFile(values: Values): { document: unknown; file: string } {
  const file = stringOption(values, 'file');
  if (file === undefined) throw new UsageError('-f FILE is required (a model document: YAML or JSON).');
  let text: string;
  try {
    text = file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(
      `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`,
    );
  }
  try {
    // YAML 1.2 reads JSON too.
    return { document: YAML.parse(text, { maxAliasCount: 100 }), file };
  } catch (err) {
    throw new UsageError(`${file} is not YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
}

const planFor = (client: Client, document: unknown) =>
  client.request<Plan>('POST', '/entities/model/plan', { body: document });

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** What a definition's specification says, in a line. */
function specText(spec: Record<string, unknown> | undefined) {
  if (!spec) return '';
  const parts = [String(spec.value_type), String(spec.cardinality)];
  if (Array.isArray(spec.allowed_values))
    parts.push(`${plural(spec.allowed_values.length, 'allowed value')}`);
  if (spec.allowed_ref_type !== undefined) parts.push(`→ ${quoted(String(spec.allowed_ref_type))}`);
  if (spec.required === true) parts.push('required');
  if (spec.default_value !== undefined) parts.push(`default ${JSON.stringify(spec.default_value)}`);
  if (spec.filterable === true) parts.push('filterable');
  return parts.join(', ');
}

const shown = (value: unknown, chars: number | undefined) =>
  chars !== undefined ? `(${chars.toLocaleString('en-US')} characters)` : JSON.stringify(value ?? null);

/** How a redeclaration changes a definition, field by field, as the plan states it. */
export function changesText(changes: readonly FieldChange[] = []) {
  return changes
    .map((c) => {
      if (c.field !== 'allowed_values')
        return `${c.field} ${shown(c.from, c.from_chars)} → ${shown(c.to, c.to_chars)}`;
      if (c.reordered) return 'allowed_values reordered';
      const list = (sign: string, count = 0, sample: readonly unknown[] = []) =>
        count === 0
          ? []
          : [
              `${sign}${count}${sample.length > 0 ? ` (${sample.map((v) => JSON.stringify(v)).join(', ')}${count > sample.length ? ', …' : ''})` : ''}`,
            ];
      const parts = [...list('+', c.added_count, c.added), ...list('-', c.removed_count, c.removed)];
      return `allowed_values ${parts.length > 0 ? parts.join(' ') : 'listed or not'}`;
    })
    .join('; ');
}

const impactText = (impact: Step['impact']) =>
  impact === undefined
    ? ''
    : impact === null
      ? ' (impact not counted)'
      : ` (removes ${impact.complete ? '' : 'at least '}${plural(impact.values, 'value')} from ${plural(impact.instances, 'instance')})`;

export function stepLine(step: Step): string {
  const attr = quoted(step.attribute ?? '');
  const type = quoted(step.type);
  const line = (() => {
    switch (step.action) {
      case 'create_type':
        return `+ create type ${type}`;
      case 'rename_type':
        return `~ rename type ${quoted(step.from ?? '')} to ${type}`;
      case 'withdraw_attribute':
        return `- withdraw ${attr} from ${type}${impactText(step.impact)}`;
      case 'redeclare_attribute':
        return `± redeclare ${attr} on ${type}: ${changesText(step.changes)} (definitions are immutable: withdraw, then declare again after the daily purge)${impactText(step.impact)}`;
      case 'declare_attribute':
        return `+ declare ${attr} on ${type}: ${specText(step.spec)}`;
    }
  })();
  return step.blocked ? `${line}\n    ! refused now: ${step.blocked.reason}: ${step.blocked.message}` : line;
}

function renderPlan(io: Io, plan: Plan, file: string) {
  const unchanged = `Unchanged: ${plural(plan.unchanged.types, 'type')}, ${plural(plan.unchanged.attributes, 'attribute')}.`;
  if (plan.steps.length === 0) {
    io.out(`No changes: the tenant matches ${file}. ${unchanged}\n`);
    return;
  }
  io.out(`Plan for ${file}: ${plural(plan.steps.length, 'change')}.\n`);
  for (const step of plan.steps) io.out(`  ${stepLine(step)}\n`);
  io.out(`${unchanged}\n`);
}

export const modelExport: Command = {
  path: ['export'],
  args: [],
  options: {},
  service: true,
  synopsis: '',
  summary: "Print the tenant's metamodel as a YAML document (types by name, their live definitions)",
  description:
    'Prints the document GET /entities/model returns, as YAML (with --json, as JSON): the user-defined types and\n' +
    'any type carrying definitions, in name order, each with its live definitions in name order; types are\n' +
    'referenced by name. Keep it in version control; `metamodel plan -f` and `metamodel apply -f` read it back.',
  examples: ['metamodel export > model.yaml', 'metamodel export --json > model.json'],
  async run(ctx) {
    const { model } = await ctx.client().request<{ model: unknown }>('GET', '/entities/model');
    ctx.io.out(ctx.json ? json(model) : YAML.stringify(model, { lineWidth: 0 }));
  },
};

export const modelPlan: Command = {
  path: ['plan'],
  args: [],
  options: {
    file: FILE_OPTION,
  },
  service: true,
  synopsis: '-f FILE',
  summary: 'Show what applying a model document would change (exit status 2 when it would change something)',
  description:
    'Asks the service for the plan (POST /entities/model/plan) and prints it: types to create or rename,\n' +
    'definitions to withdraw (with what withdrawing removes), to redeclare (a changed specification: definitions\n' +
    'are immutable) and to declare; a step the service would refuse now says why. Types the file does not list\n' +
    'are left alone. Writes nothing. Exit status: 0 no changes, 2 changes (as terraform plan -detailed-exitcode);\n' +
    'a usage error is 2 as well, with its message on stderr.',
  examples: ['metamodel plan -f model.yaml', 'metamodel plan -f model.yaml --json'],
  async run(ctx, _args, values) {
    const { document, file } = readModelFile(values);
    const plan = await planFor(ctx.client(), document);
    if (ctx.json) ctx.io.out(json(plan));
    else renderPlan(ctx.io, plan, file);
    return plan.steps.length > 0 ? EXIT_CHANGES : 0;
  },
};

export const modelApply: Command = {
  path: ['apply'],
  args: [],
  options: {
    file: FILE_OPTION,
    'allow-withdraw': {
      type: 'boolean',
      help: 'also withdraw definitions the file does not list or states differently (their data is removed)',
    },
  },
  service: true,
  synopsis: '-f FILE [--allow-withdraw]',
  summary: 'Make the tenant match a model document, step by step',
  description:
    'Plans the file (as `metamodel plan`) and applies its steps in order through the ordinary endpoints: creates\n' +
    'and renames types, withdraws definitions (only with --allow-withdraw), declares definitions. A definition\n' +
    'stated differently is withdrawn (with --allow-withdraw) and declared again by a later apply, once the daily\n' +
    'purge has removed its data. Stops at the first refusal and prints what was applied. Applying the same file\n' +
    'again changes nothing and says so. On a terminal a progress bar is drawn on stderr.',
  examples: ['metamodel apply -f model.yaml', 'metamodel apply -f model.yaml --allow-withdraw'],
  async run(ctx, _args, values) {
    const { document, file } = readModelFile(values);
    const client = ctx.client();
    const plan = await planFor(client, document);
    const allowWithdraw = values['allow-withdraw'] === true;
    const toApply = plan.steps.filter(
      (s) =>
        (allowWithdraw || (s.action !== 'withdraw_attribute' && s.action !== 'redeclare_attribute')) &&
        s.blocked?.reason !== 'attribute_def_withdrawn',
    );
    const skipped = plan.steps.filter((s) => !toApply.includes(s));
    const applied: Step[] = [];
    const waiting: Step[] = [...skipped.filter((s) => s.blocked?.reason === 'attribute_def_withdrawn')];
    // A type the plan names without its guid (created by an earlier step) is found by name, as the service
    // resolves names: the CLI does not compare names itself.
    const types = ctx.types();
    const guidOf = async (name: string, guid: string | null | undefined) =>
      guid ?? (await types.resolve(name)).guid;
    let bar: cliProgress.SingleBar | undefined;
    if (ctx.io.stderr.isTTY === true && toApply.length > 0) {
      bar = new cliProgress.SingleBar(
        { stream: ctx.io.stderr, format: 'apply |{bar}| {value}/{total} steps', hideCursor: true },
        cliProgress.Presets.shades_classic,
      );
      bar.start(toApply.length, 0);
    }
    const report = (failed?: { step: Step; error: Refusal }) => {
      if (ctx.json) {
        ctx.io.out(
          json({
            applied,
            skipped,
            waiting_for_purge: waiting,
            ...(failed ? { failed: failed.step, reason: failed.error.reason } : {}),
          }),
        );
        return;
      }
      if (applied.length > 0) {
        ctx.io.out(`Applied ${plural(applied.length, 'step')} of ${plan.steps.length} from ${file}:\n`);
        for (const step of applied) ctx.io.out(`  ${stepLine(step).split('\n')[0]}\n`);
      }
      if (failed) ctx.io.out(`Stopped at:\n  ${stepLine(failed.step).split('\n')[0]}\n`);
      const withdrawals = skipped.filter((s) => s.blocked?.reason !== 'attribute_def_withdrawn');
      if (withdrawals.length > 0) {
        ctx.io.out(
          `Not applied (they withdraw definitions; run with --allow-withdraw): ${plural(withdrawals.length, 'step')}:\n`,
        );
        for (const step of withdrawals) ctx.io.out(`  ${stepLine(step).split('\n')[0]}\n`);
      }
      if (waiting.length > 0) {
        ctx.io.out(
          `Waiting for the daily purge (the names are withdrawn; apply again after it): ${waiting.map((s) => quoted(s.attribute ?? '')).join(', ')}\n`,
        );
      }
    };
    if (toApply.length === 0) {
      bar?.stop();
      if (!ctx.json && skipped.length === 0) {
        ctx.io.out(`No changes: the tenant already matches ${file}.\n`);
      } else report();
      return 0;
    }
    try {
      for (const step of toApply) {
        await applyStep(client, step, guidOf);
        applied.push(step);
        if (step.action === 'redeclare_attribute') waiting.push(step);
        bar?.increment();
      }
    } catch (err) {
      bar?.stop();
      if (err instanceof Refusal) {
        report({ step: toApply[applied.length] as Step, error: err });
        throw err;
      }
      throw err;
    }
    bar?.stop();
    report();
    return 0;
  },
};

async function applyStep(
  client: Client,
  step: Step,
  guidOf: (name: string, guid: string | null | undefined) => Promise<string>,
) {
  const typeGuid = () => guidOf(step.type, step.type_guid);
  const attributePath = async () =>
    `/entities/attributes/${encodeURIComponent(await typeGuid())}/${encodeURIComponent(step.attribute ?? '')}`;
  switch (step.action) {
    case 'create_type': {
      await client.request('POST', '/entities/types', { body: { name: step.type } });
      return;
    }
    case 'rename_type':
      await client.request('PATCH', `/entities/types/${encodeURIComponent(await typeGuid())}`, {
        body: { name: step.type },
      });
      return;
    case 'withdraw_attribute':
    case 'redeclare_attribute':
      // A redeclaration is declared by a later apply, once the purge has freed the name.
      await client.request('DELETE', await attributePath());
      return;
    case 'declare_attribute': {
      const spec = { ...step.spec };
      if (spec.allowed_ref_type !== undefined) {
        spec.allowed_ref_type = await guidOf(spec.allowed_ref_type, step.ref_type_guid);
      }
      await client.request('POST', `/entities/types/${encodeURIComponent(await typeGuid())}/attributes`, {
        body: spec,
      });
      return;
    }
  }
}
