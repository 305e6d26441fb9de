import { api, path } from '../api.js';
import { announce, confirmAction, h, replaceChildren } from '../dom.js';
import { copyField, errorAlert, loading } from '../components.js';

/**
 * The agent's webhook channel (docs/contract.md#webhook-channel): the key-form URL, and the public URL with enable,
 * regenerate and disable. Only the public URL's hash is stored, so its full address appears once, right after it is
 * created.
 */
export async function renderWebhookChannel(section, ctx, agent) {
  const heading = section.querySelector('h2');
  const body = h('div', { class: 'webhook-body' }, loading('Loading webhook settings…'));
  replaceChildren(section, heading, body);
  try {
    show(await api('GET', path`/v1/agents/${agent.id}/webhook`, { signal: ctx.signal }), false);
  } catch (e) {
    if (!ctx.signal.aborted) replaceChildren(body, errorAlert(e));
  }

  function show(settings, fresh, focusLabel) {
    const warnings = [];
    if (agent.developer_access === false) warnings.push('Developer access is off for this agent: both webhook forms are refused.');
    if (agent.status === 'INACTIVE') warnings.push('This agent is inactive: invocations are refused.');
    const revealed = fresh && settings.url && !settings.url.includes('********');
    const publicPart = settings.enabled
      ? [
          revealed
            ? copyField({
                id: 'webhook-public-url',
                label: 'Public URL',
                value: settings.url,
                hint: 'Copy it now: it is shown only this once. Anyone with this URL can run the agent.',
              })
            : h(
                'div',
                { class: 'copy-field' },
                h('label', { for: 'webhook-public-url' }, 'Public URL'),
                h('input', { id: 'webhook-public-url', type: 'text', readonly: true, value: settings.url ?? '', class: 'mono', 'aria-describedby': 'webhook-public-url-hint' }),
                h('p', { class: 'hint', id: 'webhook-public-url-hint' }, 'The secret part is shown only when the URL is created. Regenerate to get a new URL; the current one then stops working.'),
              ),
          h(
            'div',
            { class: 'actions' },
            button('Regenerate URL', 'secondary', async () => {
              const ok = await confirmAction({
                title: 'Regenerate the public URL?',
                text: 'The current public URL stops working at once. Callers must switch to the new one.',
                confirmLabel: 'Regenerate',
              });
              if (ok) await act('POST', '/webhook/regenerate', 'A new public URL was created; the old one no longer works.', 'Copy Public URL');
            }),
            button('Disable public URL', 'danger-outline', async () => {
              const ok = await confirmAction({ title: 'Disable the public URL?', text: 'Calls to the public URL will be refused. The key-based URL keeps working.', confirmLabel: 'Disable' });
              if (ok) await act('DELETE', '/webhook', 'The public URL was disabled.', 'Enable public URL');
            }),
          ),
        ]
      : [
          h('p', {}, h('strong', {}, 'Public URL: off. '), 'Enabling it creates a secret address that runs this agent without an API key.'),
          h('div', { class: 'actions' }, button('Enable public URL', 'primary', () => act('POST', '/webhook', 'The public URL was enabled.', 'Copy Public URL'))),
        ];
    replaceChildren(body, 
      ...warnings.map((w) => h('div', { class: 'alert warning' }, w)),
      copyField({
        id: 'webhook-key-url',
        label: 'Key-based URL',
        value: settings.key_url,
        hint: 'POST to it with the header x-api-key (synchronous by default; add asynchronous=true to return at once).',
      }),
      ...publicPart,
    );
    if (focusLabel) {
      const target = [...body.querySelectorAll('button')].find((b) => b.textContent === focusLabel || b.getAttribute('aria-label') === focusLabel);
      target?.focus();
    }
  }

  async function act(method, suffix, message, focusLabel) {
    for (const b of body.querySelectorAll('button')) b.disabled = true;
    try {
      const settings = await api(method, `${path`/v1/agents/${agent.id}`}${suffix}`, { signal: ctx.signal });
      show(settings, true, focusLabel);
      announce(message);
    } catch (e) {
      if (ctx.signal.aborted) return;
      for (const b of body.querySelectorAll('button')) b.disabled = false;
      body.prepend(errorAlert(e));
    }
  }
}

function button(label, variant, onclick) {
  return h('button', { type: 'button', class: `button ${variant}`, onclick }, label);
}
