import { core0001 } from './0001_core.js';
import { agents0002 } from './0002_agents.js';
import { connectors0003 } from './0003_connectors.js';
import { toolKinds0006 } from './0006_tool_kinds.js';
import { filesWebhooks0005 } from './0005_files_webhooks.js';
import { tasks0004 } from './0004_tasks.js';
import { knowledge0007 } from './0007_knowledge.js';
import { mcpUserTokens0008 } from './0008_mcp_user_tokens.js';
import { partialTaskIndexes0009 } from './0009_partial_task_indexes.js';
import { taskInbox0010 } from './0010_task_inbox.js';
import { configNotify0011 } from './0011_config_notify.js';
import { sealLlmExtraHeaders0012 } from './0012_seal_llm_extra_headers.js';
import { schedules0014 } from './0014_schedules.js';
import { memories0019 } from './0019_memories.js';
import { notifications0013 } from './0013_notifications.js';
import { access0015 } from './0015_access.js';
import { callDepth0023 } from './0023_call_depth.js';
import { workflows0024 } from './0024_workflows.js';
import { mcpOauthRefresh0025 } from './0025_mcp_oauth_refresh.js';
import { pendingQueueIndex0026 } from './0026_pending_queue_index.js';
import { fileLifetime0027 } from './0027_file_lifetime.js';
import { binaryEmbeddings0028 } from './0028_binary_embeddings.js';
import { fileDocuments0029 } from './0029_file_documents.js';
import { fairQueue0030 } from './0030_fair_queue.js';
import type { MigrationDef } from './migration.js';

export type { MigrationContext, MigrationDef } from './migration.js';

export const migrations: MigrationDef[] = [core0001, agents0002, connectors0003, tasks0004, filesWebhooks0005, toolKinds0006, knowledge0007, mcpUserTokens0008, partialTaskIndexes0009, taskInbox0010, configNotify0011, sealLlmExtraHeaders0012, notifications0013, schedules0014, access0015, memories0019, callDepth0023, workflows0024, mcpOauthRefresh0025, pendingQueueIndex0026, fileLifetime0027, binaryEmbeddings0028, fileDocuments0029, fairQueue0030];
