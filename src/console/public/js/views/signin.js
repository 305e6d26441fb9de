import { api, ApiError, keyRefused, session } from '../api.js';
import { h } from '../dom.js';

/** Sign in with an API key: checked against the API before it is kept (in sessionStorage only). */
export async function renderSignIn(root, ctx) {
  ctx.setTitle('Sign in');
  const expired = ctx.params.get('expired') === '1';
  const next = ctx.params.get('next');
  const error = h('div', { id: 'signin-error', class: 'alert error', role: 'alert', hidden: !expired }, expired ? 'Your key was refused. Sign in again.' : '');
  const input = h('input', {
    id: 'api-key',
    name: 'api-key',
    type: 'password',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'api-key-hint signin-error',
  });
  const submit = h('button', { type: 'submit', class: 'button primary' }, 'Sign in');
  const form = h(
    'form',
    {
      class: 'panel signin',
      'aria-labelledby': 'signin-title',
      novalidate: true,
      onsubmit: async (event) => {
        event.preventDefault();
        const key = input.value.trim();
        if (!key) return fail('Enter an API key.');
        submit.disabled = true;
        submit.textContent = 'Signing in…';
        try {
          await api('GET', '/v1/agents?per_page=1', { key });
          session.signIn(key);
          // Only our own addresses are followed after sign-in.
          ctx.navigate(next && next.startsWith('#/') && !next.startsWith('#/signin') ? next : '#/agents');
        } catch (e) {
          fail(e instanceof ApiError && keyRefused(e.status, e.detail) ? 'This API key was not accepted.' : e.message);
        } finally {
          submit.disabled = false;
          submit.textContent = 'Sign in';
        }
      },
    },
    h('h1', { id: 'signin-title' }, 'Sign in to the Agentry console'),
    h('label', { for: 'api-key' }, 'API key'),
    input,
    h('p', { id: 'api-key-hint', class: 'hint' }, 'An organization API key (for example from "agentry keys create"). It is kept in this browser tab only and sent as the x-api-key header.'),
    error,
    h('div', { class: 'actions' }, submit),
  );

  function fail(message) {
    error.textContent = message;
    error.hidden = false;
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  }

  root.append(form);
  return input;
}
