// Package bench holds the benchmarks of askuser: the cost of one question end to end
// beside the MCP Go SDK's elicitation, the registry beside a bare mutex-map-and-channel
// hand-off, session cancel as the number of pending questions grows, memory per pending
// question, argument validation, and round trips over the WebSocket hub.
//
// It is in the test module, beside the end-to-end tests, so that the comparison
// dependencies never reach the library's go.mod. docs/BENCHMARKS.md at the repository
// root gives the commands and the figures.
package bench
