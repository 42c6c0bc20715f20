// `metamodel export | plan | apply`: the metamodel as a file. The service exports, plans and applies
// (GET /entities/model, POST /entities/model/plan and /apply: apply checks everything before it writes); this reads
// and writes files, says where it acts, renders plans and reports, and turns them into exit statuses.
// Over 300 lines: export, plan and apply share the file format, its reading and the plan's rendering.
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import type { ApplyReport, ModelPlan, PlanStep } from '../../src/contract/model-document.js';
import type { FieldChange } from '../../src/contract/wire.js';
import { type Client, Refusal, UsageError } from './client.js';
import { type Command, type Ctx, type OptionSpec, quoted, stringOption, type Values } from './command.js';
import { type DocumentProblem, problemLines } from './locate.js';
import type { Io } from './output.js';
import { json, plural } from './output.js';

/** A plan step, a plan and an apply's report as the service sends them (POST /entities/model/plan, /apply). */
type Step = PlanStep;
type Plan = ModelPlan;

const FILE_OPTION: OptionSpec = {
  type: 'string',
  short: 'f',
  value: 'FILE',
  help: 'the model document (YAML or JSON; - for stdin)',
};

/** Exit status of `plan` when the file would change something (terraform plan -detailed-exitcode). */
export const EXIT_CHANGES = 2;
/**
 * Exit status of `apply` when all it could do is done but the tenant does not match the file yet: redeclarations are
 * carrying their values, or names are still being purged (the service finishes them; apply again, or use --wait).
 */
export const EXIT_WAITING = 4; // EXIT.waiting in main.ts

const EXPECT_TENANT_OPTION: OptionSpec = {
  type: 'string',
  value: 'TENANT',
  help: "refuse to act unless the token's tenant is TENANT",
};

function readModelFile(values: Values): { document: unknown; file: string; text: string } {
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
    return { document: YAML.parse(text, { maxAliasCount: 100 }), file, text };
  } catch (err) {
    // The parser's whole message: where, and the line with a caret under the place.
    throw new UsageError(`${file} is not YAML or JSON: ${(err as Error).message.trimEnd()}`);
  }
}

const planFor = (client: Client, document: unknown) =>
  client.request<Plan>('POST', '/entities/model/plan', { body: document });

/** Where a command acts: the service's address and the token's tenant (a line, and fields of --json). */
/** The service's address as the user gave it, without a trailing slash. */
const serviceOf = (client: Client) => client.baseUrl.replace(/\/$/, '');
const whereText = (client: Client, tenant: string) => `tenant ${quoted(tenant)} at ${serviceOf(client)}`;

/**
 * Runs a command that acts on the tenant through the service; a refusal says where it was refused (the service, the
 * file, and the tenant when the service names it), in its text and its --json.
 */
async function sayingWhere<T>(
  client: Client,
  file: string,
  act: () => Promise<T>,
  text?: string,
): Promise<T> {
  try {
    return await act();
  } catch (err) {
    if (err instanceof Refusal) {
      const data = err.envelope.DATA as
        | { tenant?: unknown; problems?: unknown; problem_count?: unknown }
        | undefined;
      const tenant = data?.tenant;
      err.where = { service: serviceOf(client), file, ...(typeof tenant === 'string' ? { tenant } : {}) };
      // Every problem of the file, each at its line and column (also in --json: `line`, `column`).
      if (text !== undefined && Array.isArray(data?.problems)) {
        const problems = data.problems as DocumentProblem[];
        err.detail = problemLines(file, text, problems, Number(data.problem_count ?? problems.length));
      }
    }
    throw err;
  }
}

/** --expect-tenant: a plan for another tenant than the one meant is refused before anything else is said. */
function expectTenant(values: Values, tenant: string) {
  const expected = stringOption(values, 'expect-tenant');
  if (expected !== undefined && expected !== tenant) {
    throw new Refusal(409, {
      STATUS: 'FAIL',
      MESSAGE: `This token is for tenant "${tenant}", not "${expected}": nothing was done.`,
      DATA: { reason: 'tenant_mismatch', tenant },
    });
  }
}

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

/** What a redeclaration's carry keeps and refuses, as the plan counted it. */
const carryText = (carry: Step['carry']) =>
  carry === undefined || carry === null
    ? ', values carried (not counted)'
    : `, carrying ${carry.complete ? '' : 'at least '}${plural(carry.values, 'value')}${carry.refused > 0 ? `; ${plural(carry.refused, 'value')} the new definition refuses would be removed` : ''}`;

