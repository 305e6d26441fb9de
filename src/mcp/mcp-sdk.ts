import { loadOnce } from '../lib/load-once.js';

/**
 * The MCP SDK, loaded by the first MCP use (a connection to a server, an OAuth step, a call to our own MCP endpoint)
 * rather than at start: it is ~10 MB resident on top of the rest, most deployments start without using it, and idle
 * memory is a measured target (docs/benchmarks.md). Each part loads once; concurrent first uses share the load.
 */

async function loadClient() {
  const [index, sse, streamable, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Client: index.Client,
    SSEClientTransport: sse.SSEClientTransport,
    StreamableHTTPClientTransport: streamable.StreamableHTTPClientTransport,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
  };
}

async function loadAuth() {
  const [auth, utils, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/auth.js'),
    import('@modelcontextprotocol/sdk/shared/auth-utils.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    discoverOAuthServerInfo: auth.discoverOAuthServerInfo,
    exchangeAuthorization: auth.exchangeAuthorization,
    extractWWWAuthenticateParams: auth.extractWWWAuthenticateParams,
    refreshAuthorization: auth.refreshAuthorization,
    startAuthorization: auth.startAuthorization,
    checkResourceAllowed: utils.checkResourceAllowed,
    LATEST_PROTOCOL_VERSION: types.LATEST_PROTOCOL_VERSION,
  };
}

export type McpClientSdk = Awaited<ReturnType<typeof loadClient>>;
export type McpAuthSdk = Awaited<ReturnType<typeof loadAuth>>;

const client = loadOnce(loadClient);
const auth = loadOnce(loadAuth);

/** The client side: Client, its two transports, and the SDK's error class. */
export function mcpClientSdk(): Promise<McpClientSdk> {
  return client.get();
}

/** The client side if it has been loaded: an error of the SDK's can only exist once it has. */
export function mcpClientSdkIfLoaded(): McpClientSdk | undefined {
  return client.loaded();
}

/** The OAuth functions of the MCP authorization spec. */
export function mcpAuthSdk(): Promise<McpAuthSdk> {
  return auth.get();
}
