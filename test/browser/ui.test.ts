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

  /**
   * A page that fails the test on any request to another origin (the pages must work offline) and on anything
   * their Content-Security-Policy blocks (the policy must let the pages work).
   */
  async function newPage(): Promise<Page> {
    const page = await browser.newPage();
    const foreign: string[] = [];
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) {
        blocked.push(message.text());
      }
    });
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

  it('GraphiQL: with the token pasted into its headers editor a query runs and its result shows', async () => {
    const page = await newPage();
    const query = '{ entityTypeByName(name: "browser check type") { name origin } }';
    await page.goto(`${base}/graphql?query=${encodeURIComponent(query)}`);
    await page.locator('.graphiql-container').first().waitFor({ timeout: 30_000 });

    // Headers tab, then replace the editor's placeholder with the token (typed like a paste).
    await page.locator('button[data-name="headers"]').click();
    const headers = page.locator(
      'section.graphiql-editor-tool[aria-label="Headers"] .graphiql-editor:not(.hidden)',
    );
    await expect(headers.textContent()).resolves.toMatch(/Bearer\s<token>/); // Monaco shows spaces as U+00A0
    await headers.click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(JSON.stringify({ Authorization: `Bearer ${token}` }));

    await page.locator('.graphiql-execute-button').click();
    await expect
      .poll(() => responseText(page), { timeout: 20_000 })
      .toContain('"name": "Browser Check Type"');
    await expect(responseText(page)).resolves.toContain('"origin": "user_defined"');
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
