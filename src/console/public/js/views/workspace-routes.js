import { renderConnector, renderConnectors } from './connectors.js';
import { renderOperation } from './connector-operation.js';
import { renderKnowledgeBases } from './knowledge.js';
import { renderSecrets } from './secrets.js';
import { renderFunctions } from './functions.js';
import { renderFunction } from './function.js';
import { renderMcpServer, renderMcpServers } from './mcp-servers.js';
import { renderSkills } from './skills.js';
import { renderSchedules } from './schedules.js';
import { renderKnowledgeBase } from './knowledge-base.js';

/**
 * The workspace pages' routes, kept here so main.js only spreads them into its table. `nav` names the header link
 * that is marked current.
 */
export const workspaceRoutes = [
  { pattern: /^\/connectors$/, view: renderConnectors, nav: 'connectors' },
  { pattern: /^\/connectors\/([^/]+)$/, view: renderConnector, nav: 'connectors' },
  { pattern: /^\/connectors\/([^/]+)\/operations\/([^/]+)$/, view: renderOperation, nav: 'connectors' },
  { pattern: /^\/knowledge$/, view: renderKnowledgeBases, nav: 'knowledge' },
  { pattern: /^\/knowledge\/([^/]+)$/, view: renderKnowledgeBase, nav: 'knowledge' },
  { pattern: /^\/secrets$/, view: renderSecrets, nav: 'secrets' },
  { pattern: /^\/functions$/, view: renderFunctions, nav: 'functions' },
  { pattern: /^\/functions\/([^/]+)$/, view: renderFunction, nav: 'functions' },
  { pattern: /^\/mcp$/, view: renderMcpServers, nav: 'mcp' },
  { pattern: /^\/mcp\/([^/]+)$/, view: renderMcpServer, nav: 'mcp' },
  { pattern: /^\/skills$/, view: renderSkills, nav: 'skills' },
  { pattern: /^\/schedules$/, view: renderSchedules, nav: 'schedules' },
];
