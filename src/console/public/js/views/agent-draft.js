import { api, path, query } from '../api.js';
import { announce, confirmAction, h, replaceChildren } from '../dom.js';
import { errorAlert, loading } from '../components.js';
import { prettyJson } from '../format.js';
import { configDiff, rollbackBody } from './agent-fields.js';

/**
 * The agent page's "Draft and deployment" panel: the draft's changes against the deployed version, field by field,
 * with Deploy; and Roll back, which publishes an older version's configuration as a new version (the API keeps
 * versions immutable, so a rollback is a deployment of old content, and history shows it).
 */
export function draftPanel(ctx, agent) {
  const body = h('div', {}, loading('Loading the deployed version…'));
  const section = h('section', { class: 'panel', 'aria-labelledby': 'draft-title', id: 'draft-panel' }, h('h2', { id: 'draft-title' }, 'Draft and deployment'), body);
  const refresh = () => ctx.navigate(location.hash.replace(/\?.*$/, ''), { replace: true });

  async function load() {
    const versions = await api('GET', `${path`/v1/agents/${agent.id}/versions`}${query({ per_page: 50 })}`, { signal: ctx.signal });
    const current = versions.items.find((v) => v.is_latest) ?? versions.items[0];
    const deployed = current ? await api('GET', path`/v1/agents/${agent.id}/versions/${current.version}`, { signal: ctx.signal }) : null;
    replaceChildren(body, draftPart(deployed, current), rollbackPart(versions.items, current));
  }

  function draftPart(deployed, current) {
    if (!agent.has_pending_changes || !deployed) {
      return h('p', { class: 'muted' }, `No draft: version ${current?.version ?? agent.version} is deployed and is what runs. Edits made with “Edit” are staged here before they run.`);
    }
    const changes = configDiff(deployed, agent);
    const deploy = h(
      'button',
      {
        type: 'button',
        class: 'button primary',
        onclick: async () => {
          deploy.disabled = true;
          try {
            const v = await api('PUT', path`/v1/agents/${agent.id}`, { signal: ctx.signal });
            announce(`Deployed version ${v.version}`);
            refresh();
          } catch (e) {
            deploy.disabled = false;
            deploy.after(errorAlert(e));
          }
        },
      },
      'Deploy draft',
    );
    return h(
      'div',
      { class: 'draft' },
      h('p', {}, h('span', { class: 'badge pending-changes' }, 'Draft pending'), ` Changes against the deployed version ${current.version}:`),
      changes.length
        ? h(
            'div',
            { class: 'table-scroll' },
            h(
              'table',
              { class: 'data diff' },
              h('caption', { class: 'sr-only' }, `Draft changes against version ${current.version}`),
              h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Field'), h('th', { scope: 'col' }, `Deployed (v${current.version})`), h('th', { scope: 'col' }, 'Draft'))),
              h(
                'tbody',
                {},
                changes.map((c) =>
                  h('tr', { dataset: { key: c.field } }, h('th', { scope: 'row', class: 'mono' }, c.field), h('td', {}, diffValue(c.before, 'before')), h('td', {}, diffValue(c.after, 'after'))),
                ),
              ),
            ),
          )
        : h('p', { class: 'muted' }, 'The draft has no visible change (a secret such as an API key may have been replaced: secrets never show).'),
      h('div', { class: 'actions' }, deploy),
    );
  }

  function rollbackPart(versions, current) {
    const older = versions.filter((v) => v.version !== current?.version);
    if (!older.length) return h('p', { class: 'muted' }, 'Roll back becomes possible once there is more than one version.');
    const select = h('select', { id: 'rollback-version' }, older.map((v) => h('option', { value: String(v.version) }, `Version ${v.version} · ${v.name} · ${v.created_at?.slice(0, 16).replace('T', ' ') ?? ''}`)));
    const status = h('div', {});
    const button = h(
      'button',
      {
        type: 'button',
        class: 'button danger-outline',
        onclick: async () => {
          const version = Number(select.value);
          const ok = await confirmAction({
            title: `Roll back to version ${version}?`,
            text: `Version ${version}'s configuration is deployed as a new version and runs from now on.${agent.has_pending_changes ? ' The pending draft is replaced.' : ''} Stored secrets (API keys) stay as they are now.`,
            confirmLabel: 'Roll back',
          });
          if (!ok) return;
          button.disabled = true;
          try {
            const old = await api('GET', path`/v1/agents/${agent.id}/versions/${version}`, { signal: ctx.signal });
            const v = await api('PATCH', `${path`/v1/agents/${agent.id}`}${query({ deploy: true })}`, { body: rollbackBody(old), signal: ctx.signal });
            announce(`Rolled back: version ${v.version} has version ${version}'s configuration`);
            refresh();
          } catch (e) {
            button.disabled = false;
            replaceChildren(status, errorAlert(e));
          }
        },
      },
      'Roll back',
    );
    return h(
      'div',
      { class: 'rollback' },
      h('h3', {}, 'Roll back'),
      h('div', { class: 'actions' }, h('label', { for: 'rollback-version' }, 'Version'), select, button),
      status,
    );
  }

  return {
    section,
    load: () =>
      load().catch((e) => {
        if (!ctx.signal.aborted) replaceChildren(body, errorAlert(e));
      }),
  };
}

function diffValue(v, side) {
  if (v === null || v === undefined || v === '') return h('span', { class: 'muted' }, '—');
  const text = typeof v === 'string' ? v : prettyJson(v);
  return h('pre', { class: `prewrap text-block diff-${side}`, tabindex: '0' }, text);
}
