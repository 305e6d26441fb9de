import type { McpTables } from '../mcp/mcp.tables.js';
import type { SkillsTables } from '../skills/skills.tables.js';
import type { CustomFunctionsTables } from './custom-functions.tables.js';

/** Tables of the tool-kinds domain (migration 0006): custom functions, the MCP registry, organization skills. */
export interface ToolKindsTables extends CustomFunctionsTables, McpTables, SkillsTables {}
