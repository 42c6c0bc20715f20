// Pothos builder: configuration only (plugins, context type). Types are defined in the files beside it.

import SchemaBuilder from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import type { RequestContext } from '../context.js';
import { pageRange } from '../model/pages.js';

export const builder = new SchemaBuilder<{
  Context: RequestContext;
  DefaultFieldNullability: false;
  Scalars: { JSON: { Input: unknown; Output: unknown } };
}>({
  plugins: [RelayPlugin],
  defaultFieldNullability: false,
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    nodeQueryOptions: false,
    nodesQueryOptions: false,
    // Descriptions of what the Relay plugin generates (connection arguments, edges, page info).
    firstArgOptions: {
      description: `Rows per page: an integer from ${pageRange()}. Outside that range: invalid_page_size.`,
    },
    afterArgOptions: {
      description:
        'Opaque cursor (an endCursor or edge cursor this API issued to your tenant): the page starts after it. A cursor altered, minted elsewhere or issued to another tenant: invalid_cursor.',
    },
    beforeArgOptions: {
      description:
        'Not supported: paging is forward only (first/after); sending it is refused with invalid_field.',
    },
    lastArgOptions: {
      description:
        'Not supported: paging is forward only (first/after); sending it is refused with invalid_field.',
    },
    pageInfoTypeOptions: { description: 'Where a page stands in the whole list.' },
    hasNextPageFieldOptions: {
      description: 'True when more rows follow: pass endCursor as after to read the next page.',
    },
    hasPreviousPageFieldOptions: { description: 'True when the page was read with an after cursor.' },
    startCursorFieldOptions: {
      description: 'Cursor of the first row of the page; null when the page is empty.',
    },
    endCursorFieldOptions: {
      description: 'Cursor of the last row of the page (pass it as after); null when the page is empty.',
    },
    edgesFieldOptions: { description: 'The rows of the page, in list order.' },
    pageInfoFieldOptions: {
      description: 'Paging state: whether more rows follow, and the cursors to continue.',
    },
    cursorFieldOptions: { description: 'Opaque cursor of this row: pass it as after to continue after it.' },
    nodeFieldOptions: { description: 'The row itself.' },
  },
});

builder.queryType({
  description:
    "Reads of the entity metamodel. Everything is scoped to the tenant of the caller's bearer token: another tenant's guids, names and cursors behave like unknown ones.",
});
builder.mutationType({
  description:
    'Changes to the entity metamodel. A refusal is a GraphQL error whose extensions.reason carries the same machine-readable reason as over REST; extensions.code is its standard GraphQL code (BAD_USER_INPUT, GRAPHQL_VALIDATION_FAILED, UNAUTHENTICATED, FORBIDDEN, SERVICE_UNAVAILABLE, INTERNAL_SERVER_ERROR).',
});
