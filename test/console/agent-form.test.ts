import { describe, expect, it } from 'vitest';
import { AGENT_CONFIG_FIELDS, CreateAgentBody, PatchAgentBody } from '../../src/agents/agent.schemas.js';
import { ALL_FIELDS, buildBody, CONFIG_FIELDS, configDiff, fieldForLoc, rollbackBody, toolEntry } from '../../src/console/public/js/views/agent-fields.js';

/** The agent editor's pure parts: the field list against the server's schema, loc -> field, PATCH building, diff, rollback. */
describe('agent editor fields', () => {
  it('knows every configuration field the server accepts, and nothing else', () => {
    expect([...CONFIG_FIELDS].sort()).toEqual([...AGENT_CONFIG_FIELDS].sort());
  });

  it('every field the form edits is a path the PATCH body accepts', () => {
    for (const f of ALL_FIELDS) {
      const top = f.path[0]!;
      expect(CONFIG_FIELDS, f.path.join('.')).toContain(top);
      if (f.path.length === 2) expect(PatchAgentBody.shape[top as keyof typeof PatchAgentBody.shape], top).toBeDefined();
    }
  });

  it('places a 422 issue on the field its loc names, the deepest one that matches', () => {
    expect(fieldForLoc(['body', 'name'])?.field.path).toEqual(['name']);
    expect(fieldForLoc(['body', 'agno_settings', 'num_history_runs'])?.field.path).toEqual(['agno_settings', 'num_history_runs']);
    const inList = fieldForLoc(['body', 'tools', 1, 'custom_function_id']);
    expect(inList?.field.path).toEqual(['tools']);
    expect(inList?.rest).toEqual(['1', 'custom_function_id']);
    expect(fieldForLoc(['body', 'llm_credentials', 'value'])?.field.path).toEqual(['llm_credentials']);
    expect(fieldForLoc(['body'])).toBeNull();
    expect(fieldForLoc(['body', 'oas'])).toBeNull();
  });

  it('a PATCH carries only what changed, nested paths as nested objects', () => {
    const initial = { name: 'A', instructions: { role: ['x'], goal: [], general: '' }, agno_settings: { num_history_runs: 10 }, output_schema: null };
    const body = buildBody(
      [
        ['name', 'A'],
        ['instructions.role', ['x', 'y']],
        ['instructions.general', ''],
        ['agno_settings.num_history_runs', 10],
        ['output_schema', { type: 'object' }],
        ['llm_credentials', undefined],
      ],
      initial,
    );
    expect(body).toEqual({ instructions: { role: ['x', 'y'] }, output_schema: { type: 'object' } });
    expect(PatchAgentBody.safeParse(body).success).toBe(true);
  });

  it('the diff lists changed configuration fields only, key order aside', () => {
    const a = { name: 'A', instructions: { role: ['r'], goal: [] }, version: 2, graph: [1] };
    const b = { name: 'A', instructions: { goal: [], role: ['r', 's'] }, version: 3, graph: [2] };
    expect(configDiff(a, b)).toEqual([{ field: 'instructions.role', before: ['r'], after: ['r', 's'] }]);
    expect(configDiff({ name: 'A', icon: null }, { name: 'B', icon: null })).toEqual([{ field: 'name', before: 'A', after: 'B' }]);
  });

  it('a rollback body is a valid PATCH made of the version configuration', () => {
    const version = CreateAgentBody.parse({ name: 'Old', model_provider: 'openai', instructions: { general: 'be old' } }) as Record<string, unknown>;
    const body = rollbackBody({ ...version, id: 'x', version: 2, webhook_url: 'http://x', graph: [], created_by: 'me', llm_credentials: { name: 'k', description: null, value: '********' } });
    expect(body).not.toHaveProperty('llm_credentials');
    expect(body).not.toHaveProperty('llm_extra_headers');
    expect(body.name).toBe('Old');
    expect(body).not.toHaveProperty('id');
    expect(body).not.toHaveProperty('created_by');
    expect(PatchAgentBody.safeParse(body).error?.issues ?? []).toEqual([]);
  });

  it('tool rows become the API tool entries', () => {
    expect(toolEntry('custom_function', ' cf1 ')).toEqual({ type: 'custom_function', custom_function_id: 'cf1' });
    expect(toolEntry('mcp', 'https://mcp.example/mcp')).toEqual({ type: 'mcp', url: 'https://mcp.example/mcp' });
    expect(toolEntry('mcp', 'reg1')).toEqual({ type: 'mcp', mcp_id: 'reg1' });
    expect(toolEntry('action', 'conn', 'a, b')).toEqual({ type: 'action', connection_id: 'conn', operation_ids: ['a', 'b'] });
  });
});
