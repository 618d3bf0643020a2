package main

import "github.com/askuser-go/askuser/examples/internal/replay"

// apiErrors are the API's errors, in its format, for the replay.
var apiErrors = replay.Errors{
	NotFound:     `{"type":"error","error":{"type":"not_found_error","message":"not part of the recorded exchange"}}`,
	ExchangeOver: `{"type":"error","error":{"type":"invalid_request_error","message":"the recorded exchange is over"}}`,
}
