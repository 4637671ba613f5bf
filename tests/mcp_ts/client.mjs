// The TypeScript MCP SDK's client against the gateway: lists the tools, calls one,
// prints {"tools": [...], "call": {...}} as JSON. Usage:
//   node client.mjs <url> <token> <tool> '<arguments as JSON>'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, tool, args] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "ts-sdk-test", version: "1.0.0" });
await client.connect(transport);
const listed = await client.listTools();
const call = await client.callTool({ name: tool, arguments: JSON.parse(args || "{}") });
console.log(JSON.stringify({ tools: listed.tools.map((t) => t.name), call }));
await transport.terminateSession();
await client.close();
