package main

import "github.com/askuser-go/askuser/examples/internal/replay"

// apiErrors are the API's errors, in its format, for the replay.
var apiErrors = replay.Errors{
	NotFound:     `{"error":{"message":"not part of the recorded exchange","type":"invalid_request_error","param":null,"code":null}}`,
	ExchangeOver: `{"error":{"message":"the recorded exchange is over","type":"invalid_request_error","param":null,"code":null}}`,
}
