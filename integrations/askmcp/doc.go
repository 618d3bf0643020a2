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
// Tool calls are gated both ways too. A host's [Gate] puts the tools of a server it
// calls behind askuser's approvals: the host's rules first, then, for a server it marks
// as trusted, the tools' annotations (a read-only tool runs, any other is asked about),
// and for any other server every call asked about; the approval card says whose tool it
// is. A server's [Approved] has each call of its own tool approved on the person's
// devices, never by eliciting the calling client, which could approve itself.
//
//	d := askuser.New(hub, &askuser.Options{Policy: &askuser.Policy{Describe: gate.Describe}})
//	out := d.RunTools(ctx, calls, askmcp.Run(hostTools, gate))
//
// docs/MCP.md has the mapping between forms and questions, the ids
// used, what each protocol version does, and the gates.
package askmcp
