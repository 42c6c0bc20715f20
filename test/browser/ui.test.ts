// The browser pages, in a real Chromium (playwright-core with the system browser): the API reference at /docs and
// GraphiQL at /graphql, each used the way a person would: paste a token, run a request, read the answer on the page.
// Without a Chromium the suite is skipped with a message; CI installs one and sets REQUIRE_BROWSER=1, which turns
// a missing browser into a failure.
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createType, createWorld, newTenant, restClient, type TestWorld, tokenFor } from '../helpers.js';

const CANDIDATES = [
  process.env.CHROMIUM_PATH,
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
].filter((p): p is string => typeof p === 'string' && p !== '');
const executablePath = CANDIDATES.find((p) => existsSync(p));

if (!executablePath) {
  const message = `browser tests skipped: no Chromium found (looked at ${CANDIDATES.join(', ')}; set CHROMIUM_PATH)`;
  if (process.env.REQUIRE_BROWSER === '1') throw new Error(`${message}, and REQUIRE_BROWSER=1`);
  console.warn(message);
}

describe.runIf(executablePath !== undefined)('browser pages', () => {
  let world: TestWorld;
  let browser: Browser;
  let base: string;
  let tenant: string;
  let token: string;

  beforeAll(async () => {
    world = await createWorld();
    await world.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(world.app.server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
    tenant = newTenant('ui');
    token = await tokenFor(tenant);
    await createType(restClient(world.app, token), 'Browser Check Type');
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await world?.close();
  });

  /** The console errors and uncaught exceptions of each page so far (a test checks them when it means to). */
  const errors = new WeakMap<Page, string[]>();
  const errorsOf = (page: Page) => errors.get(page) ?? [];

  /**
   * A page that fails the test on any request to another origin (the pages must work offline) and on anything
   * their Content-Security-Policy blocks (the policy must let the pages work).
   */
  async function newPage(): Promise<Page> {
    const page = await browser.newPage();
    const foreign: string[] = [];
    const blocked: string[] = [];
    const seen: string[] = [];
    errors.set(page, seen);
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      seen.push(message.text());
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
    });
    page.on('pageerror', (error) => seen.push(error.message));
    page.on('close', () => expect(blocked).toEqual([]));
    await page.route('**/*', (r) => {
      const url = r.request().url();
      if (url.startsWith(base) || url.startsWith('data:') || url.startsWith('blob:')) return r.continue();
      foreign.push(url);
      return r.abort();
    });
    page.on('close', () => expect(foreign).toEqual([]));
    return page;
  }

  /** GraphiQL's result pane as text (its editor shows spaces as U+00A0). */
  const responseText = async (page: Page) =>
    ((await page.locator('.graphiql-response').textContent()) ?? '').replace(/\s+/g, ' ');
  /** GraphiQL's operation editor as text. */
  const queryText = async (page: Page) =>
    ((await page.locator('.graphiql-query-editor .graphiql-editor').textContent()) ?? '').replace(
      /\s+/g,
      ' ',
    );

  /** Replaces the placeholder of GraphiQL's headers editor with the token, typed like a paste. */
  async function pasteToken(page: Page) {
    await page.locator('button[data-name="headers"]').click();
    const headers = page.locator(
      'section.graphiql-editor-tool[aria-label="Headers"] .graphiql-editor:not(.hidden)',
    );
    await expect(headers.textContent()).resolves.toMatch(/Bearer\s<token>/); // Monaco shows spaces as U+00A0
    await headers.click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(JSON.stringify({ Authorization: `Bearer ${token}` }));
  }

  /** The fields of the Query type as GraphiQL's Docs pane lists them. */
  async function docsOfQuery(page: Page) {
    const docs = page.locator('.graphiql-doc-explorer');
    if (!(await docs.isVisible()))
      await page.locator('button[aria-label="Show Documentation Explorer"]').click();
    await docs.getByText('Query', { exact: true }).first().click();
    await docs.getByText('entityTypeByName', { exact: true }).first().waitFor({ timeout: 10_000 });
    const text = (await docs.textContent()) ?? '';
    await page.locator('.graphiql-doc-explorer-back').click(); // back to the schema's root, as it was opened
    return text;
  }

  it('/docs at first sight: no warning or error box, no console error, Authorize offers the bearer scheme only, a body example per value type', async () => {
    const page = await newPage();
    await page.goto(`${base}/docs`);
    await page.locator('#operations-Entity_types-listEntityTypes').waitFor({ timeout: 20_000 });
    await page.waitForLoadState('networkidle');
    await expect(page.locator('.swagger-ui .errors-wrapper').count()).resolves.toBe(0);

    await page.locator('.auth-wrapper .authorize').click();
    await expect(page.locator('.auth-container h4').allTextContents()).resolves.toEqual([
      expect.stringMatching(/^bearer\b/),
    ]);
    await page.locator('.modal-ux .close-modal').click();

    // The declaration's body starts as a valid string declaration; the drop-down has one per value type.
    const declare = page.locator('#operations-Attributes-declareAttribute');
    await declare.locator('.opblock-summary').click();
    const body = JSON.parse(await declare.locator('textarea.body-param__text').inputValue());
    expect(body).toMatchObject({
      name: 'tier',
      value_type: 'string',
      allowed_values: ['gold', 'silver', 'bronze'],
    });
    const options = await declare
      .locator('.examples-select select')
      .first()
      .locator('option')
      .allTextContents();
    expect(options.map((o) => o.split(':')[0])).toEqual([
      'string',
      'number',
      'boolean',
      'date',
      'json',
      'entity_ref',
    ]);
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  }, 60_000);

  it('/docs: the reference lists the operations; with a pasted token "Try it out" lists the tenant’s types', async () => {
    const page = await newPage();
    await page.goto(`${base}/docs/`);
    await expect(
      page.locator('.swagger-ui .info .title').textContent({ timeout: 20_000 }),
    ).resolves.toContain('Entity Metamodel API');
    const op = page.locator('#operations-Entity_types-listEntityTypes');
    await op.waitFor();

    await page.locator('.auth-wrapper .authorize').click();
    await page.locator('.auth-container').first().locator('input').fill(token);
    await page.locator('.auth-container').first().locator('button.authorize').click();
    await page.locator('.modal-ux .close-modal').click();

    await op.locator('.opblock-summary').click();
    // "Try it out" is on from the start (uiConfig.tryItOutEnabled), so Execute is there at once.
    await op.locator('button.execute').click();
    const body = op.locator('.live-responses-table .response-col_description pre').first();
    await expect(body.textContent({ timeout: 20_000 })).resolves.toContain('Browser Check Type');
    await expect(
      op.locator('.live-responses-table tbody .response-col_status').first().textContent(),
    ).resolves.toContain('200');
    await page.close();
  }, 60_000);

  it('GraphiQL: with the token pasted into its headers editor a query runs and its result shows; after a reload the token is still there', async () => {
    const page = await newPage();
    const query = '{ entityTypeByName(name: "browser check type") { name origin } }';
    await page.goto(`${base}/graphql?query=${encodeURIComponent(query)}`);
    await page.locator('.graphiql-container').first().waitFor({ timeout: 30_000 });

    // Headers tab, then replace the editor's placeholder with the token (typed like a paste).
    await pasteToken(page);

    await page.locator('.graphiql-execute-button').click();
    await expect
      .poll(() => responseText(page), { timeout: 20_000 })
      .toContain('"name": "Browser Check Type"');
    await expect(responseText(page)).resolves.toContain('"origin": "user_defined"');
    // The headers typed are kept in the browser's localStorage (GraphiQL's shouldPersistHeaders; it writes its
    // storage after a pause in editing: given time), under GraphiQL's own keys.
    const holding = async () =>
      page.evaluate((t) => {
        const keys: string[] = [];
        for (let i = 0; i < localStorage.length; i += 1) {
          const key = localStorage.key(i) as string;
          if ((localStorage.getItem(key) ?? '').includes(t)) keys.push(key);
        }
        return keys.sort();
      }, token);
    await expect.poll(holding, { timeout: 5_000 }).toContain('graphiql:headers');
    expect((await holding()).every((key) => key.startsWith('graphiql:'))).toBe(true);
    // So a reload brings the token back into the headers editor, and the query runs without pasting it again.
    await page.reload();
    await page.locator('.graphiql-container').first().waitFor({ timeout: 30_000 });
    await page.locator('button[data-name="headers"]').click();
    const headers = page.locator(
      'section.graphiql-editor-tool[aria-label="Headers"] .graphiql-editor:not(.hidden)',
    );
    await expect.poll(async () => (await headers.textContent()) ?? '', { timeout: 10_000 }).toContain(token);
    await page.locator('.graphiql-execute-button').click();
    await expect
      .poll(() => responseText(page), { timeout: 20_000 })
      .toContain('"name": "Browser Check Type"');
    await page.close();
  }, 60_000);

  it('GraphiQL at first sight: the starter query, Docs and autocomplete, and no request or refusal before a token; with the token pasted the starter query runs', async () => {
    const page = await newPage();
    const sent: string[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(`${base}/graphql`) && r.resourceType() !== 'document') sent.push(r.method());
    });
    await page.goto(`${base}/graphql`);
    await page.locator('.graphiql-container').first().waitFor({ timeout: 30_000 });
    await page.waitForLoadState('networkidle');

    // The starter query and how to pass the token; nothing sent, so nothing refused, and no console error.
    await expect.poll(() => queryText(page), { timeout: 10_000 }).toContain('entityTypes(first: 5)');
    await expect(queryText(page)).resolves.toContain('Open Headers (below) and replace <token>');
    await expect(responseText(page)).resolves.toBe('');
    expect(sent).toEqual([]);
    expect(errorsOf(page)).toEqual([]);
    // The schema came with the page: Docs lists the queries before any token.
    await expect(docsOfQuery(page)).resolves.toContain('entityTypes');

    // With the token pasted, Docs lists them still (no re-fetch), and the starter query runs.
    await pasteToken(page);
    await expect(docsOfQuery(page)).resolves.toContain('entityTypes');
    await page.locator('.graphiql-execute-button').click();
    await expect
      .poll(() => responseText(page), { timeout: 20_000 })
      .toContain('"name": "Browser Check Type"');
    expect(sent).toEqual(['POST']);

    // Autocomplete knows the schema's fields.
    await page.locator('.graphiql-query-editor .graphiql-editor').click();
    await page.keyboard.press('ControlOrMeta+End');
    await page.keyboard.insertText('\nquery Other { entityTy');
    await page.keyboard.press('Control+Space');
    await expect
      .poll(
        async () => (await page.locator('.suggest-widget .monaco-list-row').allTextContents()).join(' '),
        {
          timeout: 10_000,
        },
      )
      .toContain('entityTypes');
    expect(errorsOf(page)).toEqual([]);
    await page.close();
  }, 60_000);

  it('GraphiQL without a token: the query runs and the page shows the unauthenticated refusal', async () => {
    const page = await newPage();
    await page.goto(
      `${base}/graphql?query=${encodeURIComponent('{ entityTypeByName(name: "x") { name } }')}`,
    );
    await page.locator('.graphiql-container').first().waitFor({ timeout: 30_000 });
    await page.locator('.graphiql-execute-button').click();
    await expect.poll(() => responseText(page), { timeout: 20_000 }).toContain('"reason": "unauthenticated"');
    await page.close();
  }, 60_000);
});