export function stepLine(step: Step): string {
  const attr = quoted(step.attribute ?? '');
  const type = quoted(step.type);
  const line = (() => {
    switch (step.action) {
      case 'create_type':
        return step.looks_like_rename_of === undefined
          ? `+ create type ${type}`
          : `+ create type ${type}\n    ? ${quoted(step.looks_like_rename_of)} has definitions of the same names and is not in the file: if this is a rename, add \`renamed_from: ${step.looks_like_rename_of}\` to ${type} (else ${quoted(step.looks_like_rename_of)} stays as it is)`;
      case 'rename_type':
        return `~ rename type ${quoted(step.from ?? '')} to ${type}`;
      case 'describe_type':
        return `~ describe type ${type}: ${changesText(step.changes)}`;
      case 'withdraw_attribute':
        return `- withdraw ${attr} from ${type}${impactText(step.impact)}`;
      case 'redeclare_attribute':
        return `± redeclare ${attr} on ${type}: ${changesText(step.changes)} (not a change in place: withdrawn, then declared anew by the service after the purge's grace${carryText(step.carry)})`;
      case 'evolve_attribute':
        return `~ change ${attr} on ${type} in place: ${changesText(step.changes)} (its values are kept)`;
      case 'declare_attribute':
        return `+ declare ${attr} on ${type}: ${specText(step.spec)}`;
    }
  })();
  return step.blocked ? `${line}\n    ! refused now: ${step.blocked.reason}: ${step.blocked.message}` : line;
}

/** Definitions a carried redeclaration under way will declare as the file states them: one message for plan and apply. */
function renderRedeclaring(io: Io, redeclaring: Plan['redeclaring']) {
  if (redeclaring.length === 0) return;
  io.out(
    `Being redeclared as the file states them (the service declares each once its values are carried, after the purge's grace): ${redeclaring
      .map(
        (r) =>
          `${quoted(r.attribute)} on ${quoted(r.type)}${r.ends_after ? ` (not before ${r.ends_after})` : ''}`,
      )
      .join(', ')}\n`,
  );
}

/** What the tenant has that the file does not mention, under its own heading (nothing when there is none). */
function renderDrift(io: Io, plan: Plan) {
  const { types, unmanaged, more } = plan.drift;
  const withdrawn = plan.steps.filter((s) => s.action === 'withdraw_attribute');
  if (types.length + unmanaged.length + withdrawn.length === 0) return;
  io.out('Not in the file (drift):\n');
  for (const t of types) {
    io.out(`  · type ${quoted(t.name)} (${plural(t.attributes, 'attribute')}): left alone\n`);
  }
  if (more) io.out('  · and more types (the list stops at 1,000): left alone\n');
  for (const t of unmanaged) {
    io.out(
      `  · the ${plural(t.attributes, 'attribute')} of ${quoted(t.name)} (listed without \`attributes\`): left alone\n`,
    );
  }
  for (const s of withdrawn) {
    io.out(
      `  · ${quoted(s.attribute ?? '')} of ${quoted(s.type)}: withdrawn with --allow-withdraw (see above)\n`,
    );
  }
}

function renderPlan(io: Io, plan: Plan, file: string, where: string) {
  const unchanged = `Unchanged: ${plural(plan.unchanged.types, 'type')}, ${plural(plan.unchanged.attributes, 'attribute')}.`;
  if (plan.steps.length === 0) {
    io.out(`No changes: ${where} matches ${file}. ${unchanged}\n`);
    renderRedeclaring(io, plan.redeclaring);
    renderDrift(io, plan);
    return;
  }
  io.out(`Plan for ${file} on ${where}: ${plural(plan.steps.length, 'change')}.\n`);
  for (const step of plan.steps) io.out(`  ${stepLine(step)}\n`);
  io.out(`${unchanged}\n`);
  renderRedeclaring(io, plan.redeclaring);
  renderDrift(io, plan);
  const blocked = plan.steps.filter((s) => s.blocked && s.blocked.reason !== 'attribute_def_withdrawn');
  if (blocked.length > 0) {
    io.out(
      `${plural(blocked.length, 'step')} would be refused now: apply will refuse to start until the file is fixed.\n`,
    );
  }
  io.out(`Plan version: ${plan.based_on} (apply --based-on it to act only on this state)\n`);
}

