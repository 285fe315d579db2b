import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CollectionTools } from './collection-tools.js';
import { DocumentTools } from './document-tools.js';
import { SearchTools } from './search-tools.js';
import type { ToolDependencies } from './tool-kit.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** What an agent is told when it connects: the order in which the tools are meant to be used. */
const INSTRUCTIONS = `Catchment keeps collections of documents synced from external sources (folders, repositories, databases, websites, notes) searchable.
Start with list_collections to learn the readable ids. Use search (tier instant for quick lookups, classic for natural-language questions, agentic for hard multi-step questions); each result is one document with its best passage.
Use read_document for a document's whole text and browse for its parent, children or siblings. list_source_connections shows how fresh the data is; run_sync (admins) starts a sync; add_document writes a note through a push connection.
Tool errors say what to do next (an unknown collection, a missing role, or how long to wait when rate limited).`;

/** One MCP server per session, every tool registered, all running with the caller of each request. */
export function createMcpServer(deps: Omit<ToolDependencies, 'compiled'>): () => McpServer {
  const shared: ToolDependencies = { ...deps, compiled: new Map() };
  return () => {
    const server = new McpServer({ name: 'catchment', title: 'Catchment', version }, { instructions: INSTRUCTIONS, capabilities: { tools: { listChanged: false } } });
    new CollectionTools(shared, server).register();
    new SearchTools(shared, server).register();
    new DocumentTools(shared, server).register();
    return server;
  };
}
