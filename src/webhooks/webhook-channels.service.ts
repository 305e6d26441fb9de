import { AppError } from '../errors.js';
import { canSeeAgent } from '../auth/agent-access.js';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../lib/clock.js';
import { randomToken, UUID_RE } from '../lib/ids.js';
import { setBounded } from '../lib/bounded-map.js';
import { REDACTED, sha256Hex } from '../lib/secret-box.js';
import type { PublicUrls } from '../lib/urls.js';
import type { WebhookAgentDirectory } from './webhook-agents.js';
import type { WebhookChannelsRepository } from './webhook-channels.repository.js';

/** `GET|POST|DELETE /v1/agents/{id}/webhook` (docs/contract.md#webhook-channel). */
export interface WebhookSettings {
  enabled: boolean;
  /**
   * The public URL. Only its hash is stored, so the full URL appears once, in the answer that created it
   * (enable from disabled, regenerate); afterwards the secret part shows as "********".
   */
  url: string | null;
  /** The key-form address, equal to the agent's `webhook_url`. */
  key_url: string;
}

/** 256 random bits (the contract asks for at least 192). */
const SECRET_BYTES = 32;
const SECRET_RE = /^[A-Za-z0-9_-]{43}$/;

/** Spec 7.2: a temporary failure resolving a public URL; the caller retries. */
export function publicLookupUnavailable(cause: unknown): AppError {
  return new AppError('unavailable', 'Public webhook lookup temporarily unavailable', { retryAfter: 5, cause });
}

export function keyFormUrl(webhookBase: string, agentId: string): string {
  return `${webhookBase}/?agent_id=${agentId}&asynchronous=false`;
}

/** Secrets whose hash is remembered: a busy public URL is hashed once, not on every call. */
const HASH_MEMO_MAX = 1000;

export class WebhookChannelsService {
  /**
   * secret -> its SHA-256, for the lookup (the hash is what is stored). SHA-256 through node:crypto costs ~6 us per
   * call on Node 20, about 5% of an accepted webhook call. Keeps the secrets the process was sent, as every
   * request does while it runs; bounded, so unknown secrets sprayed at the receiver only evict.
   */
  private readonly hashes = new Map<string, string>();
  constructor(
    private readonly repo: WebhookChannelsRepository,
    private readonly agents: WebhookAgentDirectory,
    private readonly urls: PublicUrls,
    private readonly clock: Clock,
  ) {}

  async get(organizationId: string, agentId: string, viewer?: Principal): Promise<WebhookSettings> {
    await this.requireAgent(organizationId, agentId, viewer);
    const channel = await this.repo.find(organizationId, agentId);
    return this.settings(agentId, channel ? this.maskedUrl() : null);
  }

  /** Idempotent: an enabled channel keeps its secret (and its URL keeps working). */
  async enable(organizationId: string, agentId: string, viewer?: Principal): Promise<WebhookSettings> {
    await this.requireAgent(organizationId, agentId, viewer);
    const secret = randomToken(SECRET_BYTES);
    const created = await this.repo.insertIfAbsent(organizationId, agentId, sha256Hex(secret), this.clock.now());
    return this.settings(agentId, created ? this.publicUrl(secret) : this.maskedUrl());
  }

  /** A new secret; the old URL fails from the moment this returns. Enables the channel when it was disabled. */
  async regenerate(organizationId: string, agentId: string, viewer?: Principal): Promise<WebhookSettings> {
    await this.requireAgent(organizationId, agentId, viewer);
    const secret = randomToken(SECRET_BYTES);
    await this.repo.upsertSecret(organizationId, agentId, sha256Hex(secret), this.clock.now());
    return this.settings(agentId, this.publicUrl(secret));
  }

  async disable(organizationId: string, agentId: string, viewer?: Principal): Promise<WebhookSettings> {
    await this.requireAgent(organizationId, agentId, viewer);
    await this.repo.delete(organizationId, agentId);
    return this.settings(agentId, null);
  }

  /**
   * The agent a public URL's secret is bound to, or undefined for an unknown, regenerated or revoked secret.
   * A failing lookup is a 503 the caller retries, never a 401 that would make it give up.
   */
  async resolveSecret(secret: string): Promise<{ organizationId: string; agentId: string } | undefined> {
    if (!SECRET_RE.test(secret)) return undefined;
    let channel;
    try {
      channel = await this.repo.findBySecretHash(this.hashOf(secret));
    } catch (e) {
      throw publicLookupUnavailable(e);
    }
    return channel && { organizationId: channel.organizationId, agentId: channel.agentId };
  }

  /** `resolveSecret` answered from memory, when it can be; undefined means "ask resolveSecret". */
  resolveSecretCached(secret: string): { organizationId: string; agentId: string } | undefined {
    const hash = this.hashes.get(secret);
    return hash === undefined ? undefined : this.repo.cachedBySecretHash(hash);
  }

  private hashOf(secret: string): string {
    let hash = this.hashes.get(secret);
    if (hash === undefined) {
      hash = sha256Hex(secret);
      setBounded(this.hashes, secret, hash, HASH_MEMO_MAX);
    }
    return hash;
  }

  /** With a viewer (the API's caller), another's personal agent is as missing as an unknown one. */
  private async requireAgent(organizationId: string, agentId: string, viewer?: Principal): Promise<void> {
    const agent = UUID_RE.test(agentId) ? await this.agents.find(organizationId, agentId) : undefined;
    if (!agent || (viewer && !canSeeAgent(viewer, agent.access))) throw AppError.notFound('Agent');
  }

  private settings(agentId: string, url: string | null): WebhookSettings {
    return { enabled: url !== null, url, key_url: keyFormUrl(this.urls.webhook, agentId) };
  }

  private publicUrl(secret: string): string {
    return `${this.urls.webhook}/wh_${secret}`;
  }

  private maskedUrl(): string {
    return `${this.urls.webhook}/wh_${REDACTED}`;
  }
}
