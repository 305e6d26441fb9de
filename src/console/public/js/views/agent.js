import { api, path, query } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { dataTable, errorAlert, facts, jsonBlock, jsonDetails, lazyDetails, liveUpdate, loading, pager, poll, statusBadge, timeEl } from '../components.js';
import { renderWebhookChannel } from './webhook-channel.js';
import { taskTable, taskTableState } from './task-table.js';
import { schedulesPanel } from './schedules-panel.js';
import { renderMemories } from './memories.js';
import { draftPanel } from './agent-draft.js';
import { kbLinks } from './kb-links.js';
import { activityPanel } from './activity-chart.js';

const TASKS_POLL_MS = 3000;

/** One agent: configuration, webhook channel, published versions and its latest tasks (kept fresh). */
export async function renderAgent(root, ctx, agentId) {
  ctx.setTitle('Agent');
  root.append(loading('Loading agent…'));
  const agent = await api('GET', path`/v1/agents/${agentId}`, { signal: ctx.signal });
  ctx.setTitle(agent.name);

  const webhook = h('section', { class: 'panel', 'aria-labelledby': 'webhook-title' }, h('h2', { id: 'webhook-title' }, 'Webhook'));
  const versions = h('section', { class: 'panel', 'aria-labelledby': 'versions-title' }, h('h2', { id: 'versions-title' }, 'Versions'));
  const memories = h('section', { class: 'panel', 'aria-labelledby': 'memories-title' }, h('h2', { id: 'memories-title' }, 'Memories'));
  const tasksBody = h('div', {}, loading('Loading tasks…'));
  const tasks = h(
    'section',
    { class: 'panel', 'aria-labelledby': 'agent-tasks-title' },
    h(
      'div',
      { class: 'section-head' },
      h('h2', { id: 'agent-tasks-title' }, 'Latest tasks'),
      h('a', { href: `#/tasks${query({ agent_id: agent.id })}` }, 'All tasks of this agent'),
    ),
    tasksBody,
  );

  const schedules = schedulesPanel(ctx, agent);
  const draft = draftPanel(ctx, agent);
  const activity = activityPanel(ctx, agent.id, { title: 'Activity' });
  replaceChildren(root, 
    h(
      'div',
      { class: 'page-head' },
      h('h1', {}, h('span', { class: 'icon', 'aria-hidden': 'true' }, agent.icon ?? ''), ' ', agent.name),
      h('div', { class: 'head-badges' }, statusBadge(agent.status), agent.has_pending_changes ? h('span', { class: 'badge pending-changes' }, 'Draft pending') : null),
      h(
        'div',
        { class: 'actions' },
        h('a', { href: `#${path`/agents/${agent.id}/playground`}`, class: 'button primary' }, 'Open playground'),
        h('a', { href: `#${path`/agents/${agent.id}/edit`}`, class: 'button secondary' }, 'Edit'),
      ),
    ),
    agent.description ? h('p', { class: 'lead' }, agent.description) : null,
    h('div', { class: 'grid-2' }, configuration(agent, ctx.signal), webhook),
    draft.section,
    tasks,
    activity.section,
    schedules.section,
    versions,
    memories,
  );

  await Promise.all([
    renderWebhookChannel(webhook, ctx, agent),
    renderVersions(versions, ctx, agent, 1),
    renderMemories(memories, ctx, agent),
    draft.load(),
    refreshTasks(),
    activity.refresh(),
    schedules.refresh().catch(() => {}),
  ]);
  poll(refreshTasks, TASKS_POLL_MS, ctx.signal);
  poll(schedules.refresh, TASKS_POLL_MS, ctx.signal);

  async function refreshTasks() {
    try {
      const page = await api('GET', `${path`/v1/agents/${agent.id}/tasks`}${query({ per_page: 10 })}`, { signal: ctx.signal });
      liveUpdate(tasksBody, taskTableState(page.items), () => taskTable(page.items, { caption: `Latest tasks of ${agent.name}`, showAgent: false, empty: 'No tasks yet.' }));
    } catch (e) {
      if (!ctx.signal.aborted) replaceChildren(tasksBody, errorAlert(e));
      throw e;
    }
  }
}

