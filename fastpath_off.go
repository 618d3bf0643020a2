//go:build askuser_nofast

package askuser

// With the build tag askuser_nofast, the JSON fast paths are off: every argument and
// every device result goes the reference way, and the quick schema check does not stand
// in for the JSON Schema validator. The test command runs the root module's tests once
// this way. See fastpath.go.

const fastPaths = false

func parseArgumentsFast([]byte) (*Request, bool) { return nil, false }

func decodeResultDataFast([]byte) (ResultData, bool) { return ResultData{}, false }
