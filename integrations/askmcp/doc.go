// Package askmcp bridges askuser and the Model Context Protocol, with the MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk), both ways.
//
// As a host that is an MCP client, [ElicitationHandler] asks every form elicitation of
// every MCP server as askuser questions on the person's devices (browser panels,
// terminals): the first answer wins and becomes the elicitation's result.
//
//	client := mcp.NewClient(impl, &mcp.ClientOptions{
//		ElicitationHandler: askmcp.ElicitationHandler(d, session, nil),
//	})
//
// As an MCP server, [AddTool] serves the ask_user_questions tool: a call is asked
// through an askuser dispatcher on the person's devices and, by elicitation, of the
// calling client, the first answer winning; on protocol 2026-07-28 the client is asked
// with input requests, statelessly.
//
//	askmcp.AddTool(server, d, nil)
//
// docs/MCP.md has the mapping between forms and questions, the ids
// used, and what each protocol version does.
package askmcp
