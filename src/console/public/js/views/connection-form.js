import { api, path } from '../api.js';
import { h } from '../dom.js';
import { apiForm, field, input, jsonValue, select, textarea } from './workspace-ui.js';

/**
 * A connection: base URL and credentials. Credentials are write-only: typed into password fields, sent once,
 * stored sealed; the API shows them back as "********" and this form never pre-fills them.
 */
const KINDS = [
  ['', 'None'],
  ['api_key', 'API key'],
  ['bearer', 'Bearer token'],
  ['basic', 'Basic (user and password)'],
  ['oauth2_client_credentials', 'OAuth2 client credentials'],
];

const secret = () => input({ type: 'password', autocomplete: 'new-password' });

export function connectionForm(ctx, connector, onCreated) {
  const name = input();
  const baseUrl = input({ type: 'url', placeholder: connector.server_url ?? 'https://api.example.com' });
  const kind = select(KINDS, '');
  const c = {
    keyIn: select([['header', 'Header'], ['query', 'Query parameter']], 'header'),
    keyName: input({ placeholder: 'X-API-Key' }),
    keyValue: secret(),
    token: secret(),
    username: input({ autocomplete: 'off' }),
    password: secret(),
    tokenUrl: input({ type: 'url' }),
    clientId: input(),
    clientSecret: secret(),
    scopes: input({ placeholder: 'read write' }),
  };
  const groups = {
    api_key: h('div', { class: 'ws-row' }, field({ id: 'cn-key-in', label: 'Sent in', control: c.keyIn, name: 'security.in' }), field({ id: 'cn-key-name', label: 'Parameter name', control: c.keyName, name: 'security.name' }), field({ id: 'cn-key-value', label: 'API key', control: c.keyValue, name: 'security.value' })),
    bearer: field({ id: 'cn-token', label: 'Token', control: c.token, name: 'security.token' }),
    basic: h('div', { class: 'ws-row' }, field({ id: 'cn-user', label: 'User name', control: c.username, name: 'security.username' }), field({ id: 'cn-password', label: 'Password', control: c.password, name: 'security.password' })),
    oauth2_client_credentials: h(
      'div',
      { class: 'ws-row' },
      field({ id: 'cn-token-url', label: 'Token URL', control: c.tokenUrl, name: 'security.token_url' }),
      field({ id: 'cn-client-id', label: 'Client id', control: c.clientId, name: 'security.client_id' }),
      field({ id: 'cn-client-secret', label: 'Client secret', control: c.clientSecret, name: 'security.client_secret' }),
      field({ id: 'cn-scopes', label: 'Scopes', control: c.scopes, name: 'security.scopes' }),
    ),
  };
  const show = () => {
    for (const [k, g] of Object.entries(groups)) g.hidden = kind.value !== k;
  };
  kind.addEventListener('change', show);
  show();
  const headers = textarea({ rows: 3, placeholder: '{"X-Tenant": "acme"}' });

  function security() {
    switch (kind.value) {
      case 'api_key':
        return { type: 'api_key', in: c.keyIn.value, name: c.keyName.value, value: c.keyValue.value };
      case 'bearer':
        return { type: 'bearer', token: c.token.value };
      case 'basic':
        return { type: 'basic', username: c.username.value, password: c.password.value };
      case 'oauth2_client_credentials':
        return { type: 'oauth2_client_credentials', token_url: c.tokenUrl.value, client_id: c.clientId.value, client_secret: c.clientSecret.value, scopes: c.scopes.value };
      default:
        return null;
    }
  }

  return apiForm({
    label: 'New connection',
    submitLabel: 'Create connection',
    fields: [
      h('div', { class: 'ws-row' }, field({ id: 'cn-name', label: 'Name', control: name, name: 'name' }), field({ id: 'cn-base', label: 'Base URL', control: baseUrl, name: 'base_url', hint: 'Empty: the document’s server.' })),
      field({ id: 'cn-kind', label: 'Credentials', control: kind, name: 'security' }),
      Object.values(groups),
      field({ id: 'cn-headers', label: 'Extra headers (JSON, optional)', control: headers, name: 'headers' }),
    ],
    send: () =>
      api('POST', path`/v1/connectors/${connector.id}/connect`, {
        body: { name: name.value, base_url: baseUrl.value || null, security: security(), headers: jsonValue(headers, 'headers', null) },
        signal: ctx.signal,
      }),
    onDone: async (_created, form) => {
      // The secrets leave the page as soon as they are stored.
      form.reset();
      show();
      await onCreated();
    },
  });
}
