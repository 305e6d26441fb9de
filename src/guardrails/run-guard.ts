import type { ContentPiece, Guard, GuardContext } from './guardrail.types.js';
import { MAX_PLACEHOLDER_LENGTH } from './pii/pii-vault.js';

/**
 * The guards of one run, as the runtime uses them: `screen` every piece of text before it goes to the model,
 * `screenInput` the caller's input once, `restore` what the model writes before it leaves the run. An agent
 * without guardrails gets NO_GUARD, whose every method gives its argument back.
 */
export class RunGuard {
  private readonly screeners: Guard[];
  private readonly restorers: Guard[];

  constructor(
    private readonly guards: Guard[],
    private readonly ctx: GuardContext,
  ) {
    this.screeners = guards.filter((g) => g.screen);
    this.restorers = guards.filter((g) => g.restore);
  }

  get active(): boolean {
    return this.guards.length > 0;
  }

  /** The text to send instead of `text`; throws GuardrailRefusal when the task must not go on. */
  async screen(text: string, piece: ContentPiece): Promise<string> {
    let out = text;
    for (const g of this.screeners) {
      if (!out) break;
      out = await g.screen!(out, piece, this.ctx);
    }
    return out;
  }

  /** The caller's whole input, already screened piece by piece; throws GuardrailRefusal. */
  async screenInput(texts: string[]): Promise<void> {
    for (const g of this.guards) if (g.screenInput) await g.screenInput(texts, this.ctx);
  }

  restore(text: string): string {
    let out = text;
    for (const g of this.restorers) out = g.restore!(out);
    return out;
  }

  restoreDeep<T>(value: T): T {
    let out: unknown = value;
    for (const g of this.restorers) out = g.restoreDeep ? g.restoreDeep(out) : out;
    return out as T;
  }

  /** For a streamed answer: restores each delta, holding back a tail that may be the start of a placeholder. */
  streamRestorer(): { push(delta: string): string; end(): string } | null {
    if (this.restorers.length === 0) return null;
    let held = '';
    return {
      push: (delta) => {
        const text = held + delta;
        const open = text.lastIndexOf('<');
        const cut = open >= 0 && text.indexOf('>', open) < 0 && text.length - open < MAX_PLACEHOLDER_LENGTH ? open : text.length;
        held = text.slice(cut);
        return this.restore(text.slice(0, cut));
      },
      end: () => {
        const rest = this.restore(held);
        held = '';
        return rest;
      },
    };
  }
}

export const NO_GUARD = new RunGuard([], { signal: new AbortController().signal, report: async () => {} });