export const modelExport: Command = {
  path: ['export'],
  args: [],
  options: {
    'former-names': {
      type: 'boolean',
      help: 'write renamed_from on each renamed type (its name before its last rename)',
    },
  },
  service: true,
  synopsis: '[--former-names]',
  summary: "Print the tenant's metamodel as a YAML document (types by name, their live definitions)",
  description:
    'Prints the document GET /entities/model returns, as YAML (with --json, as JSON): the user-defined types and\n' +
    'any type carrying definitions, in name order, each with its live definitions in name order; types are\n' +
    'referenced by name. Keep it in version control; `metamodel plan -f` and `metamodel apply -f` read it back.\n' +
    'With --former-names a renamed type also says the name it had before its last rename (renamed_from), so that\n' +
    'a tenant still holding it under that name renames it instead of getting a second type.',
  examples: [
    'metamodel export > model.yaml',
    'metamodel export --former-names > model.yaml',
    'metamodel export --json > model.json',
  ],
  async run(ctx, _args, values) {
    const client = ctx.client();
    const { model } = await client.request<{ model: Record<string, unknown> }>('GET', '/entities/model', {
      query: { former_names: values['former-names'] === true ? 'true' : undefined },
    });
    // The document's JSON Schema, named in the file, so that an editor validates it as it is typed (the YAML
    // language server reads the modeline; JSON editors read `$schema`); a plan ignores both.
    const schema = `${serviceOf(client)}/schemas/metamodel.json`;
    ctx.io.out(
      ctx.json
        ? json({ $schema: schema, ...model })
        : `# yaml-language-server: $schema=${schema}\n${YAML.stringify(model, { lineWidth: 0 })}`,
    );
  },
};

export const modelPlan: Command = {
  path: ['plan'],
  args: [],
  options: {
    file: FILE_OPTION,
    'expect-tenant': EXPECT_TENANT_OPTION,
  },
  service: true,
  synopsis: '-f FILE [--expect-tenant TENANT]',
  summary: 'Show what applying a model document would change (exit status 2 when it would change something)',
  description:
    'Asks the service for the plan (POST /entities/model/plan) and prints it, headed by the tenant and the\n' +
    'service it was made on: types to create or rename, definitions to withdraw (with what withdrawing removes),\n' +
    'to change in place (values added to an enumeration, required dropped, filterable, a default: at once, values\n' +
    'kept), to redeclare (any other change: the service carries the stored values the new definition accepts, and\n' +
    'the plan counts them) and to declare; a step the service would refuse now says\n' +
    'why. Types the file does not list are left alone, and so are the definitions of a type listed without\n' +
    '`attributes`: both are listed under "Not in the file (drift)" (and in --json, `drift`), with the definitions\n' +
    'the file leaves out of a type it lists (withdrawn with --allow-withdraw). Writes nothing.\n' +
    'Exit status, as terraform plan -detailed-exitcode: 0 no changes, 2 changes, 1 any error (refused, e.g.\n' +
    '--expect-tenant names another tenant; a usage error; the service unreachable): never 2 for a mistake.',
  examples: [
    'metamodel plan -f model.yaml',
    'metamodel plan -f model.yaml --expect-tenant production --json',
  ],
  async run(ctx, _args, values) {
    const { document, file, text } = readModelFile(values);
    const client = ctx.client();
    const plan = await sayingWhere(
      client,
      file,
      async () => {
        const made = await planFor(client, document);
        expectTenant(values, made.tenant);
        return made;
      },
      text,
    );
    if (ctx.json) ctx.io.out(json({ service: serviceOf(client), file, ...plan }));
    else {
      renderPlan(ctx.io, plan, file, whereText(client, plan.tenant));
    }
    return plan.steps.length > 0 ? EXIT_CHANGES : 0;
  },
};

/** Most apply rounds one run makes (each at most 500 steps): a document the service bounds takes fewer. */
const MAX_ROUNDS = 200;
/** How long --wait waits for carries and purges, and how often it looks (soon at first, then every 5 s). */
const WAIT_MS = 15 * 60_000;
const waitPollMs = (attempt: number) => Math.min(5_000, 250 * 2 ** attempt);

