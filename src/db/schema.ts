/**
 * The Kysely database type: the union of every domain's tables.
 * Each domain declares its tables in `<domain>.tables.ts`; add one `extends` here.
 */
import type { CoreTables } from '../orgs/orgs.tables.js';
import type { AgentTables } from '../agents/agents.tables.js';
import type { ConnectorsTables } from '../connectors/connectors.tables.js';
import type { ToolKindsTables } from '../custom-functions/tool-kinds.tables.js';
import type { FilesTables } from '../files/files.tables.js';
import type { WebhooksTables } from '../webhooks/webhooks.tables.js';
import type { TasksTables } from '../tasks/tasks.tables.js';
import type { KnowledgeTables } from '../knowledge/knowledge.tables.js';
import type { McpUserTokensTables } from '../mcp/mcp.tables.js';
import type { SchedulesTables } from '../schedules/schedules.tables.js';
import type { MemoryTables } from '../memory/memory.tables.js';
import type { NotificationsTables } from '../notifications/notifications.tables.js';
import type { AccessTables } from '../auth/access.tables.js';
import type { WorkflowsTables } from '../workflows/workflows.tables.js';

export interface Database extends CoreTables, AgentTables, ConnectorsTables, TasksTables, FilesTables, WebhooksTables, ToolKindsTables, KnowledgeTables, McpUserTokensTables, SchedulesTables, MemoryTables, NotificationsTables, AccessTables, WorkflowsTables {}
