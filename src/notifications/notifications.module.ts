import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { PublicUrls } from '../lib/urls.js';
import type { EgressPolicy, SafeFetch } from '../net/index.js';
import type { Channel } from './notification-outbox.js';
import { NotificationOutbox } from './notification-outbox.js';
import { NotificationDispatcher } from './notification.dispatcher.js';
import { NotificationsRepository } from './notifications.repository.js';
import { NotificationsService, type NotificationOwners } from './notifications.service.js';
import { SigningKeys } from './signing-keys.js';
import type { ChannelSender } from './channels/channel.js';
import { EmailChannel, type SecretLookup } from './channels/email.channel.js';
import { SlackChannel } from './channels/slack.channel.js';
import { WebhookChannel } from './channels/webhook.channel.js';

export interface NotificationsModule {
  /** Given to the task worker: plans the outbox rows committed with a task's final status. */
  outbox: NotificationOutbox;
  service: NotificationsService;
  /** Started by the worker role. */
  dispatcher: NotificationDispatcher;
}

/** Wires the notifications domain for the composition root (docs/notifications.md). */
export function createNotificationsModule(d: {
  db: Db;
  config: Config;
  clock: Clock;
  log: Logger;
  secretBox: SecretBox;
  urls: PublicUrls;
  egress: EgressPolicy;
  safeFetch: SafeFetch;
  secrets: SecretLookup;
  owners: () => NotificationOwners;
}): NotificationsModule {
  const n = d.config.notify;
  const repo = new NotificationsRepository(d.db);
  const keys = new SigningKeys(repo, d.secretBox, d.clock);
  const webhook = new WebhookChannel(d.safeFetch, keys, d.clock);
  // The channel registry: one sender per kind; a callback_url is a webhook target given by the call.
  const senders: Record<Channel, ChannelSender> = {
    webhook,
    callback: webhook,
    slack: new SlackChannel(d.safeFetch, d.secretBox, d.clock),
    email: new EmailChannel(d.egress, d.secrets, n.timeoutMs),
  };
  const dispatcher = new NotificationDispatcher(repo, senders, d.clock, d.log.child({ component: 'notifications' }), n, d.db.dialect === 'sqlite');
  const outbox = new NotificationOutbox(d.secretBox, d.urls, d.clock, n.giveUpMs);
  outbox.onCommitted = () => dispatcher.wake();
  // The owners (tasks, agents) are built later in the container; reached at call time.
  const service = new NotificationsService(repo, keys, { assertTask: (o, t) => d.owners().assertTask(o, t), agentExists: (o, a) => d.owners().agentExists(o, a) }, d.clock, n.giveUpMs);
  service.onResend = () => dispatcher.wake();
  return { outbox, service, dispatcher };
}
