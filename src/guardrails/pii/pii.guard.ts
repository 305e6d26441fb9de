import { INLINE_SCAN, type GuardScan } from '../guard-scanner.js';
import { GuardrailRefusal, pieceLabel, type ContentPiece, type Guard, type GuardContext } from '../guardrail.types.js';
import { foundKinds } from './pii-found.js';
import { PiiVault } from './pii-vault.js';

/**
 * agno_settings.pii_detection_enabled. With pii_detection_mask true every detection is replaced by a typed
 * placeholder before the text reaches the model, and the placeholders the model writes are put back where the real
 * value is needed (tool-call arguments, the task's result). With pii_detection_mask false the first piece that
 * holds personal data refuses the task; the error names the kinds found and where, never the values.
 */
export class PiiGuard implements Guard {
  readonly name = 'pii' as const;
  private readonly vault: PiiVault;

  /** `scan`: where the detectors run (guard-scanner.ts: a large text on a worker thread). */
  constructor(
    private readonly mask: boolean,
    defaultRegion: string,
    private readonly scan: GuardScan = INLINE_SCAN,
  ) {
    this.vault = new PiiVault({ defaultRegion });
  }

  async screen(text: string, piece: ContentPiece, ctx: GuardContext): Promise<string> {
    const scanned = this.scan.pii(text, this.vault.opts, piece, ctx.signal);
    // A short text's answer is at hand (guard-scanner.ts): no turn of the microtask queue for it.
    const found = scanned instanceof Promise ? await scanned : scanned;
    if (!this.mask) {
      if (found.which.length === 0) return text;
      const kinds = foundKinds(found);
      await ctx.report({ guard: 'pii', action: 'refused', origin: piece.origin, name: piece.name, kinds });
      throw new GuardrailRefusal(
        'pii',
        `Personal data (${kinds.join(', ')}) was found in ${pieceLabel(piece)} and the agent's agno_settings.pii_detection_mask is false, ` +
          'so the task was refused before anything reached the LLM. Remove the personal data, or set pii_detection_mask to true to mask it.',
      );
    }
    const masked = this.vault.maskFound(text, found);
    if (masked.text !== text) await ctx.report({ guard: 'pii', action: 'masked', origin: piece.origin, name: piece.name, kinds: masked.kinds });
    return masked.text;
  }

  restore(text: string): string {
    return this.vault.restore(text);
  }

  restoreDeep(value: unknown): unknown {
    return this.vault.restoreDeep(value);
  }
}
