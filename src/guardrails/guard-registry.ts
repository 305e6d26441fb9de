import type { RunnableAgentConfig } from '../agents/agent-config.js';
import type { OpenAIEndpoint } from '../llm/llm.service.js';
import type { GuardScanner } from './guard-scanner.js';
import type { GuardrailSettings } from './guardrail-settings.js';
import type { Guard, GuardName } from './guardrail.types.js';
import { InjectionGuard } from './injection/injection.guard.js';
import { ModerationGuard } from './moderation/moderation.guard.js';
import { PiiGuard } from './pii/pii.guard.js';

/**
 * The guards a run can have, in the order a piece of text passes through them: PII first, so neither the
 * injection heuristics' trace nor the moderation endpoint ever sees a masked value; then prompt injection; then
 * moderation (on the caller's input, once). Adding a guard is one entry here and one agno_settings field.
 */

export interface GuardDeps {
  /** AGENTRY_PII_DEFAULT_REGION: phone numbers written without a country code are read as this region's. */
  piiDefaultRegion: string;
  /** AGENTRY_MODERATION_MODEL. */
  moderationModel: string;
  /** The agent's OpenAI endpoint and key (LlmService.openaiEndpoint). */
  openaiEndpoint(agent: RunnableAgentConfig, signal: AbortSignal): Promise<OpenAIEndpoint | null>;
  /** Where the PII and injection detectors run: large texts on a worker thread, per organization. */
  scanner: Pick<GuardScanner, 'forOwner'>;
}

export interface GuardRun {
  agent: RunnableAgentConfig;
  signal: AbortSignal;
}

export interface GuardFactory {
  enabled(s: GuardrailSettings): boolean;
  create(s: GuardrailSettings, deps: GuardDeps, run: GuardRun): Guard;
}

export const GUARD_KINDS: Record<GuardName, GuardFactory> = {
  pii: {
    enabled: (s) => s.piiDetection,
    create: (s, deps, run) => new PiiGuard(s.piiMask, deps.piiDefaultRegion, deps.scanner.forOwner(run.agent.organization_id)),
  },
  prompt_injection: {
    enabled: (s) => s.injectionDetection,
    create: (s, deps, run) => new InjectionGuard(s.injectionContentAction, deps.scanner.forOwner(run.agent.organization_id)),
  },
  moderation: {
    enabled: (s) => s.moderation,
    create: (s, deps, run) => new ModerationGuard(() => deps.openaiEndpoint(run.agent, run.signal), deps.moderationModel, s.moderationCategories),
  },
};