/** The change reason apply sends: the file, the commit and the message given (visible ASCII, at most 500). */
export function applyReason(file: string, values: Values): string {
  const commit = stringOption(values, 'commit');
  const message = stringOption(values, 'reason');
  const text = [`apply ${file}`, commit ? `@ ${commit}` : '', message ? `: ${message}` : '']
    .filter(Boolean)
    .join(' ')
    .replace(/ :/, ':');
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, 500);
}

export const modelApply: Command = {
  path: ['apply'],
  args: [],
  options: {
    file: FILE_OPTION,
    'allow-withdraw': {
      type: 'boolean',
      help: 'also withdraw (and redeclare) definitions the file does not list or states differently',
    },
    'expect-tenant': EXPECT_TENANT_OPTION,
    'based-on': {
      type: 'string',
      value: 'VERSION',
      help: "the reviewed plan's version (plan --json: based_on): refuse if the tenant changed since",
    },
    reason: { type: 'string', value: 'TEXT', help: 'why: recorded with every change (with the file name)' },
    commit: {
      type: 'string',
      value: 'SHA',
      help: 'the commit the file comes from, recorded with every change',
    },
    wait: {
      type: 'boolean',
      help: 'wait (up to 15 minutes) for carried redeclarations and purges, until the tenant matches the file',
    },
  },
  service: true,
  synopsis:
    '-f FILE [--allow-withdraw] [--expect-tenant TENANT] [--based-on VERSION] [--reason TEXT] [--commit SHA] [--wait]',
  summary: 'Make the tenant match a model document: the service checks every step, then acts',
  description:
    'Sends the file to the service (POST /entities/model/apply), which plans it again and refuses to start,\n' +
    'writing nothing, when a step would be refused, when steps withdraw definitions and --allow-withdraw is not\n' +
    'given (all are listed), when the token is not for --expect-tenant, or when the tenant changed since the plan\n' +
    '--based-on names. Then it applies the steps in order; another change of the tenant between two steps stops it\n' +
    'with what was done and what remains (apply again to finish). A definition stated differently is changed in\n' +
    'place when every stored value survives the change; otherwise it is withdrawn and declared anew by the\n' +
    "service once its values are carried (after the purge's grace), with every stored value it accepts (those\n" +
    'it refuses are reported in its history record). Every change records why: "apply FILE @ COMMIT: REASON".\n' +
    'Exit status: 0 the tenant matches the file; 1 refused or stopped; 4 applied, but redeclarations are still\n' +
    'carrying values or names are still being purged (run again later, or pass --wait); 2 usage; 3 unreachable.',
  examples: [
    'metamodel apply -f model.yaml --expect-tenant staging',
    'metamodel apply -f model.yaml --allow-withdraw --commit "$(git rev-parse --short HEAD)" --wait',
    'metamodel apply -f model.yaml --based-on "$(metamodel plan -f model.yaml --json | jq -r .based_on)"',
  ],
  async run(ctx, _args, values) {
    const { document, file, text } = readModelFile(values);
    const client = ctx.client();
    return sayingWhere(client, file, () => applyFile(ctx, client, document, file, values), text);
  },
};

/** Applies the document in rounds, renders what was done, and says whether the tenant now matches it. */
async function applyFile(ctx: Ctx, client: Client, document: unknown, file: string, values: Values) {
  const reason = applyReason(file, values);
  const body = (basedOn: string | undefined) => ({
    document,
    allow_withdraw: values['allow-withdraw'] === true,
    ...(stringOption(values, 'expect-tenant') !== undefined
      ? { expect_tenant: stringOption(values, 'expect-tenant') }
      : {}),
    ...(basedOn !== undefined ? { based_on: basedOn } : {}),
  });
  const apply = async (basedOn: string | undefined) => {
    try {
      return await client.request<ApplyReport>('POST', '/entities/model/apply', {
        body: body(basedOn),
        headers: { 'x-change-reason': reason },
      });
    } catch (err) {
      if (err instanceof Refusal && err.reason === 'plan_not_applicable' && !ctx.json) {
        renderRefusedPlan(ctx.io, err, file, serviceOf(client));
      }
      throw err;
    }
  };
  // Rounds of at most 500 steps, each based on the version the last one left: nobody else's change between.
  const all: ApplyReport[] = [];
  let report = await apply(stringOption(values, 'based-on'));
  all.push(report);
  for (let round = 1; report.more && report.stopped === null && round < MAX_ROUNDS; round += 1) {
    report = await apply(report.model_version);
    all.push(report);
  }
  const total = {
    service: serviceOf(client),
    file,
    tenant: report.tenant,
    based_on: all[0]?.based_on,
    model_version: report.model_version,
    applied: all.flatMap((r) => r.applied),
    carrying: all.flatMap((r) => r.carrying),
    waiting: report.waiting,
    remaining: report.remaining,
    stopped: report.stopped,
    redeclaring: report.redeclaring,
    matches: report.matches,
  };
  if (!ctx.json) renderApply(ctx.io, total, whereText(client, report.tenant));
  if (report.stopped) {
    if (ctx.json) ctx.io.out(json(total));
    throw new Refusal(409, {
      STATUS: 'FAIL',
      MESSAGE: `Stopped at a step: ${report.stopped.reason}: ${report.stopped.message} Apply again to finish.`,
      DATA: { reason: report.stopped.reason },
    });
  }
  let matches = report.matches;
  if (!matches && values.wait === true) matches = await waitForMatch(ctx.io, ctx.json, apply);
  if (ctx.json) ctx.io.out(json({ ...total, matches }));
  return matches ? 0 : EXIT_WAITING;
}

