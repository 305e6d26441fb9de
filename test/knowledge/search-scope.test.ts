import { describe, expect, it } from 'vitest';
import { agentScopes, validScopes } from '../../src/knowledge/search-scope.js';

const KB = '0190a3c4-0000-7000-8000-000000000001';
const D1 = '0190a3c4-0000-7000-8000-0000000000d1';
const D2 = '0190a3c4-0000-7000-8000-0000000000d2';

describe('agent search scopes', () => {
  it('an empty list is the whole knowledge base, a list only its documents', () => {
    expect(agentScopes([{ id: KB, documents: [] }])).toEqual([{ kbId: KB, documentIds: null }]);
    expect(agentScopes([{ id: KB }])).toEqual([{ kbId: KB, documentIds: null }]);
    expect(agentScopes([{ id: KB, documents: [D1] }])).toEqual([{ kbId: KB, documentIds: [D1] }]);
  });

  it('the same knowledge base twice reads the union; an empty list wins in either order', () => {
    expect(agentScopes([{ id: KB, documents: [D1] }, { id: KB, documents: [D2, D1] }])).toEqual([{ kbId: KB, documentIds: [D1, D2] }]);
    expect(agentScopes([{ id: KB, documents: [D1] }, { id: KB, documents: [] }])).toEqual([{ kbId: KB, documentIds: null }]);
    expect(agentScopes([{ id: KB, documents: [] }, { id: KB, documents: [D1] }])).toEqual([{ kbId: KB, documentIds: null }]);
  });

  it('ids that cannot exist are dropped without widening a restricted scope', () => {
    expect(validScopes([{ kbId: KB, documentIds: ['nope'] }, { kbId: 'kb-1', documentIds: null }])).toEqual([{ kbId: KB, documentIds: [] }]);
  });
});
