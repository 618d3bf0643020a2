module github.com/askuser-go/askuser/examples/web

go 1.26.0

replace github.com/askuser-go/askuser => ../../

require github.com/askuser-go/askuser v0.0.0-00010101000000-000000000000

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1 // indirect
)
