import type { AgentsService } from '../agents/agents.service.js';
import type { AuthService } from '../auth/auth.service.js';
import type { RateLimits } from '../auth/rate-limiter.js';
import type { Db } from '../db/database.js';
import type { FilesService } from '../files/files.service.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { PublicUrls } from '../lib/urls.js';
import type { TaskParts } from '../tasks/tasks.module.js';
import { WebhookChannelsRepository } from './webhook-channels.repository.js';
import { WebhookChannelsService } from './webhook-channels.service.js';
import { WebhookReceiver } from './webhook-receiver.service.js';

export interface WebhooksModule {
  webhookChannels: WebhookChannelsService;
  webhooks: WebhookReceiver;
}

/** Webhooks (issue 4): per-agent channels and the public receiver that turns calls into tasks. */
export function createWebhooksModule(d: {
  db: Db;
  /** Answers the narrow WebhookAgentDirectory port (find: status, developer access). */
  agents: AgentsService;
  auth: AuthService;
  files: FilesService;
  /** Calls become tasks through submissions (the TaskSubmitter port). */
  tasks: Pick<TaskParts, 'submissions'>;
  rateLimits: RateLimits;
  urls: PublicUrls;
  clock: Clock;
  log: Logger;
  syncTimeoutMs: number;
}): WebhooksModule {
  const webhookChannels = new WebhookChannelsService(new WebhookChannelsRepository(d.db), d.agents, d.urls, d.clock);
  const webhooks = new WebhookReceiver(webhookChannels, d.agents, d.auth, d.files, d.tasks.submissions, d.syncTimeoutMs, d.log, d.rateLimits);
  return { webhookChannels, webhooks };
}