/** --wait: applies again every few seconds (a no-op but for names now free) until the tenant matches, or gives up. */
async function waitForMatch(
  io: Io,
  quiet: boolean,
  apply: (basedOn: string | undefined) => Promise<ApplyReport>,
) {
  const until = Date.now() + WAIT_MS;
  for (let attempt = 0; Date.now() < until; attempt += 1) {
    await new Promise((r) => setTimeout(r, waitPollMs(attempt)));
    const again = await apply(undefined);
    if (again.stopped) return false;
    if (again.matches) {
      if (!quiet) io.out('The tenant now matches the file.\n');
      return true;
    }
  }
  if (!quiet) io.out('Still waiting after 15 minutes: apply again later.\n');
  return false;
}

function renderRefusedPlan(io: Io, err: Refusal, file: string, service: string) {
  const data = err.envelope.DATA as { tenant?: string; blocked?: Step[]; withdrawals?: Step[] };
  io.out(`Nothing was applied from ${file} to tenant ${quoted(data.tenant ?? '')} at ${service}:\n`);
  if (data.blocked && data.blocked.length > 0) {
    io.out(`${plural(data.blocked.length, 'step')} would be refused now (fix the file):\n`);
    for (const step of data.blocked) io.out(`  ${stepLine(step)}\n`);
  }
  if (data.withdrawals && data.withdrawals.length > 0) {
    io.out(`${plural(data.withdrawals.length, 'step')} withdraw definitions (run with --allow-withdraw):\n`);
    for (const step of data.withdrawals) io.out(`  ${stepLine(step).split('\n')[0]}\n`);
  }
}

function renderApply(
  io: Io,
  r: {
    file: string;
    applied: Step[];
    carrying: Step[];
    waiting: Step[];
    remaining: Step[];
    stopped: ApplyReport['stopped'];
    redeclaring: ApplyReport['redeclaring'];
    matches: boolean;
  },
  where: string,
) {
  if (r.applied.length === 0 && r.matches) {
    io.out(`No changes: ${where} already matches ${r.file}.\n`);
    return;
  }
  if (r.applied.length > 0) {
    io.out(`Applied ${plural(r.applied.length, 'step')} from ${r.file} to ${where}:\n`);
    for (const step of r.applied) io.out(`  ${stepLine(step).split('\n')[0]}\n`);
  } else {
    io.out(`Nothing was applied from ${r.file} to ${where}.\n`);
  }
  if (r.stopped) {
    io.out(`Stopped at (${r.stopped.reason}):\n  ${stepLine(r.stopped.step).split('\n')[0]}\n`);
    io.out(`Not applied: ${plural(r.remaining.length, 'step')}; apply again to finish.\n`);
  }
  renderRedeclaring(io, r.redeclaring);
  if (r.carrying.length > 0) {
    io.out(
      `Carrying values (the service declares each anew once its values are carried, after the purge's grace): ${r.carrying.map((s) => `${quoted(s.attribute ?? '')} on ${quoted(s.type)}`).join(', ')}\n`,
    );
  }
  if (r.waiting.length > 0) {
    io.out(
      `Waiting for the purge (the names are withdrawn; apply again after it): ${r.waiting.map((s) => quoted(s.attribute ?? '')).join(', ')}\n`,
    );
  }
  if (r.matches) io.out(`The tenant matches ${r.file}.\n`);
}