function configuration(agent, signal) {
  const instructions = agent.instructions ?? {};
  const list = (items) => (Array.isArray(items) && items.length ? h('ul', { class: 'plain' }, items.map((x) => h('li', {}, String(x)))) : null);
  const tools = Array.isArray(agent.graph) ? agent.graph : [];
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': 'config-title' },
    h('h2', { id: 'config-title' }, 'Configuration'),
    facts([
      ['Id', h('span', { class: 'mono' }, agent.id)],
      ['Unique name', agent.unique_name],
      ['Version', String(agent.version ?? '—')],
      ['Type', agent.type],
      ['Model', [agent.model_provider, agent.model_name].filter(Boolean).join(' / ')],
      ['Output format', agent.output_format],
      ['Access scope', agent.access_scope],
      ['Developer access', yesNo(agent.developer_access)],
      ['Supervised', yesNo(agent.is_supervised)],
      ['Stage before publish', yesNo(agent.should_stage_before_publish)],
      ['Created', timeEl(agent.created_at)],
      ['Role', list(instructions.role)],
      ['Goal', list(instructions.goal)],
      ['General instructions', instructions.general ? h('p', { class: 'prewrap' }, instructions.general) : null],
      ['Expected output', agent.expected_output ? h('p', { class: 'prewrap' }, agent.expected_output) : null],
      [
        'Tools',
        tools.length
          ? h(
              'ul',
              { class: 'plain' },
              tools.map((g) => h('li', {}, h('span', { class: 'badge' }, g.sub_type ? `${g.type}/${g.sub_type}` : g.type), ' ', g.name || g.item_id)),
            )
          : null,
      ],
      [
        'Knowledge bases',
        Array.isArray(agent.knowledge_bases) && agent.knowledge_bases.length
          ? kbLinks(agent.knowledge_bases, signal)
          : null,
      ],
    ]),
    jsonDetails('Full configuration (JSON)', agent),
  );
}

function yesNo(v) {
  return v === true ? 'Yes' : v === false ? 'No' : null;
}

async function renderVersions(section, ctx, agent, page) {
  const body = h('div', {}, loading('Loading versions…'));
  replaceChildren(section, section.firstChild, body);
  let data;
  try {
    data = await api('GET', `${path`/v1/agents/${agent.id}/versions`}${query({ page, per_page: 10 })}`, { signal: ctx.signal });
  } catch (e) {
    if (!ctx.signal.aborted) replaceChildren(body, errorAlert(e));
    return;
  }
  replaceChildren(body, 
    dataTable({
      caption: `Published versions of ${agent.name}`,
      empty: 'No published version.',
      columns: [
        { label: 'Version', cell: (v) => [String(v.version), v.is_latest ? h('span', { class: 'badge latest' }, 'current') : null] },
        { label: 'Name', cell: (v) => v.name },
        { label: 'Model', cell: (v) => [v.model_provider, v.model_name].filter(Boolean).join(' / ') || '—' },
        { label: 'Published', cell: (v) => timeEl(v.created_at) },
        { label: 'Configuration', cell: (v) => versionDetails(ctx, agent, v.version) },
      ],
      rows: data.items.map((v) => ({ key: String(v.version), value: v })),
    }),
    pager(data, (p) => renderVersions(section, ctx, agent, p), 'Versions pages'),
  );
}

/** A version's full configuration, fetched the first time its disclosure is opened. */
function versionDetails(ctx, agent, version) {
  return lazyDetails(`Show version ${version}`, async () =>
    jsonBlock(await api('GET', path`/v1/agents/${agent.id}/versions/${version}`, { signal: ctx.signal }), `Configuration of version ${version}`),
  );
}
